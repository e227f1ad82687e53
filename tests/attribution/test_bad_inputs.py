"""Bad input, one row per argument of every public ``jaxlab.attribution`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxlab import attribution
from tests.bad_inputs import NAN, Case, case_id, check

WM = jnp.array([[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]])
APPLY_W = lambda z: WM @ z  # noqa: E731
APPLY_WT = lambda r: WM.T @ r  # noqa: E731
LAYER = lambda z: WM @ z + 0.1  # noqa: E731
REPS = jnp.arange(6.0).reshape(3, 2)

CASES = [
    Case(
        "attribution.lasso_fista",
        "alpha",
        lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), -0.1),
    ),
    Case(
        "attribution.lasso_fista",
        "alpha",  # traced under jit: NaN, not a "solution"
        lambda: jax.jit(
            lambda a: attribution.lasso_fista(
                APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), a, num_iters=5
            )
        )(-0.1),
        "nan",
    ),
    Case(
        "attribution.lasso_fista",
        "anchor",
        lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2, int), 0.1),
    ),
    Case(
        "attribution.lasso_fista",
        "anchor",
        lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(5), 0.1),
    ),
    Case(
        "attribution.lasso_fista",
        "target",
        lambda: attribution.lasso_fista(APPLY_W, APPLY_WT, jnp.ones(4), jnp.zeros(2), 0.1),
    ),
    Case(
        "attribution.lasso_fista",
        "step",
        lambda: attribution.lasso_fista(
            APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1, step=0.0
        ),
    ),
    Case(
        "attribution.lasso_fista",
        "step",
        lambda: attribution.lasso_fista(
            APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1, step=100.0, num_iters=200
        ),
        "nan",
    ),
    Case(
        "attribution.lasso_fista",
        "num_iters",
        lambda: attribution.lasso_fista(
            APPLY_W, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1, num_iters=0
        ),
    ),
    Case(
        "attribution.lasso_fista",
        "apply_wt",
        lambda: attribution.lasso_fista(APPLY_W, None, jnp.ones(3), jnp.zeros(2), 0.1),
    ),
    Case(
        "attribution.lasso_fista",
        "target",
        lambda: attribution.lasso_fista(
            APPLY_W, APPLY_WT, jnp.array([NAN, 1.0, 1.0]), jnp.zeros(2), 0.1, num_iters=20
        ),
        "nan",
    ),
    Case(
        "attribution.final_layer_inversion",
        "x",
        lambda: attribution.final_layer_inversion(LAYER, jnp.array([NAN, 0.0, 0.0]), jnp.zeros(2)),
    ),
    Case(
        "attribution.final_layer_inversion",
        "eps",
        lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2), eps=1.0),
    ),
    Case(
        "attribution.final_layer_inversion",
        "alpha",
        lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2), alpha=-1.0),
    ),
    Case(
        "attribution.final_layer_inversion",
        "generator_last_layer",
        lambda: attribution.final_layer_inversion(None, jnp.zeros(3), jnp.zeros(2)),
    ),
    Case(
        "attribution.linear_adjoint",
        "apply_w",
        lambda: attribution.linear_adjoint(LAYER, jnp.zeros(2)),
    ),
    Case("attribution.linear_adjoint", "example", lambda: attribution.linear_adjoint(APPLY_W, "z")),
    Case(
        "attribution.lipschitz_constant",
        "num_iters",
        lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (2,), num_iters=0),
    ),
    Case(
        "attribution.lipschitz_constant",
        "shape",
        lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (0,)),
    ),
    Case(
        "attribution.lipschitz_constant",
        "dtype",
        lambda: attribution.lipschitz_constant(APPLY_W, APPLY_WT, (2,), dtype=jnp.int32),
    ),
    Case(
        "attribution.soft_threshold",
        "threshold",
        lambda: attribution.soft_threshold(jnp.ones(3), -1.0),
    ),
    Case(
        "attribution.soft_threshold",
        "x",
        lambda: attribution.soft_threshold(jnp.array([NAN]), 0.1),
        "nan",
    ),
    Case("attribution.log_dct", "eps", lambda: attribution.log_dct(jnp.ones((4, 4)), eps=0.0)),
    Case("attribution.log_dct", "x", lambda: attribution.log_dct(jnp.ones(4))),
    Case("attribution.deep_sad_center", "eps", lambda: attribution.deep_sad_center(REPS, eps=-1.0)),
    Case("attribution.deep_sad_center", "reps", lambda: attribution.deep_sad_center(jnp.ones(3))),
    Case(
        "attribution.deep_sad_loss",
        "labels",
        lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, 5])),
    ),
    Case(
        "attribution.deep_sad_loss",
        "eta",
        lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, -1]), eta=-1.0),
    ),
    Case(
        "attribution.deep_sad_loss",
        "eps",
        lambda: attribution.deep_sad_loss(REPS, jnp.zeros(2), jnp.array([0, 1, -1]), eps=-1.0),
    ),
    Case(
        "attribution.deep_sad_loss",
        "center",
        lambda: attribution.deep_sad_loss(REPS, jnp.zeros(3), jnp.array([0, 1, -1])),
    ),
    Case(
        "attribution.deep_sad_score",
        "center",
        lambda: attribution.deep_sad_score(REPS, jnp.zeros(3)),
    ),
    Case(
        "attribution.deep_sad_loss",
        "reps",
        lambda: attribution.deep_sad_loss(jnp.ones(3), jnp.zeros(2), jnp.array([0, 1, -1])),
    ),
    Case(
        "attribution.deep_sad_score",
        "reps",
        lambda: attribution.deep_sad_score(jnp.ones(3), jnp.zeros(2)),
    ),
    Case(
        "attribution.final_layer_inversion",
        "anchor",
        lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2, int)),
    ),
    Case(
        "attribution.final_layer_inversion",
        "num_iters",
        lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2), num_iters=0),
    ),
    Case(
        "attribution.final_layer_inversion",
        "step",
        lambda: attribution.final_layer_inversion(LAYER, jnp.zeros(3), jnp.zeros(2), step=-1.0),
    ),
    Case(
        "attribution.lasso_fista",
        "apply_w",
        lambda: attribution.lasso_fista(None, APPLY_WT, jnp.ones(3), jnp.zeros(2), 0.1),
    ),
    Case(
        "attribution.lipschitz_constant",
        "apply_w",
        lambda: attribution.lipschitz_constant(None, APPLY_WT, (2,)),
    ),
    Case(
        "attribution.lipschitz_constant",
        "apply_wt",
        lambda: attribution.lipschitz_constant(APPLY_W, None, (2,)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
