"""Bad input, one row per argument of every public ``jaxlab.ood`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import ood
from tests.bad_inputs import KEY, NAN, Case, case_id, check

X2 = jnp.arange(12.0).reshape(4, 3) / 7.0

CASES = [
    Case(
        "ood.auroc", "scores_id", lambda: ood.auroc(jnp.array([NAN, 0.8, 0.3]), jnp.ones(2)), "nan"
    ),
    Case("ood.auroc", "scores_ood", lambda: ood.auroc(jnp.ones(3), jnp.zeros((2, 2)))),
    Case("ood.auroc", "scores_id", lambda: ood.auroc(jnp.zeros(0), jnp.ones(2))),
    Case(
        "ood.fpr_at_tpr",
        "scores_ood",
        lambda: ood.fpr_at_tpr(jnp.ones(3), jnp.array([NAN, 0.1])),
        "nan",
    ),
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
    Case(
        "ood.fit_class_gaussians",
        "labels",
        lambda: ood.fit_class_gaussians(X2, jnp.array([0, 1, 2, 3]), 2),
    ),
    Case(
        "ood.fit_class_gaussians",
        "labels",
        lambda: ood.fit_class_gaussians(X2, jnp.array([0.0, 1, 0, 1]), 2),
    ),
    Case(
        "ood.fit_class_gaussians",
        "num_classes",
        lambda: ood.fit_class_gaussians(X2, jnp.array([0, 0, 0, 0]), 0),
    ),
    Case(
        "ood.fit_class_gaussians",
        "ridge",
        lambda: ood.fit_class_gaussians(X2, jnp.array([0, 1, 0, 1]), 2, ridge=-1.0),
    ),
    Case(
        "ood.fit_class_gaussians",
        "features",
        lambda: ood.fit_class_gaussians(jnp.ones(4), jnp.array([0, 1, 0, 1]), 2),
    ),
    Case(
        "ood.mahalanobis_score",
        "features",
        lambda: ood.mahalanobis_score(
            jnp.ones((2, 5)), ood.fit_class_gaussians(X2, jnp.array([0, 1, 0, 1]), 2)
        ),
    ),
    Case("ood.standardize_scores", "eps", lambda: ood.standardize_scores(X2, X2, eps=0.0)),
    Case("ood.standardize_scores", "reference", lambda: ood.standardize_scores(X2, X2[:, :0])),
    Case(
        "ood.standardize_scores",
        "scores",
        lambda: ood.standardize_scores(jnp.array([NAN, 1.0]), jnp.ones(3)),
        "nan",
    ),
    Case("ood.ensemble_score", "member_scores", lambda: ood.ensemble_score(jnp.ones(3), X2)),
    Case(
        "ood.ensemble_score", "member_reference", lambda: ood.ensemble_score(X2, jnp.ones((3, 3)))
    ),
    Case(
        "ood.ensemble_score",
        "member_reference",
        lambda: ood.ensemble_score(X2, X2.at[0, 0].set(NAN)),
        "nan",
    ),
    Case("ood.linear_cka", "f_b", lambda: ood.linear_cka(X2, X2[:3])),
    Case("ood.linear_cka", "f_a", lambda: ood.linear_cka(X2.at[1, 1].set(NAN), X2)),
    Case("ood.affine_coupling_r2", "ridge", lambda: ood.affine_coupling_r2(X2, X2, ridge=-1.0)),
    Case("ood.affine_coupling_r2", "f_b", lambda: ood.affine_coupling_r2(X2, X2[:3])),
    Case(
        "ood.loss_barrier",
        "num_points",
        lambda: ood.loss_barrier(jnp.sum, jnp.ones(2), jnp.zeros(2), num_points=1),
    ),
    Case(
        "ood.loss_barrier", "params_b", lambda: ood.loss_barrier(jnp.sum, jnp.ones(2), jnp.zeros(3))
    ),
    Case("ood.loss_barrier", "loss_fn", lambda: ood.loss_barrier(None, jnp.ones(2), jnp.zeros(2))),
    Case(
        "ood.weight_match_mlp",
        "key",
        lambda: ood.weight_match_mlp(
            [(np.eye(2), np.zeros(2))] * 2, [(np.eye(2), np.zeros(2))] * 2, key=0
        ),
    ),
    Case(
        "ood.weight_match_mlp",
        "max_iters",
        lambda: ood.weight_match_mlp(
            [(np.eye(2), np.zeros(2))] * 2, [(np.eye(2), np.zeros(2))] * 2, -1, key=KEY
        ),
    ),
    Case(
        "ood.weight_match_mlp",
        "params_b",
        lambda: ood.weight_match_mlp(
            [(np.eye(2), np.zeros(2))] * 2, [(np.eye(2), np.zeros(2))], key=KEY
        ),
    ),
    Case("ood.affine_coupling_r2", "f_a", lambda: ood.affine_coupling_r2(jnp.ones(4), X2)),
    Case("ood.loss_barrier", "params_a", lambda: ood.loss_barrier(jnp.sum, [1.0], jnp.zeros(2))),
    Case("ood.mahalanobis_score", "gaussians", lambda: ood.mahalanobis_score(X2, None)),
    Case(
        "ood.weight_match_mlp",
        "params_a",
        lambda: ood.weight_match_mlp(
            [(np.eye(2), np.zeros(3))], [(np.eye(2), np.zeros(2))], key=KEY
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
