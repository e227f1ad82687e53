"""DCL: temperature-scaled logits and the sparse momentum update of data parameters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.curriculum import StepContext, data_parameter_loss, dcl


def np_ce(logits, labels):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -logp[np.arange(len(labels)), labels]


def test_temperature_scaled_logits_match_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 6)
    log_sigma = rng.normal(size=6).astype(np.float32)
    got = data_parameter_loss(logits, labels, log_sigma)
    np.testing.assert_allclose(got, np_ce(logits / np.exp(log_sigma)[:, None], labels), rtol=1e-5)
    vmapped = jax.vmap(lambda z, y, s: data_parameter_loss(z[None], y[None], s[None])[0])
    np.testing.assert_allclose(vmapped(logits, labels, log_sigma), got, rtol=1e-6)
    check_grads(
        lambda s: data_parameter_loss(logits, labels, s).sum(),
        (log_sigma,),
        order=1,
        modes=["rev"],
        atol=1e-2,
        rtol=1e-2,
    )


def test_data_parameter_update_is_sparse_momentum_sgd():
    c = dcl(init_data_param=1.0, lr_data_param=0.5, wd_data_param=0.1)
    state = c.data_prepare(5, 3, jax.random.key(0))
    logits = jnp.array([[2.0, 0.0, -1.0], [0.0, 1.0, 0.5]])
    labels, idx = jnp.array([0, 2]), jnp.array([1, 3])
    ctx = StepContext(
        None, None, None, None, jnp.ones(2, bool), None, None, 1e-3, jnp.int32(0), jax.random.key(0)
    )
    loss, new = jax.jit(lambda s: c.loss_curriculum(None, logits, labels, idx, s, ctx))(state)
    np.testing.assert_allclose(
        loss, np_ce(np.asarray(logits), np.asarray(labels)).mean(), rtol=1e-5
    )

    # Finite-difference gradient of the objective in the two touched data parameters.
    def objective(d):
        return np_ce(
            np.asarray(logits, np.float64) / np.exp(d)[:, None], np.asarray(labels)
        ).mean() + 0.5 * 0.1 * np.sum(d**2)

    h = 1e-5
    g = np.array(
        [(objective(np.eye(2)[i] * h) - objective(-np.eye(2)[i] * h)) / (2 * h) for i in range(2)]
    )
    d = np.asarray(new.params["data"])
    np.testing.assert_allclose(d[[1, 3]], -0.5 * g, rtol=1e-3, atol=1e-6)
    assert np.all(d[[0, 2, 4]] == 0.0)  # untouched rows do not move (log 1 = 0)


def test_clamped_and_bad_init():
    c = dcl(lr_data_param=1e4)
    state = c.data_prepare(2, 2, jax.random.key(0))
    ctx = StepContext(
        None, None, None, None, jnp.ones(2, bool), None, None, 1e-3, jnp.int32(0), jax.random.key(0)
    )
    _, new = c.loss_curriculum(
        None,
        jnp.array([[5.0, -5.0], [5.0, -5.0]]),
        jnp.array([1, 1]),
        jnp.array([0, 1]),
        state,
        ctx,
    )
    assert np.all(np.abs(np.asarray(new.params["data"])) <= np.log(20) + 1e-6)
    with pytest.raises(ValueError, match="init"):
        dcl(init_data_param=-1.0)
    with pytest.raises(ValueError, match="log_sigma"):
        data_parameter_loss(jnp.zeros((2, 3)), jnp.zeros(2, jnp.int32), jnp.zeros(3))
