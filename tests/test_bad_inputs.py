"""Bad input, one table for every public kernel (DESIGN.md "Bad input"; optax's style).

Each row feeds one kernel one bad value for one argument and states the documented answer:
``"raises"`` (a ``ValueError`` whose message names the argument) or ``"nan"`` (the result
holds NaN, never a finite wrong number). ``test_every_public_kernel_has_a_row`` enumerates
each package's ``__all__`` and fails when a public callable has no row and no justified
exemption.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import align, attribution, causal, diffusion, ood, optim, robust, theory, tta
from jaxlab import curriculum as cl
from jaxlab.curriculum.mw_net import init_weight_net

NAN = float("nan")
KEY = jax.random.key(0)


class Case(NamedTuple):
    kernel: str  # "<package>.<name>"
    arg: str  # the argument that carries the bad value
    call: Callable[[], Any]
    expect: str = "raises"  # or "nan"


def _case_id(case: Case) -> str:
    return f"{case.kernel}-{case.arg}"


X2 = jnp.arange(12.0).reshape(4, 3) / 7.0

OOD = [
    Case("ood.auroc", "scores_id", lambda: ood.auroc(jnp.array([NAN, 0.8, 0.3]), jnp.ones(2)),
         "nan"),
    Case("ood.auroc", "scores_ood", lambda: ood.auroc(jnp.ones(3), jnp.zeros((2, 2)))),
    Case("ood.auroc", "scores_id", lambda: ood.auroc(jnp.zeros(0), jnp.ones(2))),
    Case("ood.fpr_at_tpr", "scores_ood",
         lambda: ood.fpr_at_tpr(jnp.ones(3), jnp.array([NAN, 0.1])), "nan"),
    Case("ood.fpr_at_tpr", "tpr", lambda: ood.fpr_at_tpr(jnp.ones(3), jnp.ones(2), tpr=1.5)),
    Case("ood.fpr_at_tpr", "scores_id", lambda: ood.fpr_at_tpr(jnp.ones((3, 1)), jnp.ones(2))),
    Case("ood.msp_score", "logits", lambda: ood.msp_score(jnp.array([[NAN, 1.0]]))),
    Case("ood.energy_score", "temperature", lambda: ood.energy_score(X2, temperature=0.0)),
    Case("ood.energy_score", "logits", lambda: ood.energy_score(jnp.ones(3))),
    Case("ood.l2_normalize", "eps", lambda: ood.l2_normalize(X2, eps=-1.0)),
    Case("ood.l2_normalize", "x", lambda: ood.l2_normalize(jnp.array([1 + 2j]))),
    Case("ood.knn_score", "k", lambda: ood.knn_score(X2, X2, k=5)),
    Case("ood.knn_score", "bank", lambda: ood.knn_score(X2, X2[:, :2])),
    Case("ood.knn_score", "features", lambda: ood.knn_score(X2.at[0, 0].set(NAN), X2)),
    Case("ood.knn_score", "block_size", lambda: ood.knn_score(X2, X2, block_size=0)),
    Case("ood.fit_class_gaussians", "labels",
         lambda: ood.fit_class_gaussians(X2, jnp.array([0, 1, 2, 3]), 2)),
    Case("ood.fit_class_gaussians", "labels",
         lambda: ood.fit_class_gaussians(X2, jnp.array([0.0, 1, 0, 1]), 2)),
    Case("ood.fit_class_gaussians", "num_classes",
         lambda: ood.fit_class_gaussians(X2, jnp.array([0, 0, 0, 0]), 0)),
    Case("ood.fit_class_gaussians", "ridge",
         lambda: ood.fit_class_gaussians(X2, jnp.array([0, 1, 0, 1]), 2, ridge=-1.0)),
    Case("ood.fit_class_gaussians", "features",
         lambda: ood.fit_class_gaussians(jnp.ones(4), jnp.array([0, 1, 0, 1]), 2)),
    Case("ood.mahalanobis_score", "features",
         lambda: ood.mahalanobis_score(jnp.ones((2, 5)), ood.fit_class_gaussians(
             X2, jnp.array([0, 1, 0, 1]), 2))),
    Case("ood.standardize_scores", "eps", lambda: ood.standardize_scores(X2, X2, eps=0.0)),
    Case("ood.standardize_scores", "reference", lambda: ood.standardize_scores(X2, X2[:, :0])),
    Case("ood.standardize_scores", "scores",
         lambda: ood.standardize_scores(jnp.array([NAN, 1.0]), jnp.ones(3)), "nan"),
    Case("ood.ensemble_score", "member_scores", lambda: ood.ensemble_score(jnp.ones(3), X2)),
    Case("ood.ensemble_score", "member_reference",
         lambda: ood.ensemble_score(X2, jnp.ones((3, 3)))),
    Case("ood.ensemble_score", "member_reference",
         lambda: ood.ensemble_score(X2, X2.at[0, 0].set(NAN)), "nan"),
    Case("ood.linear_cka", "f_b", lambda: ood.linear_cka(X2, X2[:3])),
    Case("ood.linear_cka", "f_a", lambda: ood.linear_cka(X2.at[1, 1].set(NAN), X2)),
    Case("ood.affine_coupling_r2", "ridge", lambda: ood.affine_coupling_r2(X2, X2, ridge=-1.0)),
    Case("ood.affine_coupling_r2", "f_b", lambda: ood.affine_coupling_r2(X2, X2[:3])),
    Case("ood.loss_barrier", "num_points",
         lambda: ood.loss_barrier(jnp.sum, jnp.ones(2), jnp.zeros(2), num_points=1)),
    Case("ood.loss_barrier", "params_b",
         lambda: ood.loss_barrier(jnp.sum, jnp.ones(2), jnp.zeros(3))),
    Case("ood.loss_barrier", "loss_fn",
         lambda: ood.loss_barrier(None, jnp.ones(2), jnp.zeros(2))),
    Case("ood.weight_match_mlp", "key",
         lambda: ood.weight_match_mlp([(np.eye(2), np.zeros(2))] * 2,
                                      [(np.eye(2), np.zeros(2))] * 2, key=0)),
    Case("ood.weight_match_mlp", "max_iters",
         lambda: ood.weight_match_mlp([(np.eye(2), np.zeros(2))] * 2,
                                      [(np.eye(2), np.zeros(2))] * 2, -1, key=KEY)),
    Case("ood.weight_match_mlp", "params_b",
         lambda: ood.weight_match_mlp([(np.eye(2), np.zeros(2))] * 2,
                                      [(np.eye(2), np.zeros(2))], key=KEY)),
]

Y01 = jnp.array([0.0, 1.0, 1.0, 0.0])
T01 = jnp.array([0, 1, 1, 0])
E4 = jnp.full(4, 0.5)
ADJ3 = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
DATA = np.random.default_rng(0).normal(size=(40, 3))
CORR = jnp.eye(3)
ORACLE = causal.d_separation_oracle(ADJ3)

CAUSAL = [
    Case("causal.cell_table", "t", lambda: causal.cell_table(Y01, T01[:3], T01)),
    Case("causal.cell_table", "y", lambda: causal.cell_table(Y01.at[0].set(NAN), T01, T01)),
    Case("causal.check_instrument_strata", "num_z",
         lambda: causal.check_instrument_strata(T01, T01, 0)),
    Case("causal.check_instrument_strata", "z",
         lambda: causal.check_instrument_strata(jnp.array([0, 1, 5, 0]), T01, 2)),
    Case("causal.fill_cells", "p_t_d0",
         lambda: causal.fill_cells(E4, jnp.full(4, 1.5), E4, E4)),
    Case("causal.identified_cells", "e", lambda: causal.identified_cells(T01, E4 + 1.0, E4)),
    Case("causal.identified_cells", "mu1", lambda: causal.identified_cells(T01, E4, E4[:2])),
    Case("causal.mu0_bounds_iv", "e_z",
         lambda: causal.mu0_bounds_iv(E4, -E4, E4, E4)),
    Case("causal.mu0_bounds_msm", "lam", lambda: causal.mu0_bounds_msm(E4, 0.5)),
    Case("causal.mu0_bounds_msm", "mu1", lambda: causal.mu0_bounds_msm(E4 + 2.0, 2.0)),
    Case("causal.mu0_bounds_none", "mu1", lambda: causal.mu0_bounds_none(E4 - 1.0)),
    Case("causal.outcome_bounds_iv", "e_z", lambda: causal.outcome_bounds_iv(E4, E4[:2])),
    Case("causal.regret", "metric", lambda: causal.regret(jnp.ones((2, 2, 2)), "bogus")),
    Case("causal.regret", "v", lambda: causal.regret(jnp.ones(3), "accuracy")),
    Case("causal.regret_interval", "kind",
         lambda: causal.regret_interval(jnp.ones((2, 2)), jnp.ones((2, 2)), jnp.zeros((2, 2)),
                                        jnp.ones((2, 2)), "accuracy", kind="bogus")),
    Case("causal.regret_interval", "lower",
         lambda: causal.regret_interval(jnp.ones((2, 2)), jnp.ones((2, 2)), jnp.ones((2, 2)),
                                        jnp.zeros((2, 2)), "accuracy")),
    Case("causal.simulate_policy_data", "setting",
         lambda: causal.simulate_policy_data(KEY, 10, "bogus")),
    Case("causal.simulate_policy_data", "num_samples",
         lambda: causal.simulate_policy_data(KEY, 0, "msm")),
    Case("causal.simulate_policy_data", "lam",
         lambda: causal.simulate_policy_data(KEY, 10, "msm", lam=0.5)),
    Case("causal.simulate_policy_data", "key",
         lambda: causal.simulate_policy_data(0, 10, "msm")),
    Case("causal.unobserved_cell_bounds", "mu0_upper",
         lambda: causal.unobserved_cell_bounds(T01, E4, E4, E4 - 0.4)),
    Case("causal.unobserved_cell_bounds_dr", "lam",
         lambda: causal.unobserved_cell_bounds_dr(T01, T01, Y01, E4, E4, 0.0)),
    Case("causal.all_edges_in_vstructures", "adj",
         lambda: causal.all_edges_in_vstructures(np.ones((2, 3)))),
    Case("causal.as_digraph", "dag", lambda: causal.as_digraph(np.ones((2, 2)))),
    Case("causal.ccpg", "ci_test", lambda: causal.ccpg(range(3), None)),
    Case("causal.ccpg", "edge_rule", lambda: causal.ccpg(range(3), ORACLE, edge_rule="bogus")),
    Case("causal.correlation_matrix", "data", lambda: causal.correlation_matrix(jnp.ones(3))),
    Case("causal.correlation_matrix", "data",
         lambda: causal.correlation_matrix(jnp.asarray(DATA).at[0, 0].set(NAN)), "nan"),
    Case("causal.d_separation_oracle", "dag",
         lambda: causal.d_separation_oracle(np.array([[0, 1], [1, 0]]))),
    Case("causal.dag_edges", "adj", lambda: causal.dag_edges(np.ones(3))),
    Case("causal.fisher_z_pvalue", "num_samples",
         lambda: causal.fisher_z_pvalue(CORR, jnp.array([0, 1, 2]), 3)),
    Case("causal.fisher_z_pvalue", "idx",
         lambda: causal.fisher_z_pvalue(CORR, jnp.array([0.0, 1.0]), 30)),
    Case("causal.fisher_z_test", "data",
         lambda: causal.fisher_z_test(np.where(np.arange(120).reshape(40, 3) == 5, NAN, DATA))),
    Case("causal.fisher_z_test", "alpha", lambda: causal.fisher_z_test(DATA, alpha=1.0)),
    Case("causal.is_topological", "order", lambda: causal.is_topological(ADJ3, [0, 1])),
    Case("causal.partial_correlation", "corr",
         lambda: causal.partial_correlation(jnp.ones((3, 2)), jnp.array([0, 1]))),
    Case("causal.prefix_set", "ci_test", lambda: causal.prefix_set(range(3), None, [0])),
    Case("causal.prefix_set", "prefix", lambda: causal.prefix_set(range(3), ORACLE, [7])),
    Case("causal.random_vstructure_dag", "key", lambda: causal.random_vstructure_dag(5, 3)),
    Case("causal.random_vstructure_dag", "max_parents",
         lambda: causal.random_vstructure_dag(5, KEY, max_parents=1)),
    Case("causal.random_vstructure_dag", "p_root",
         lambda: causal.random_vstructure_dag(5, KEY, p_root=1.5)),
    Case("causal.random_weights", "high", lambda: causal.random_weights(KEY, ADJ3, low=2.0)),
    Case("causal.random_weights", "low", lambda: causal.random_weights(KEY, ADJ3, low=-1.0)),
    Case("causal.random_weights", "adj", lambda: causal.random_weights(KEY, np.ones((2, 3)))),
    Case("causal.sample_linear_gaussian", "num_samples",
         lambda: causal.sample_linear_gaussian(KEY, ADJ3 * 0.5, 0)),
    Case("causal.sample_linear_gaussian", "weights",
         lambda: causal.sample_linear_gaussian(KEY, np.ones((2, 3)), 5)),
    Case("causal.star_dag", "n", lambda: causal.star_dag(1)),
    Case("causal.vstructure_chain_dag", "depth", lambda: causal.vstructure_chain_dag(0)),
]

W4 = jnp.arange(8.0).reshape(4, 2)
W4_NAN = W4.at[1:3].set(NAN)

ROBUST = [
    Case("robust.mean", "x", lambda: robust.mean(jnp.ones(()))),
    Case("robust.mean", "x", lambda: robust.mean(W4.at[0, 0].set(NAN)), "nan"),
    Case("robust.coordinate_median", "x", lambda: robust.coordinate_median(W4_NAN), "nan"),
    Case("robust.coordinate_median", "x", lambda: robust.coordinate_median(jnp.zeros((0, 2)))),
    Case("robust.trimmed_mean", "num_byzantine", lambda: robust.trimmed_mean(W4, 2)),
    Case("robust.trimmed_mean", "x", lambda: robust.trimmed_mean(W4_NAN, 1), "nan"),
    Case("robust.geometric_median", "smoothing",
         lambda: robust.geometric_median(W4, smoothing=0.0)),
    Case("robust.geometric_median", "num_iters",
         lambda: robust.geometric_median(W4, num_iters=0)),
    Case("robust.geometric_median", "x",
         lambda: robust.geometric_median(jnp.full((3, 2), NAN)), "nan"),
    Case("robust.krum", "num_byzantine", lambda: robust.krum(W4, -1)),
    Case("robust.krum", "x", lambda: robust.krum({"a": W4, "b": jnp.ones((3, 1))}, 1)),
    Case("robust.multi_krum", "num_selected", lambda: robust.multi_krum(W4, 1, num_selected=9)),
    Case("robust.multi_krum", "num_byzantine", lambda: robust.multi_krum(W4, 1.5)),
    Case("robust.centered_clipping", "radius",
         lambda: robust.centered_clipping(W4, radius=-1.0)),
    Case("robust.centered_clipping", "center",
         lambda: robust.centered_clipping(W4, center=jnp.ones(3))),
    Case("robust.centered_clipping", "num_iters",
         lambda: robust.centered_clipping(W4, num_iters=0)),
    Case("robust.nnm", "num_byzantine", lambda: robust.nnm(W4, 2, robust.mean)),
    Case("robust.nnm", "base", lambda: robust.nnm(W4, 1, None)),
    Case("robust.ctma", "num_byzantine", lambda: robust.ctma(W4, 5, robust.mean)),
    Case("robust.ctma", "base", lambda: robust.ctma(W4, 1, "mean")),
    Case("robust.bucketing", "bucket_size", lambda: robust.bucketing(W4, 0, robust.mean, KEY)),
    Case("robust.bucketing", "key", lambda: robust.bucketing(W4, 2, robust.mean, 0)),
    Case("robust.bucketing", "base", lambda: robust.bucketing(W4, 2, None, KEY)),
]

SCHED = diffusion.cosine_beta_schedule(10)
EPS0 = lambda x, t: jnp.zeros_like(x)  # noqa: E731
DEN = lambda x, s: jnp.zeros_like(x)  # noqa: E731
F8 = jax.random.normal(KEY, (6, 4))

DIFFUSION = [
    Case("diffusion.edm_precondition", "sigma", lambda: diffusion.edm_precondition(0.0)),
    Case("diffusion.edm_precondition", "sigma",
         lambda: jax.jit(diffusion.edm_precondition)(-1.0), "nan"),
    Case("diffusion.edm_precondition", "sigma_data",
         lambda: diffusion.edm_precondition(1.0, sigma_data=-0.5)),
    Case("diffusion.edm_denoise", "sigma",
         lambda: diffusion.edm_denoise(lambda x, c: x, jnp.ones((2, 3)), jnp.ones(3))),
    Case("diffusion.edm_denoise", "raw_fn",
         lambda: diffusion.edm_denoise(None, jnp.ones((2, 3)), jnp.ones(2))),
    Case("diffusion.edm_denoise", "sigma_data",
         lambda: diffusion.edm_denoise(lambda x, c: x, jnp.ones((2, 3)), jnp.ones(2), 0.0)),
    Case("diffusion.edm_loss", "y", lambda: diffusion.edm_loss(DEN, jnp.ones(3), KEY)),
    Case("diffusion.edm_loss", "key", lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), 1)),
    Case("diffusion.edm_loss", "p_std",
         lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, p_std=-1.0)),
    Case("diffusion.edm_loss", "sigma_data",
         lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, sigma_data=0.0)),
    Case("diffusion.edm_loss", "p_mean",
         lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, p_mean=NAN)),
    Case("diffusion.edm_sigma_steps", "num_steps", lambda: diffusion.edm_sigma_steps(1)),
    Case("diffusion.edm_sigma_steps", "sigma_min",
         lambda: diffusion.edm_sigma_steps(5, sigma_min=0.0)),
    Case("diffusion.edm_sigma_steps", "sigma_max",
         lambda: diffusion.edm_sigma_steps(5, sigma_min=1.0, sigma_max=0.5)),
    Case("diffusion.edm_sigma_steps", "rho", lambda: diffusion.edm_sigma_steps(5, rho=0.0)),
    Case("diffusion.edm_heun_sample", "sigmas",
         lambda: diffusion.edm_heun_sample(DEN, jnp.ones((2, 3)), jnp.array([1.0, -1.0, 0.0]))),
    Case("diffusion.edm_heun_sample", "noise",
         lambda: diffusion.edm_heun_sample(DEN, jnp.ones(()), jnp.array([1.0, 0.0]))),
    Case("diffusion.cosine_beta_schedule", "num_steps",
         lambda: diffusion.cosine_beta_schedule(1)),
    Case("diffusion.cosine_beta_schedule", "s", lambda: diffusion.cosine_beta_schedule(5, s=-1)),
    Case("diffusion.cosine_beta_schedule", "max_beta",
         lambda: diffusion.cosine_beta_schedule(5, max_beta=2.0)),
    Case("diffusion.linear_beta_schedule", "beta_start",
         lambda: diffusion.linear_beta_schedule(5, beta_start=0.0)),
    Case("diffusion.linear_beta_schedule", "beta_end",
         lambda: diffusion.linear_beta_schedule(5, beta_end=1.5)),
    Case("diffusion.linear_beta_schedule", "num_steps",
         lambda: diffusion.linear_beta_schedule(2.5)),
    Case("diffusion.schedule_from_betas", "betas",
         lambda: diffusion.schedule_from_betas(np.array([0.1, 1.5]))),
    Case("diffusion.q_sample", "t",
         lambda: diffusion.q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0.5, 1.0]),
                                    jnp.ones((2, 3)))),
    Case("diffusion.q_sample", "noise",
         lambda: diffusion.q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0, 1]),
                                    {"a": jnp.ones((2, 3))})),
    Case("diffusion.q_sample", "t",
         lambda: diffusion.q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0, 10]),
                                    jnp.ones((2, 3)))),
    Case("diffusion.masked_mse", "target",
         lambda: diffusion.masked_mse(jnp.ones((2, 3)), {"a": jnp.ones((2, 3))})),
    Case("diffusion.masked_mse", "mask",
         lambda: diffusion.masked_mse(jnp.ones((2, 3)), jnp.ones((2, 3)), jnp.ones(5))),
    Case("diffusion.ddpm_loss", "x0", lambda: diffusion.ddpm_loss(EPS0, SCHED, {}, KEY)),
    Case("diffusion.ddpm_loss", "key",
         lambda: diffusion.ddpm_loss(EPS0, SCHED, jnp.ones((2, 3)), 0)),
    Case("diffusion.ddpm_loss", "schedule",
         lambda: diffusion.ddpm_loss(EPS0, None, jnp.ones((2, 3)), KEY)),
    Case("diffusion.ancestral_sample", "clip_x0",
         lambda: diffusion.ancestral_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, clip_x0=0.0)),
    Case("diffusion.ancestral_sample", "key",
         lambda: diffusion.ancestral_sample(EPS0, SCHED, jnp.ones((2, 3)), None)),
    Case("diffusion.ancestral_sample", "x_T",
         lambda: diffusion.ancestral_sample(EPS0, SCHED, {}, KEY)),
    Case("diffusion.ddim_sample", "eta",
         lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, eta=-1.0)),
    Case("diffusion.ddim_sample", "num_steps",
         lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, num_steps=20)),
    Case("diffusion.ddim_sample", "mask",
         lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, mask=jnp.ones(7))),
    Case("diffusion.ddim_timesteps", "num_steps", lambda: diffusion.ddim_timesteps(10, 0)),
    Case("diffusion.ddim_timesteps", "total_steps", lambda: diffusion.ddim_timesteps(0, 1)),
    Case("diffusion.optimal_denoiser", "sigma",
         lambda: diffusion.optimal_denoiser(F8, 0.0, F8)),
    Case("diffusion.optimal_denoiser", "train_set",
         lambda: diffusion.optimal_denoiser(F8, 1.0, F8[:, :2])),
    Case("diffusion.optimal_denoiser", "chunk_size",
         lambda: diffusion.optimal_denoiser(F8, 1.0, F8, chunk_size=0)),
    Case("diffusion.optimal_denoiser", "x",
         lambda: diffusion.optimal_denoiser(F8.at[0, 0].set(NAN), 1.0, F8)),
    Case("diffusion.pair_cosine", "features_b", lambda: diffusion.pair_cosine(F8, F8[:2])),
    Case("diffusion.pair_cosine", "features_a",
         lambda: diffusion.pair_cosine(F8.at[0, 0].set(NAN), F8), "nan"),
    Case("diffusion.reproducibility_score", "threshold",
         lambda: diffusion.reproducibility_score(F8, F8, threshold=2.0)),
    Case("diffusion.reproducibility_score", "features_a",
         lambda: diffusion.reproducibility_score(jnp.ones(3), F8)),
    Case("diffusion.memorization_score", "threshold",
         lambda: diffusion.memorization_score(F8, F8, threshold=NAN)),
    Case("diffusion.memorization_score", "features_train",
         lambda: diffusion.memorization_score(F8, F8[:, :2])),
    Case("diffusion.nearest_neighbor_ratio", "train_set",
         lambda: diffusion.nearest_neighbor_ratio(F8, F8[:1])),
    Case("diffusion.nearest_neighbor_ratio", "samples",
         lambda: diffusion.nearest_neighbor_ratio(F8.at[0, 0].set(NAN), F8), "nan"),
    Case("diffusion.pca_proxy", "num_components", lambda: diffusion.pca_proxy(F8, 9)),
    Case("diffusion.pca_proxy", "train_set", lambda: diffusion.pca_proxy(jnp.ones(4), 1)),
    Case("diffusion.pca_embed", "x",
         lambda: diffusion.pca_embed(diffusion.pca_proxy(F8, 2), jnp.ones((2, 3)))),
    Case("diffusion.calibrate_threshold", "quantile",
         lambda: diffusion.calibrate_threshold(F8, F8, quantile=1.5)),
    Case("diffusion.calibrate_threshold", "features_copies",
         lambda: diffusion.calibrate_threshold(F8, F8[:3])),
]

LOGITS = jnp.zeros((4, 3))
LABELS = jnp.array([0, 1, 2, 0])
LOSSES = jnp.array([0.3, 0.1, 0.9, 0.5])
SQ = lambda p, x, y: (p * x - y) ** 2  # noqa: E731  per-sample losses of a scalar model
XB, YB = jnp.ones(4), jnp.zeros(4)
CTX = cl.StepContext(params=1.0, loss_fn=SQ, apply_fn=lambda p, x: x, inputs=XB,
                     valid=jnp.ones(4, bool), meta_inputs=XB, meta_labels=YB, lr=0.1,
                     step=jnp.int32(0), key=KEY)
STATE = cl.CurriculumState(weights=np.ones(4, np.float32))

CURRICULUM = [
    Case("curriculum.adaptive_pace", "q", lambda: cl.adaptive_pace(1, 0.1, 0.5, 15)),
    Case("curriculum.adaptive_pace", "r", lambda: cl.adaptive_pace(1, 0.1, 2.5, 0)),
    Case("curriculum.adaptive_pace", "p", lambda: cl.adaptive_pace(1, 1.5, 2.5, 15)),
    Case("curriculum.adaptive_cl", "pace_p", lambda: cl.adaptive_cl(pace_p=0.0)),
    Case("curriculum.adaptive_cl", "alpha", lambda: cl.adaptive_cl(alpha=1.5)),
    Case("curriculum.teacher_kl", "teacher_logits",
         lambda: cl.teacher_kl(LOGITS, jnp.zeros((4, 2)))),
    Case("curriculum.affinity_clustering", "max_clusters",
         lambda: cl.affinity_clustering(np.ones((3, 3)) - np.eye(3), 0)),
    Case("curriculum.affinity_clustering", "distances",
         lambda: cl.affinity_clustering(np.ones((3, 2)), 2)),
    Case("curriculum.c2f", "max_clusters", lambda: cl.c2f(max_clusters=0)),
    Case("curriculum.cbs", "start_std", lambda: cl.cbs(start_std=0.0)),
    Case("curriculum.cbs_sigma", "grow_factor", lambda: cl.cbs_sigma(1, grow_factor=1.5)),
    Case("curriculum.cbs_sigma", "grow_interval", lambda: cl.cbs_sigma(1, grow_interval=0)),
    Case("curriculum.cbs_sigma", "epoch", lambda: cl.cbs_sigma(-1)),
    Case("curriculum.check_weights", "weights", lambda: cl.check_weights(np.zeros(4), 4)),
    Case("curriculum.check_weights", "num_samples",
         lambda: cl.check_weights(np.ones(4), 0)),
    Case("curriculum.coarse_cross_entropy", "clusters",
         lambda: cl.coarse_cross_entropy(LOGITS, LABELS, jnp.array([0, 1]))),
    Case("curriculum.coarse_cross_entropy", "labels",
         lambda: cl.coarse_cross_entropy(LOGITS, LABELS + 5, jnp.array([0, 0, 1]))),
    Case("curriculum.confusion_distances", "num_classes",
         lambda: cl.confusion_distances(LABELS, LABELS, 0)),
    Case("curriculum.confusion_distances", "predictions",
         lambda: cl.confusion_distances(LABELS, LABELS + 3, 3)),
    Case("curriculum.data_parameter_loss", "log_sigma",
         lambda: cl.data_parameter_loss(LOGITS, LABELS, jnp.zeros(3))),
    Case("curriculum.data_parameter_loss", "labels",
         lambda: cl.data_parameter_loss(LOGITS, LABELS * 1.0, jnp.zeros(4))),
    Case("curriculum.dcl", "lr_data_param", lambda: cl.dcl(lr_data_param=-0.1)),
    Case("curriculum.dcl", "momentum", lambda: cl.dcl(momentum=1.5)),
    Case("curriculum.dds", "eps", lambda: cl.dds(eps=0.0)),
    Case("curriculum.dds", "lr", lambda: cl.dds(lr=-1.0)),
    Case("curriculum.dds_reward", "eps",
         lambda: cl.dds_reward(1.0, SQ, XB, YB, XB, YB, eps=-1.0)),
    Case("curriculum.dds_reward", "loss_fn",
         lambda: cl.dds_reward(1.0, None, XB, YB, XB, YB, eps=0.1)),
    Case("curriculum.dih_update", "discount",
         lambda: cl.dih_update(jnp.zeros(3), jnp.ones(1), jnp.array([1]), jnp.array([True]),
                               1.5, 1.0)),
    Case("curriculum.dih_update", "indices",
         lambda: cl.dih_update(jnp.zeros(3), jnp.ones(1), jnp.array([7]), jnp.array([True]),
                               0.5, 1.0)),
    Case("curriculum.dih_update", "lr",
         lambda: cl.dih_update(jnp.zeros(3), jnp.ones(1), jnp.array([1]), jnp.array([True]),
                               0.5, -1.0)),
    Case("curriculum.dihcl", "warm_epochs", lambda: cl.dihcl(warm_epochs=-1)),
    Case("curriculum.dihcl", "bottom_size", lambda: cl.dihcl(bottom_size=1.5)),
    Case("curriculum.efficient_train", "grow_epochs", lambda: cl.efficient_train(grow_epochs=0)),
    Case("curriculum.get_curriculum", "name", lambda: cl.get_curriculum("bogus")),
    Case("curriculum.imbalance", "ratio", lambda: cl.imbalance(LABELS, 0.5, 3, KEY)),
    Case("curriculum.imbalance", "labels", lambda: cl.imbalance(LABELS + 3, 2.0, 3, KEY)),
    Case("curriculum.imbalance", "key", lambda: cl.imbalance(LABELS, 2.0, 3, 0)),
    Case("curriculum.noisy_labels", "labels",
         lambda: cl.noisy_labels(jnp.array([0, 5, 7, -1]), 0.0, 3, KEY)),
    Case("curriculum.noisy_labels", "labels",
         lambda: cl.noisy_labels(jnp.array([0.0, 1.0]), 0.0, 3, KEY)),
    Case("curriculum.noisy_labels", "p", lambda: cl.noisy_labels(LABELS, 1.0, 3, KEY)),
    Case("curriculum.noisy_labels", "num_classes", lambda: cl.noisy_labels(LABELS, 0.1, 1, KEY)),
    Case("curriculum.noisy_labels", "key", lambda: cl.noisy_labels(LABELS, 0.1, 3, 7)),
    Case("curriculum.lambertw", "iterations", lambda: cl.lambertw(1.0, iterations=-1)),
    Case("curriculum.lambertw", "x", lambda: cl.lambertw(jnp.array([NAN, 1.0])), "nan"),
    Case("curriculum.lgl", "start_rate", lambda: cl.lgl(start_rate=0.0)),
    Case("curriculum.lgl", "strategy", lambda: cl.lgl(strategy="bogus")),
    Case("curriculum.lgl_loss", "class_mask",
         lambda: cl.lgl_loss(LOGITS, LABELS, jnp.ones(2, bool))),
    Case("curriculum.lgl_loss", "labels",
         lambda: cl.lgl_loss(LOGITS, LABELS + 3, jnp.ones(3, bool))),
    Case("curriculum.lookahead_params", "lr",
         lambda: cl.lookahead_params(1.0, SQ, XB, YB, jnp.ones(4), -0.1)),
    Case("curriculum.lookahead_params", "weights",
         lambda: cl.lookahead_params(1.0, SQ, XB, YB, jnp.ones(3), 0.1)),
    Case("curriculum.lookahead_meta_loss", "loss_fn",
         lambda: cl.lookahead_meta_loss(jnp.ones(4), 1.0, None, XB, YB, XB, YB, 0.1)),
    Case("curriculum.lookahead_meta_loss", "lr",
         lambda: cl.lookahead_meta_loss(jnp.ones(4), 1.0, SQ, XB, YB, XB, YB, 0.0)),
    Case("curriculum.low_frequency_crop", "images",
         lambda: cl.low_frequency_crop(jnp.ones((4, 4)), 2)),
    Case("curriculum.low_frequency_crop", "band",
         lambda: cl.low_frequency_crop(jnp.ones((1, 4, 4, 1)), -1)),
    Case("curriculum.lre_weights", "lr",
         lambda: cl.lre_weights(1.0, SQ, XB, YB, XB, YB, lr=-1.0)),
    Case("curriculum.lre_weights", "valid",
         lambda: cl.lre_weights(1.0, SQ, XB, YB, XB, YB, lr=0.1, valid=jnp.ones(3, bool))),
    Case("curriculum.masked_mean", "valid", lambda: cl.masked_mean(LOSSES, jnp.ones(3))),
    Case("curriculum.masked_mean", "values",
         lambda: cl.masked_mean(LOSSES.at[0].set(NAN), jnp.ones(4)), "nan"),
    Case("curriculum.mcl", "schedule_epochs", lambda: cl.mcl(schedule_epochs=0)),
    Case("curriculum.mcl", "initial_size", lambda: cl.mcl(initial_size=1.5)),
    Case("curriculum.mcl_centrality", "features",
         lambda: cl.mcl_centrality(np.ones(3))),
    Case("curriculum.mcl_centrality", "beta", lambda: cl.mcl_centrality(np.ones((3, 2)),
                                                                         beta=-1.0)),
    Case("curriculum.mcl_sample", "size", lambda: cl.mcl_sample(LOSSES, LOSSES, 9, 1.0, KEY)),
    Case("curriculum.mcl_sample", "key", lambda: cl.mcl_sample(LOSSES, LOSSES, 1, 1.0, 3)),
    Case("curriculum.mcl_sample", "lam", lambda: cl.mcl_sample(LOSSES, LOSSES, 1, -1.0, KEY)),
    Case("curriculum.mcl_sample", "losses",
         lambda: cl.mcl_sample(LOSSES.at[0].set(NAN), LOSSES, 1, 1.0, KEY)),
    Case("curriculum.mw_net", "hidden", lambda: cl.mw_net(hidden=0)),
    Case("curriculum.mw_net", "lr", lambda: cl.mw_net(lr=0.0)),
    Case("curriculum.mw_net_meta_loss", "lr",
         lambda: cl.mw_net_meta_loss(init_weight_net(KEY, 4), 1.0, SQ, XB, YB, XB, YB, -1.0,
                                     jnp.ones(4, bool))),
    Case("curriculum.mw_net_meta_loss", "valid",
         lambda: cl.mw_net_meta_loss(init_weight_net(KEY, 4), 1.0, SQ, XB, YB, XB, YB, 0.1,
                                     jnp.ones(3, bool))),
    Case("curriculum.pacing", "start_rate", lambda: cl.pacing(1, 0.0, 10)),
    Case("curriculum.pacing", "grow_epochs", lambda: cl.pacing(1, 0.2, 0)),
    Case("curriculum.pacing", "kind", lambda: cl.pacing(1, 0.2, 10, kind="bogus")),
    Case("curriculum.pacing", "p", lambda: cl.pacing(1, 0.2, 10, kind="root", p=0)),
    Case("curriculum.pacing", "epoch", lambda: cl.pacing(-1, 0.2, 10)),
    Case("curriculum.rand_augment", "images",
         lambda: cl.rand_augment(jnp.ones((4, 4)), 5.0, KEY)),
    Case("curriculum.rand_augment", "num_ops",
         lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 5.0, KEY, num_ops=-1)),
    Case("curriculum.rand_augment", "magnitude",
         lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 11.0, KEY)),
    Case("curriculum.rand_augment", "key",
         lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 5.0, 0)),
    Case("curriculum.screener_loss", "margin",
         lambda: cl.screener_loss(jnp.ones(4) * 0.5, LOSSES, -1.0)),
    Case("curriculum.screener_loss", "losses",
         lambda: cl.screener_loss(jnp.ones(4) * 0.5, LOSSES[:3], 1.0)),
    Case("curriculum.screener_net", "margin", lambda: cl.screener_net(margin=-1.0)),
    Case("curriculum.spl", "start_rate", lambda: cl.spl(start_rate=0.0)),
    Case("curriculum.spl", "weighting", lambda: cl.spl(weighting="bogus")),
    Case("curriculum.spl_weights", "rate", lambda: cl.spl_weights(LOSSES, 0.0)),
    Case("curriculum.spl_weights", "losses", lambda: cl.spl_weights(LOSSES.at[1].set(NAN), 0.5)),
    Case("curriculum.spl_weights", "t", lambda: cl.spl_weights(LOSSES, 0.5, "polynomial", 1.0)),
    Case("curriculum.spl_weights", "weighting", lambda: cl.spl_weights(LOSSES, 0.5, "cubic")),
    Case("curriculum.superloss", "lam", lambda: cl.superloss(lam=0.0)),
    Case("curriculum.superloss", "fac", lambda: cl.superloss(fac=1.5)),
    Case("curriculum.superloss_sigma", "lam", lambda: cl.superloss_sigma(LOSSES, 0.0, 0.0)),
    Case("curriculum.superloss_sigma", "losses",
         lambda: cl.superloss_sigma(LOSSES.at[0].set(NAN), 0.0, 1.0), "nan"),
    Case("curriculum.ttcl", "grow_epochs", lambda: cl.ttcl(grow_epochs=0)),
    Case("curriculum.ttcl", "grow_fn", lambda: cl.ttcl(grow_fn="bogus")),
    Case("curriculum.weight_net", "losses",
         lambda: cl.weight_net(init_weight_net(KEY, 4), jnp.ones((2, 2)))),
    Case("curriculum.weighted_loss", "indices",
         lambda: cl.weighted_loss(LOSSES, LOGITS, LABELS, jnp.zeros(4), STATE, CTX)),
    Case("curriculum.weighted_loss", "losses",
         lambda: cl.weighted_loss(LOSSES[:2], LOGITS, LABELS, jnp.arange(4), STATE, CTX)),
]

WM = jnp.array([[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]])
APPLY_W = lambda z: WM @ z  # noqa: E731
APPLY_WT = lambda r: WM.T @ r  # noqa: E731
LAYER = lambda z: WM @ z + 0.1  # noqa: E731
REPS = jnp.arange(6.0).reshape(3, 2)

ATTRIBUTION = [
    Case("attribution.lasso_fista", "alpha",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), -0.1)),
    Case("attribution.lasso_fista", "anchor",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2, int), 0.1)),
    Case("attribution.lasso_fista", "anchor",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(5), 0.1)),
    Case("attribution.lasso_fista", "target",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(4), jnp.zeros(2), 0.1)),
    Case("attribution.lasso_fista", "step",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1,
                                         step=0.0)),
    Case("attribution.lasso_fista", "step",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1,
                                         step=100.0, num_iters=200), "nan"),
    Case("attribution.lasso_fista", "num_iters",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1,
                                         num_iters=0)),
    Case("attribution.lasso_fista", "apply_wt",
         lambda: attribution.lasso_fista(APPLY_W, None, jnp.ones(3), jnp.zeros(2), 0.1)),
    Case("attribution.lasso_fista", "target",
         lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.array([NAN, 1.0, 1.0]),
                                         jnp.zeros(2), 0.1, num_iters=20), "nan"),
    Case("attribution.final_layer_inversion", "x",
         lambda: attribution.final_layer_inversion(LAYER, jnp.array([NAN, 0.0, 0.0]),
                                                   jnp.zeros(2))),
    Case("attribution.final_layer_inversion", "eps",
         lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2), eps=1.0)),
    Case("attribution.final_layer_inversion", "alpha",
         lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2),
                                                   alpha=-1.0)),
    Case("attribution.final_layer_inversion", "generator_last_layer",
         lambda: attribution.final_layer_inversion(None, jnp.zeros(3), jnp.zeros(2))),
    Case("attribution.linear_adjoint", "apply_w",
         lambda: attribution.linear_adjoint(LAYER, jnp.zeros(2))),
    Case("attribution.linear_adjoint", "example",
         lambda: attribution.linear_adjoint(APPLY_W, "z")),
    Case("attribution.lipschitz_constant", "num_iters",
         lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (2,), num_iters=0)),
    Case("attribution.lipschitz_constant", "shape",
         lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (0,))),
    Case("attribution.lipschitz_constant", "dtype",
         lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (2,), dtype=jnp.int32)),
    Case("attribution.soft_threshold", "threshold",
         lambda: attribution.soft_threshold(jnp.ones(3), -1.0)),
    Case("attribution.soft_threshold", "x",
         lambda: attribution.soft_threshold(jnp.array([NAN]), 0.1), "nan"),
    Case("attribution.log_dct", "eps", lambda: attribution.log_dct(jnp.ones((4, 4)), eps=0.0)),
    Case("attribution.log_dct", "x", lambda: attribution.log_dct(jnp.ones(4))),
    Case("attribution.deep_sad_center", "eps",
         lambda: attribution.deep_sad_center(REPS, eps=-1.0)),
    Case("attribution.deep_sad_center", "reps", lambda: attribution.deep_sad_center(jnp.ones(3))),
    Case("attribution.deep_sad_loss", "labels",
         lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, 5]))),
    Case("attribution.deep_sad_loss", "eta",
         lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, -1]), eta=-1.0)),
    Case("attribution.deep_sad_loss", "eps",
         lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, -1]), eps=0.0)),
    Case("attribution.deep_sad_loss", "center",
         lambda: attribution.deep_sad_loss(REPS, jnp.zeros(3), jnp.array([0, 1, -1]))),
    Case("attribution.deep_sad_score", "center",
         lambda: attribution.deep_sad_score(REPS, jnp.zeros(3))),
]

MLP = [(jnp.eye(2), jnp.zeros(2)), (jnp.ones((2, 1)), jnp.zeros(1))]

OPTIM = [
    Case("optim.adr_gd", "lr", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr=-0.5)),
    Case("optim.adr_gd", "c_max", lambda: optim.adr_gd(MLP, jnp.zeros(2), c_min=5.0, c_max=1.0)),
    Case("optim.adr_gd", "kappa", lambda: optim.adr_gd(MLP, jnp.zeros(2), kappa=0.0)),
    Case("optim.adr_gd", "num_steps", lambda: optim.adr_gd(MLP, jnp.zeros(2), num_steps=0)),
    Case("optim.adr_gd", "lr_sigma", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr_sigma=0.0)),
    Case("optim.adr_gd", "lr_c", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr_c=-1.0)),
    Case("optim.adr_gd", "c", lambda: optim.adr_gd(MLP, jnp.zeros(2), c=-1.0)),
    Case("optim.adr_gd", "c_reduce_rate",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), c_reduce_rate=-1.0)),
    Case("optim.adr_gd", "c_grad_tolerance",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), c_grad_tolerance=NAN)),
    Case("optim.adr_gd", "perturb_freq", lambda: optim.adr_gd(MLP, jnp.zeros(2), perturb_freq=0)),
    Case("optim.adr_gd", "noise_scale", lambda: optim.adr_gd(MLP, jnp.zeros(2), noise_scale=-1.0)),
    Case("optim.adr_gd", "grad_threshold",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), grad_threshold=-1.0)),
    Case("optim.adr_gd", "x_grad_threshold",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), x_grad_threshold=0.0)),
    Case("optim.adr_gd", "reset_sigma_every",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), reset_sigma_every=0)),
    Case("optim.adr_gd", "key", lambda: optim.adr_gd(MLP, jnp.zeros(2), key=3)),
    Case("optim.adr_gd", "x0", lambda: optim.adr_gd(MLP, jnp.zeros(3))),
    Case("optim.adr_gd", "upper",
         lambda: optim.adr_gd(MLP, jnp.zeros(2), lower=1.0, upper=-1.0)),
    Case("optim.adr_gd", "params", lambda: optim.adr_gd(MLP[:1], jnp.zeros(2))),
    Case("optim.projected_gradient_ascent", "lr",
         lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), lr=0.0)),
    Case("optim.projected_gradient_ascent", "gradient",
         lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), gradient="bogus")),
    Case("optim.projected_gradient_ascent", "num_steps",
         lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), num_steps=0)),
    Case("optim.relu_mlp", "x", lambda: optim.relu_mlp(MLP, jnp.zeros(3))),
    Case("optim.relu_mlp", "params", lambda: optim.relu_mlp([(jnp.eye(2), jnp.zeros(3))],
                                                             jnp.zeros(2))),
    Case("optim.random_relu_mlp", "sizes", lambda: optim.random_relu_mlp(KEY, [3])),
    Case("optim.random_relu_mlp", "positive_prob",
         lambda: optim.random_relu_mlp(KEY, [3, 1], positive_prob=1.5)),
    Case("optim.random_relu_mlp", "scale", lambda: optim.random_relu_mlp(KEY, [3, 1], scale=0.0)),
    Case("optim.random_relu_mlp", "key", lambda: optim.random_relu_mlp(1, [3, 1])),
    Case("optim.reference_random_relu_mlp", "key",
         lambda: optim.reference_random_relu_mlp(337550, [3, 1])),
    Case("optim.reference_random_relu_mlp", "sizes",
         lambda: optim.reference_random_relu_mlp(KEY, [3, 0])),
    Case("optim.anytime_averaging", "gamma_floor",
         lambda: optim.anytime_averaging(0.1, gamma_floor=2.0)),
    Case("optim.anytime_averaging", "learning_rate", lambda: optim.anytime_averaging(-0.1)),
    Case("optim.mu2sgd", "learning_rate", lambda: optim.mu2sgd(0.0)),
    Case("optim.mu2sgd", "beta_floor", lambda: optim.mu2sgd(0.1, beta_floor=-0.5)),
    Case("optim.mu2sgd", "max_norm", lambda: optim.mu2sgd(0.1, max_norm=0.0)),
    Case("optim.storm", "beta_floor", lambda: optim.storm(beta_floor=1.5)),
    Case("optim.worker_momentum", "beta", lambda: optim.worker_momentum(beta=1.0)),
]

SRC = {"w": jnp.ones(3)}
TTA_STATE = tta.slwi_init(SRC)

TTA = [
    Case("tta.slwi_update", "zeta", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, zeta=-1.0)),
    Case("tta.slwi_update", "warmup", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, warmup=-1)),
    Case("tta.slwi_update", "a", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, a=1.5)),
    Case("tta.slwi_update", "q", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, q=0.0)),
    Case("tta.slwi_update", "b", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, b=-0.1)),
    Case("tta.slwi_update", "alpha", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, alpha=1.0)),
    Case("tta.slwi_update", "observed", lambda: tta.slwi_update(TTA_STATE, {"v": 1.0}, SRC)),
    Case("tta.slwi_update", "update", lambda: tta.slwi_update(TTA_STATE, SRC, [1.0])),
    Case("tta.slwi_update", "observed",
         lambda: tta.slwi_update(TTA_STATE, {"w": jnp.full(3, NAN)}, SRC), "nan"),
    Case("tta.slwi_init", "init_var", lambda: tta.slwi_init(SRC, init_var=0.0)),
    Case("tta.slwi_init", "source", lambda: tta.slwi_init({})),
    Case("tta.mean_reversion", "a", lambda: tta.mean_reversion(SRC, SRC, 2.0)),
    Case("tta.mean_reversion", "source", lambda: tta.mean_reversion(SRC, [1.0], 0.5)),
    Case("tta.entropy_loss", "logits", lambda: tta.entropy_loss(jnp.ones(3))),
    Case("tta.entropy_loss", "logits",
         lambda: tta.entropy_loss(jnp.array([[NAN, 1.0]])), "nan"),
    Case("tta.tent", "optimizer", lambda: tta.tent("sgd", SRC)),
    Case("tta.tent_step", "apply_fn",
         lambda: tta.tent_step(SRC, (), jnp.ones((2, 3)), None,
                               tta.tent(__import__("optax").sgd(0.1), {"w": True}))),
    Case("tta.tent_step", "optimizer",
         lambda: tta.tent_step(SRC, (), jnp.ones((2, 3)), lambda p, x: x, None)),
]

LP = jnp.array([-1.0, -2.0])

ALIGN = [
    Case("align.dpo_loss", "policy_chosen_logps",
         lambda: align.dpo_loss(jnp.zeros(0), jnp.zeros(0), jnp.zeros(0), jnp.zeros(0), 0.1)),
    Case("align.dpo_loss", "beta", lambda: align.dpo_loss(LP, LP, LP, LP, 0.0)),
    Case("align.dpo_loss", "ref_rejected_logps",
         lambda: align.dpo_loss(LP, LP, LP, LP[:1], 0.1)),
    Case("align.dpo_loss", "reduction", lambda: align.dpo_loss(LP, LP, LP, LP, 0.1, "sum")),
    Case("align.dpo_loss", "policy_rejected_logps",
         lambda: align.dpo_loss(LP, LP.at[0].set(NAN), LP, LP, 0.1), "nan"),
    Case("align.dpo_reward_margins", "beta",
         lambda: align.dpo_reward_margins(LP, LP, LP, LP, jnp.ones(2))),
    Case("align.dpo_reward_margins", "ref_chosen_logps",
         lambda: align.dpo_reward_margins(LP, LP, LP[:1], LP, 0.1)),
    Case("align.preference_accuracy", "margins",
         lambda: align.preference_accuracy(jnp.zeros(0))),
    Case("align.preference_accuracy", "margins",
         lambda: align.preference_accuracy(jnp.array([NAN, 1.0])), "nan"),
    Case("align.preference_accuracy", "reduction",
         lambda: align.preference_accuracy(LP, reduction="max")),
    Case("align.one_token_logps", "tokens",
         lambda: align.one_token_logps(jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([5]))),
    Case("align.one_token_logps", "embeddings",
         lambda: align.one_token_logps(jnp.zeros((2, 3)), jnp.ones((1, 4)), jnp.array([0]))),
    Case("align.one_token_logps", "w",
         lambda: align.one_token_logps(jnp.zeros(3), jnp.ones((1, 3)), jnp.array([0]))),
    Case("align.unembedding_dpo_loss", "w_ref",
         lambda: align.unembedding_dpo_loss(jnp.zeros((2, 3)), jnp.zeros((3, 3)), jnp.ones((1, 3)),
                                            jnp.array([0]), jnp.array([1]), 0.1)),
    Case("align.unembedding_dpo_loss", "rejected",
         lambda: align.unembedding_dpo_loss(jnp.zeros((2, 3)), jnp.zeros((2, 3)), jnp.ones((1, 3)),
                                            jnp.array([0]), jnp.array([2]), 0.1)),
    Case("align.unembedding_dpo_loss", "beta",
         lambda: align.unembedding_dpo_loss(jnp.zeros((2, 3)), jnp.zeros((2, 3)), jnp.ones((1, 3)),
                                            jnp.array([0]), jnp.array([1]), -0.1)),
    Case("align.unembedding_sft_loss", "chosen",
         lambda: align.unembedding_sft_loss(jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([0.0]))),
    Case("align.unembedding_sft_loss", "embeddings",
         lambda: align.unembedding_sft_loss(jnp.zeros((2, 3)), jnp.ones((0, 3)),
                                            jnp.zeros(0, int))),
    Case("align.sample_behaviour_preferences", "noise_scale",
         lambda: align.sample_behaviour_preferences(KEY, 4, jnp.eye(2, 4), jnp.ones(2),
                                                    jnp.zeros(4), jnp.ones(2), -1.0)),
    Case("align.sample_behaviour_preferences", "weights",
         lambda: align.sample_behaviour_preferences(KEY, 4, jnp.eye(2, 4), jnp.ones(2),
                                                    jnp.zeros(4), -jnp.ones(2), 0.1)),
    Case("align.sample_behaviour_preferences", "num",
         lambda: align.sample_behaviour_preferences(KEY, 0, jnp.eye(2, 4), jnp.ones(2),
                                                    jnp.zeros(4), jnp.ones(2), 0.1)),
    Case("align.sample_behaviour_preferences", "key",
         lambda: align.sample_behaviour_preferences(0, 4, jnp.eye(2, 4), jnp.ones(2),
                                                    jnp.zeros(4), jnp.ones(2), 0.1)),
    Case("align.sample_behaviour_preferences", "offset",
         lambda: align.sample_behaviour_preferences(KEY, 4, jnp.eye(2, 4), jnp.ones(2),
                                                    jnp.zeros(3), jnp.ones(2), 0.1)),
]

ICLP = theory.init_icl_params(KEY, 4, 2)
PAT_POS, PAT_IRR = theory.make_icl_patterns(KEY, 4, 2, 2)
DEMOS = jnp.ones((3, 4))
QUERY = jnp.ones(4)

THEORY = [
    Case("theory.init_icl_params", "num_neurons", lambda: theory.init_icl_params(KEY, 4, 3)),
    Case("theory.init_icl_params", "dim", lambda: theory.init_icl_params(KEY, 0, 2)),
    Case("theory.init_icl_params", "init_scale",
         lambda: theory.init_icl_params(KEY, 4, 2, init_scale=-1.0)),
    Case("theory.init_icl_params", "key", lambda: theory.init_icl_params(0, 4, 2)),
    Case("theory.make_icl_patterns", "num_relevant",
         lambda: theory.make_icl_patterns(KEY, 4, 0, 1)),
    Case("theory.make_icl_patterns", "dim", lambda: theory.make_icl_patterns(KEY, 2, 2, 2)),
    Case("theory.make_icl_patterns", "key", lambda: theory.make_icl_patterns(1, 4, 2, 2)),
    Case("theory.sample_icl_prompt", "alpha",
         lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 1.5, 4)),
    Case("theory.sample_icl_prompt", "length",
         lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 0)),
    Case("theory.sample_icl_prompt", "kappa",
         lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 4,
                                          kappa=-0.5)),
    Case("theory.sample_icl_prompt", "noise",
         lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 4,
                                          noise=-1.0)),
    Case("theory.sample_icl_prompt", "negative",
         lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], PAT_POS[0][:2], PAT_IRR, 0.5, 4)),
    Case("theory.icl_attention", "demos",
         lambda: theory.icl_attention(ICLP, jnp.ones((3, 5)), QUERY)),
    Case("theory.icl_forward", "query", lambda: theory.icl_forward(ICLP, DEMOS, jnp.ones(5))),
    Case("theory.icl_forward", "demos",
         lambda: theory.icl_forward(ICLP, DEMOS.at[0, 0].set(NAN), QUERY), "nan"),
    Case("theory.icl_hinge_loss", "label",
         lambda: theory.icl_hinge_loss(ICLP, DEMOS, QUERY, jnp.ones(2))),
    Case("theory.weighted_vote", "query", lambda: theory.weighted_vote(DEMOS, jnp.ones(5))),
    Case("theory.magnitude_prune", "rate", lambda: theory.magnitude_prune(ICLP, 1.5)),
    Case("theory.magnitude_prune", "order", lambda: theory.magnitude_prune(ICLP, 0.5, "bogus")),
    Case("theory.magnitude_prune", "key",
         lambda: theory.magnitude_prune(ICLP, 0.5, "random", key=None)),
]

CASES = (OOD + CAUSAL + ROBUST + DIFFUSION + CURRICULUM + ATTRIBUTION + OPTIM + TTA + ALIGN
         + THEORY)

# Public names that are not kernels: result containers, parameter containers, constants,
# Flax modules (their inputs are checked by the kernels they call) and submodules.
EXEMPT = {
    "ood.BarrierResult": "result NamedTuple",
    "ood.ClassGaussians": "parameter NamedTuple (checked by mahalanobis_score)",
    "causal.METRICS": "constant: the names regret accepts",
    "causal.CountingCITest": "wrapper class; its ci_test argument is checked by ccpg",
    "causal.DSeparationOracle": "class built by d_separation_oracle (which has rows)",
    "causal.FisherZTest": "class built by fisher_z_test (which has rows)",
    "causal.Partition": "result dataclass of ccpg",
    "robust.attacks": "submodule of attack kernels (robust/attacks.py, see its tests)",
    "diffusion.PCAProxy": "parameter NamedTuple built by pca_proxy",
    "diffusion.Schedule": "NamedTuple built by the schedule functions (which have rows)",
    "curriculum.Curriculum": "dataclass of hooks, built by the factories (which have rows)",
    "curriculum.CurriculumState": "state NamedTuple",
    "curriculum.EpochInputs": "input NamedTuple of data_curriculum",
    "curriculum.StepContext": "context NamedTuple of the loss hook",
    "curriculum.METHODS": "constant: name -> factory (get_curriculum has rows)",
    "curriculum.baseline": "takes no argument",
    "curriculum.lre": "takes no argument",
    "attribution.DeepSADNet": "Flax module (its outputs go through the deep_sad_* kernels)",
    "optim.ADRGDResult": "result NamedTuple",
    "optim.AnyTimeState": "optimiser state NamedTuple",
    "optim.Mu2SGDState": "optimiser state NamedTuple",
    "optim.StormState": "optimiser state NamedTuple",
    "optim.WorkerMomentumState": "optimiser state NamedTuple",
    "tta.SLWIInfo": "result NamedTuple",
    "tta.SLWIState": "state NamedTuple built by slwi_init",
    "align.PreferenceBatch": "result NamedTuple",
    "theory.ICLParams": "parameter NamedTuple built by init_icl_params",
    "theory.ICLPrompt": "result NamedTuple of sample_icl_prompt",
}

PACKAGES = ("ood", "causal", "robust", "diffusion", "curriculum", "attribution", "optim", "tta",
            "align", "theory")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_bad_input(case: Case) -> None:
    if case.expect == "raises":
        with pytest.raises(ValueError, match=case.arg):
            case.call()
    else:
        assert case.expect == "nan", case.expect
        leaves = jax.tree.leaves(case.call())
        assert leaves and any(np.isnan(np.asarray(leaf, np.float64)).any() for leaf in leaves)


def test_every_public_kernel_has_a_row() -> None:
    covered = {case.kernel for case in CASES}
    missing, stale = [], []
    for package in PACKAGES:
        module = importlib.import_module(f"jaxlab.{package}")
        for name in module.__all__:
            qualified, obj = f"{package}.{name}", getattr(module, name)
            if qualified in EXEMPT:
                continue
            if callable(obj) and not inspect.ismodule(obj):
                if qualified not in covered:
                    missing.append(qualified)
            else:
                missing.append(f"{qualified} (not callable: exempt it with a reason)")
    for qualified in EXEMPT:
        package, name = qualified.split(".", 1)
        if name not in importlib.import_module(f"jaxlab.{package}").__all__:
            stale.append(qualified)
    assert not missing, f"public kernels without a bad-input row: {missing}"
    assert not stale, f"exemptions for names that are not public: {stale}"


def test_rows_name_real_arguments() -> None:
    """A row's ``arg`` is a parameter of its kernel (so the message check means something)."""
    wrong = []
    for case in CASES:
        package, name = case.kernel.split(".", 1)
        obj = getattr(importlib.import_module(f"jaxlab.{package}"), name)
        if case.arg not in inspect.signature(obj).parameters:
            wrong.append(f"{case.kernel}: {case.arg}")
    assert not wrong, wrong
