"""LRE and MW-Net: meta-gradients through the inner update against finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.curriculum import lookahead_meta_loss, lre_weights, mw_net_meta_loss
from jaxlab.curriculum.mw_net import init_weight_net


def model_loss(params, x, y):
    logits = jnp.tanh(x @ params["w1"]) @ params["w2"]
    return -jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y]


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    params = {
        "w1": jnp.asarray(rng.normal(size=(3, 4))),
        "w2": jnp.asarray(rng.normal(size=(4, 2))),
    }
    x, y = jnp.asarray(rng.normal(size=(5, 3))), jnp.asarray(rng.integers(0, 2, 5))
    xm, ym = jnp.asarray(rng.normal(size=(4, 3))), jnp.asarray(rng.integers(0, 2, 4))
    return params, x, y, xm, ym


def test_lre_meta_gradient_matches_finite_differences(problem):
    params, x, y, xm, ym = problem
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), params)
        x, xm = jnp.asarray(x, jnp.float64), jnp.asarray(xm, jnp.float64)
        f = jax.jit(lambda eps: lookahead_meta_loss(eps, params, model_loss, x, y, xm, ym, 0.5))
        eps = jnp.zeros(5, jnp.float64)
        g = np.asarray(jax.jit(jax.grad(f))(eps))
        h = 1e-6
        shifts = np.concatenate([np.eye(5) * h, -np.eye(5) * h])
        values = np.asarray(jax.jit(jax.vmap(f))(jnp.asarray(shifts)))
        fd = (values[:5] - values[5:]) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)
        w = np.asarray(lre_weights(params, model_loss, x, y, xm, ym, 0.5))
        expected = np.maximum(-fd, 0)
        np.testing.assert_allclose(w, expected / expected.sum(), rtol=1e-4, atol=1e-9)


def test_lre_weights_mask_jit_and_vmap(problem):
    params, x, y, xm, ym = problem
    valid = jnp.array([True, True, False, True, True])
    w = jax.jit(lre_weights, static_argnums=1)(params, model_loss, x, y, xm, ym, 0.5, valid)
    assert float(w[2]) == 0.0 and float(w.sum()) == pytest.approx(1.0, abs=1e-5)
    # vmap over the meta batch's labels equals separate calls.
    yms = jnp.stack([ym, 1 - ym])
    batched = jax.vmap(lambda m: lre_weights(params, model_loss, x, y, xm, m, 0.5, valid))(yms)
    np.testing.assert_allclose(batched[0], w, rtol=1e-4, atol=1e-6)


def test_mw_net_meta_gradient_matches_finite_differences(problem):
    params, x, y, xm, ym = problem
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), params)
        x, xm = jnp.asarray(x, jnp.float64), jnp.asarray(xm, jnp.float64)
        v = jax.tree.map(
            lambda a: jnp.asarray(a, jnp.float64), init_weight_net(jax.random.key(1), 6)
        )
        f = lambda v: mw_net_meta_loss(v, params, model_loss, x, y, xm, ym, 0.5, jnp.ones(5))
        check_grads(f, (v,), order=1, modes=["rev"])
        # The look-ahead really depends on V: a zero step size removes the dependence.
        g0 = jax.grad(
            lambda v: mw_net_meta_loss(v, params, model_loss, x, y, xm, ym, 0.0, jnp.ones(5))
        )(v)
        assert all(float(jnp.abs(a).max()) == 0.0 for a in jax.tree.leaves(g0))
