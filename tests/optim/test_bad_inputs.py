"""Bad input, one row per argument of every public ``jaxlab.optim`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxlab import optim
from tests.bad_inputs import KEY, NAN, Case, case_id, check

MLP = [(jnp.eye(2), jnp.zeros(2)), (jnp.ones((2, 1)), jnp.zeros(1))]

CASES = [
    Case("optim.adr_gd", "lr", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr=-0.5)),
    Case("optim.adr_gd", "c_max", lambda: optim.adr_gd(MLP, jnp.zeros(2), c_min=5.0, c_max=1.0)),
    Case("optim.adr_gd", "kappa", lambda: optim.adr_gd(MLP, jnp.zeros(2), kappa=0.0)),
    Case("optim.adr_gd", "num_steps", lambda: optim.adr_gd(MLP, jnp.zeros(2), num_steps=0)),
    Case("optim.adr_gd", "lr_sigma", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr_sigma=0.0)),
    Case("optim.adr_gd", "lr_c", lambda: optim.adr_gd(MLP, jnp.zeros(2), lr_c=-1.0)),
    Case("optim.adr_gd", "c", lambda: optim.adr_gd(MLP, jnp.zeros(2), c=-1.0)),
    Case(
        "optim.adr_gd", "c_reduce_rate", lambda: optim.adr_gd(MLP, jnp.zeros(2), c_reduce_rate=-1.0)
    ),
    Case(
        "optim.adr_gd",
        "c_grad_tolerance",
        lambda: optim.adr_gd(MLP, jnp.zeros(2), c_grad_tolerance=NAN),
    ),
    Case("optim.adr_gd", "perturb_freq", lambda: optim.adr_gd(MLP, jnp.zeros(2), perturb_freq=0)),
    Case("optim.adr_gd", "noise_scale", lambda: optim.adr_gd(MLP, jnp.zeros(2), noise_scale=-1.0)),
    Case(
        "optim.adr_gd",
        "grad_threshold",
        lambda: optim.adr_gd(MLP, jnp.zeros(2), grad_threshold=-1.0),
    ),
    Case(
        "optim.adr_gd",
        "x_grad_threshold",
        lambda: optim.adr_gd(MLP, jnp.zeros(2), x_grad_threshold=0.0),
    ),
    Case(
        "optim.adr_gd",
        "reset_sigma_every",
        lambda: optim.adr_gd(MLP, jnp.zeros(2), reset_sigma_every=0),
    ),
    Case("optim.adr_gd", "key", lambda: optim.adr_gd(MLP, jnp.zeros(2), key=3)),
    Case("optim.adr_gd", "x0", lambda: optim.adr_gd(MLP, jnp.zeros(3))),
    Case("optim.adr_gd", "upper", lambda: optim.adr_gd(MLP, jnp.zeros(2), lower=1.0, upper=-1.0)),
    Case("optim.adr_gd", "params", lambda: optim.adr_gd(MLP[:1], jnp.zeros(2))),
    Case(
        "optim.projected_gradient_ascent",
        "lr",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), lr=0.0),
    ),
    Case(
        "optim.projected_gradient_ascent",
        "gradient",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), gradient="bogus"),
    ),
    Case(
        "optim.projected_gradient_ascent",
        "num_steps",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), num_steps=0),
    ),
    Case("optim.relu_mlp", "x", lambda: optim.relu_mlp(MLP, jnp.zeros(3))),
    Case(
        "optim.relu_mlp",
        "params",
        lambda: optim.relu_mlp([(jnp.eye(2), jnp.zeros(3))], jnp.zeros(2)),
    ),
    Case("optim.random_relu_mlp", "sizes", lambda: optim.random_relu_mlp(KEY, [3])),
    Case(
        "optim.random_relu_mlp",
        "positive_prob",
        lambda: optim.random_relu_mlp(KEY, [3, 1], positive_prob=1.5),
    ),
    Case("optim.random_relu_mlp", "scale", lambda: optim.random_relu_mlp(KEY, [3, 1], scale=0.0)),
    Case("optim.random_relu_mlp", "key", lambda: optim.random_relu_mlp(1, [3, 1])),
    Case(
        "optim.reference_random_relu_mlp",
        "key",
        lambda: optim.reference_random_relu_mlp(337550, [3, 1]),
    ),
    Case(
        "optim.reference_random_relu_mlp",
        "sizes",
        lambda: optim.reference_random_relu_mlp(KEY, [3, 0]),
    ),
    Case(
        "optim.anytime_averaging",
        "gamma_floor",
        lambda: optim.anytime_averaging(0.1, gamma_floor=2.0),
    ),
    Case("optim.anytime_averaging", "learning_rate", lambda: optim.anytime_averaging(-0.1)),
    Case("optim.mu2sgd", "learning_rate", lambda: optim.mu2sgd(0.0)),
    Case("optim.mu2sgd", "beta_floor", lambda: optim.mu2sgd(0.1, beta_floor=-0.5)),
    Case("optim.mu2sgd", "clip_global_norm", lambda: optim.mu2sgd(0.1, clip_global_norm=0.0)),
    Case("optim.storm", "beta_floor", lambda: optim.storm(beta_floor=1.5)),
    Case("optim.worker_momentum", "beta", lambda: optim.worker_momentum(beta=1.0)),
    Case("optim.adr_gd", "lower", lambda: optim.adr_gd(MLP, jnp.zeros(2), lower=jnp.zeros(3))),
    Case("optim.adr_gd", "c_min", lambda: optim.adr_gd(MLP, jnp.zeros(2), c_min=-1.0)),
    Case("optim.mu2sgd", "gamma_floor", lambda: optim.mu2sgd(0.1, gamma_floor=1.5)),
    Case(
        "optim.projected_gradient_ascent",
        "params",
        lambda: optim.projected_gradient_ascent([], jnp.zeros(2)),
    ),
    Case(
        "optim.projected_gradient_ascent",
        "x0",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(5)),
    ),
    Case(
        "optim.projected_gradient_ascent",
        "lower",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), lower=jnp.zeros(3)),
    ),
    Case(
        "optim.projected_gradient_ascent",
        "upper",
        lambda: optim.projected_gradient_ascent(MLP, jnp.zeros(2), upper=-2.0),
    ),
    Case(
        "optim.reference_random_relu_mlp",
        "scale",
        lambda: optim.reference_random_relu_mlp(KEY, [3, 1], scale=0.0),
    ),
    Case(
        "optim.reference_random_relu_mlp",
        "positive_prob",
        lambda: optim.reference_random_relu_mlp(KEY, [3, 1], positive_prob=-0.5),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
