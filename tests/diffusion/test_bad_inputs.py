"""Bad input, one row per argument of every public ``jaxlab.diffusion`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import diffusion
from tests.bad_inputs import KEY, NAN, SCHED, Case, case_id, check

EPS0 = lambda x, t: jnp.zeros_like(x)  # noqa: E731
DEN = lambda x, s: jnp.zeros_like(x)  # noqa: E731
F8 = jax.random.normal(KEY, (6, 4))

CASES = [
    Case("diffusion.edm_precondition", "sigma", lambda: diffusion.edm_precondition(0.0)),
    Case(
        "diffusion.edm_precondition",
        "sigma",
        lambda: jax.jit(diffusion.edm_precondition)(-1.0),
        "nan",
    ),
    Case(
        "diffusion.edm_precondition",
        "sigma_data",
        lambda: diffusion.edm_precondition(1.0, sigma_data=-0.5),
    ),
    Case(
        "diffusion.edm_denoise",
        "sigma",
        lambda: diffusion.edm_denoise(lambda x, c: x, jnp.ones((2, 3)), jnp.ones(3)),
    ),
    Case(
        "diffusion.edm_denoise",
        "raw_fn",
        lambda: diffusion.edm_denoise(None, jnp.ones((2, 3)), jnp.ones(2)),
    ),
    Case(
        "diffusion.edm_denoise",
        "sigma_data",
        lambda: diffusion.edm_denoise(lambda x, c: x, jnp.ones((2, 3)), jnp.ones(2), 0.0),
    ),
    Case("diffusion.edm_loss", "y", lambda: diffusion.edm_loss(DEN, jnp.ones(3), KEY)),
    Case("diffusion.edm_loss", "key", lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), 1)),
    Case(
        "diffusion.edm_loss",
        "p_std",
        lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, p_std=-1.0),
    ),
    Case(
        "diffusion.edm_loss",
        "sigma_data",
        lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, sigma_data=0.0),
    ),
    Case(
        "diffusion.edm_loss",
        "p_mean",
        lambda: diffusion.edm_loss(DEN, jnp.ones((2, 3)), KEY, p_mean=NAN),
    ),
    Case("diffusion.edm_sigma_steps", "num_steps", lambda: diffusion.edm_sigma_steps(1)),
    Case(
        "diffusion.edm_sigma_steps",
        "sigma_min",
        lambda: diffusion.edm_sigma_steps(5, sigma_min=0.0),
    ),
    Case(
        "diffusion.edm_sigma_steps",
        "sigma_max",
        lambda: diffusion.edm_sigma_steps(5, sigma_min=1.0, sigma_max=0.5),
    ),
    Case("diffusion.edm_sigma_steps", "rho", lambda: diffusion.edm_sigma_steps(5, rho=0.0)),
    Case(
        "diffusion.edm_heun_sample",
        "sigmas",
        lambda: diffusion.edm_heun_sample(DEN, jnp.ones((2, 3)), jnp.array([1.0, -1.0, 0.0])),
    ),
    Case(
        "diffusion.edm_heun_sample",
        "noise",
        lambda: diffusion.edm_heun_sample(DEN, jnp.ones(()), jnp.array([1.0, 0.0])),
    ),
    Case("diffusion.cosine_beta_schedule", "num_steps", lambda: diffusion.cosine_beta_schedule(1)),
    Case("diffusion.cosine_beta_schedule", "s", lambda: diffusion.cosine_beta_schedule(5, s=-1)),
    Case(
        "diffusion.cosine_beta_schedule",
        "max_beta",
        lambda: diffusion.cosine_beta_schedule(5, max_beta=2.0),
    ),
    Case(
        "diffusion.linear_beta_schedule",
        "beta_start",
        lambda: diffusion.linear_beta_schedule(5, beta_start=0.0),
    ),
    Case(
        "diffusion.linear_beta_schedule",
        "beta_end",
        lambda: diffusion.linear_beta_schedule(5, beta_end=1.5),
    ),
    Case(
        "diffusion.linear_beta_schedule", "num_steps", lambda: diffusion.linear_beta_schedule(2.5)
    ),
    Case(
        "diffusion.schedule_from_betas",
        "betas",
        lambda: diffusion.schedule_from_betas(np.array([0.1, 1.5])),
    ),
    Case(
        "diffusion.q_sample",
        "t",
        lambda: diffusion.q_sample(
            SCHED, jnp.ones((2, 3)), jnp.array([0.5, 1.0]), jnp.ones((2, 3))
        ),
    ),
    Case(
        "diffusion.q_sample",
        "noise",
        lambda: diffusion.q_sample(
            SCHED, jnp.ones((2, 3)), jnp.array([0, 1]), {"a": jnp.ones((2, 3))}
        ),
    ),
    Case(
        "diffusion.q_sample",
        "t",
        lambda: diffusion.q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0, 10]), jnp.ones((2, 3))),
    ),
    Case(
        "diffusion.masked_mse",
        "target",
        lambda: diffusion.masked_mse(jnp.ones((2, 3)), {"a": jnp.ones((2, 3))}),
    ),
    Case(
        "diffusion.masked_mse",
        "mask",
        lambda: diffusion.masked_mse(jnp.ones((2, 3)), jnp.ones((2, 3)), jnp.ones(5)),
    ),
    Case("diffusion.ddpm_loss", "x0", lambda: diffusion.ddpm_loss(EPS0, SCHED, {}, KEY)),
    Case(
        "diffusion.ddpm_loss", "key", lambda: diffusion.ddpm_loss(EPS0, SCHED, jnp.ones((2, 3)), 0)
    ),
    Case(
        "diffusion.ddpm_loss",
        "schedule",
        lambda: diffusion.ddpm_loss(EPS0, None, jnp.ones((2, 3)), KEY),
    ),
    Case(
        "diffusion.ancestral_sample",
        "clip_x0",
        lambda: diffusion.ancestral_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, clip_x0=0.0),
    ),
    Case(
        "diffusion.ancestral_sample",
        "key",
        lambda: diffusion.ancestral_sample(EPS0, SCHED, jnp.ones((2, 3)), None),
    ),
    Case(
        "diffusion.ancestral_sample",
        "x_T",
        lambda: diffusion.ancestral_sample(EPS0, SCHED, {}, KEY),
    ),
    Case(
        "diffusion.ddim_sample",
        "eta",
        lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, eta=-1.0),
    ),
    Case(
        "diffusion.ddim_sample",
        "num_steps",
        lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, num_steps=20),
    ),
    Case(
        "diffusion.ddim_sample",
        "mask",
        lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, mask=jnp.ones(7)),
    ),
    Case("diffusion.ddim_timesteps", "num_steps", lambda: diffusion.ddim_timesteps(10, 0)),
    Case("diffusion.ddim_timesteps", "total_steps", lambda: diffusion.ddim_timesteps(0, 1)),
    Case("diffusion.optimal_denoiser", "sigma", lambda: diffusion.optimal_denoiser(F8, 0.0, F8)),
    Case(
        "diffusion.optimal_denoiser",
        "train_set",
        lambda: diffusion.optimal_denoiser(F8, 1.0, F8[:, :2]),
    ),
    Case(
        "diffusion.optimal_denoiser",
        "chunk_size",
        lambda: diffusion.optimal_denoiser(F8, 1.0, F8, chunk_size=0),
    ),
    Case(
        "diffusion.optimal_denoiser",
        "x",
        lambda: diffusion.optimal_denoiser(F8.at[0, 0].set(NAN), 1.0, F8),
    ),
    Case("diffusion.pair_cosine", "features_b", lambda: diffusion.pair_cosine(F8, F8[:2])),
    Case(
        "diffusion.pair_cosine",
        "features_a",
        lambda: diffusion.pair_cosine(F8.at[0, 0].set(NAN), F8),
        "nan",
    ),
    Case(
        "diffusion.reproducibility_score",
        "threshold",
        lambda: diffusion.reproducibility_score(F8, F8, threshold=2.0),
    ),
    Case(
        "diffusion.reproducibility_score",
        "features_a",
        lambda: diffusion.reproducibility_score(jnp.ones(3), F8),
    ),
    Case(
        "diffusion.memorization_score",
        "threshold",
        lambda: diffusion.memorization_score(F8, F8, threshold=NAN),
    ),
    Case(
        "diffusion.memorization_score",
        "features_train",
        lambda: diffusion.memorization_score(F8, F8[:, :2]),
    ),
    Case(
        "diffusion.nearest_neighbor_ratio",
        "train_set",
        lambda: diffusion.nearest_neighbor_ratio(F8, F8[:1]),
    ),
    Case(
        "diffusion.nearest_neighbor_ratio",
        "samples",
        lambda: diffusion.nearest_neighbor_ratio(F8.at[0, 0].set(NAN), F8),
        "nan",
    ),
    Case("diffusion.pca_proxy", "num_components", lambda: diffusion.pca_proxy(F8, 9)),
    Case("diffusion.pca_proxy", "train_set", lambda: diffusion.pca_proxy(jnp.ones(4), 1)),
    Case(
        "diffusion.pca_embed",
        "x",
        lambda: diffusion.pca_embed(diffusion.pca_proxy(F8, 2), jnp.ones((2, 3))),
    ),
    Case(
        "diffusion.calibrate_threshold",
        "quantile",
        lambda: diffusion.calibrate_threshold(F8, F8, quantile=1.5),
    ),
    Case(
        "diffusion.calibrate_threshold",
        "features_copies",
        lambda: diffusion.calibrate_threshold(F8, F8[:3]),
    ),
    Case(
        "diffusion.ancestral_sample",
        "eps_fn",
        lambda: diffusion.ancestral_sample(None, SCHED, jnp.ones((2, 3)), KEY),
    ),
    Case(
        "diffusion.ancestral_sample",
        "schedule",
        lambda: diffusion.ancestral_sample(EPS0, "cosine", jnp.ones((2, 3)), KEY),
    ),
    Case(
        "diffusion.ancestral_sample",
        "mask",
        lambda: diffusion.ancestral_sample(
            EPS0, SCHED, jnp.ones((2, 3)), KEY, mask=jnp.ones((5, 5))
        ),
    ),
    Case(
        "diffusion.ddim_sample",
        "eps_fn",
        lambda: diffusion.ddim_sample(None, SCHED, jnp.ones((2, 3)), KEY),
    ),
    Case(
        "diffusion.ddim_sample",
        "schedule",
        lambda: diffusion.ddim_sample(EPS0, None, jnp.ones((2, 3)), KEY),
    ),
    Case("diffusion.ddim_sample", "x_T", lambda: diffusion.ddim_sample(EPS0, SCHED, {}, KEY)),
    Case(
        "diffusion.ddim_sample",
        "key",
        lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), 5),
    ),
    Case(
        "diffusion.ddim_sample",
        "clip_x0",
        lambda: diffusion.ddim_sample(EPS0, SCHED, jnp.ones((2, 3)), KEY, clip_x0=-1.0),
    ),
    Case(
        "diffusion.ddpm_loss",
        "eps_fn",
        lambda: diffusion.ddpm_loss(None, SCHED, jnp.ones((2, 3)), KEY),
    ),
    Case(
        "diffusion.ddpm_loss",
        "mask",
        lambda: diffusion.ddpm_loss(EPS0, SCHED, jnp.ones((2, 3)), KEY, jnp.ones(7)),
    ),
    Case(
        "diffusion.edm_denoise",
        "x",
        lambda: diffusion.edm_denoise(lambda x, c: x, jnp.ones(()), jnp.ones(1)),
    ),
    Case(
        "diffusion.edm_heun_sample",
        "denoise_fn",
        lambda: diffusion.edm_heun_sample(None, jnp.ones((2, 3)), jnp.array([1.0, 0.0])),
    ),
    Case(
        "diffusion.edm_loss", "denoise_fn", lambda: diffusion.edm_loss(None, jnp.ones((2, 3)), KEY)
    ),
    Case("diffusion.masked_mse", "pred", lambda: diffusion.masked_mse({}, {})),
    Case(
        "diffusion.memorization_score",
        "features_samples",
        lambda: diffusion.memorization_score(jnp.ones(3), F8),
    ),
    Case("diffusion.pca_embed", "proxy", lambda: diffusion.pca_embed(None, F8)),
    Case(
        "diffusion.q_sample",
        "schedule",
        lambda: diffusion.q_sample(None, jnp.ones((2, 3)), jnp.array([0, 1]), jnp.ones((2, 3))),
    ),
    Case("diffusion.q_sample", "x0", lambda: diffusion.q_sample(SCHED, {}, jnp.array([0, 1]), {})),
    Case(
        "diffusion.reproducibility_score",
        "features_b",
        lambda: diffusion.reproducibility_score(F8, F8[:2]),
    ),
    Case(
        "diffusion.calibrate_threshold",
        "features_items",
        lambda: diffusion.calibrate_threshold(jnp.ones(3), jnp.ones(3)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
