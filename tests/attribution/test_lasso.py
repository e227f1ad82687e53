"""FISTA against scikit-learn's Lasso and the KKT conditions; final-layer inversion."""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from sklearn.linear_model import Lasso

import jaxlab.attribution.lasso as lasso_mod
from jaxlab.attribution import final_layer_inversion, lasso_fista, lipschitz_constant


def _problem(m=30, p=20, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(m, p)).astype(np.float32)
    t = rng.normal(size=m).astype(np.float32)
    anchor = 0.3 * rng.normal(size=p).astype(np.float32)
    return w, t, anchor


def test_matches_sklearn_lasso_and_kkt():
    w, t, anchor = _problem()
    alpha = 2.0
    z = np.asarray(lasso_fista(lambda z: w @ z, lambda r: w.T @ r, t, anchor, alpha,
                               num_iters=3000))
    # sklearn minimises (1/2m)‖y − Xβ‖² + a‖β‖₁: the same problem in δ with a = α/m.
    ref = Lasso(alpha=alpha / len(t), fit_intercept=False, tol=1e-10, max_iter=100_000).fit(
        w, t - w @ anchor).coef_ + anchor
    np.testing.assert_allclose(z, ref, atol=2e-3)
    # KKT: Wᵀ(t − Wz) = α·sign(δ) where δ ≠ 0, |·| ≤ α where δ = 0.
    g = w.T @ (t - w @ z)
    delta = z - anchor
    active = np.abs(delta) > 1e-6
    assert active.any() and (~active).any()
    np.testing.assert_allclose(g[active], alpha * np.sign(delta[active]), atol=2e-2)
    assert np.all(np.abs(g[~active]) <= alpha + 2e-2)


def test_lipschitz_and_vmap_jit():
    w, t, anchor = _problem(seed=1)
    np.testing.assert_allclose(lipschitz_constant(lambda z: w @ z, lambda r: w.T @ r, (20,)),
                               np.linalg.norm(w, 2) ** 2, rtol=1e-3)
    ts = np.stack([t, -t, 2 * t])

    def solve(tt):
        return lasso_fista(lambda z: w @ z, lambda r: w.T @ r, tt, anchor, 1.0, num_iters=200)

    batched = jax.jit(jax.vmap(solve))(ts)
    np.testing.assert_allclose(batched, np.stack([solve(tt) for tt in ts]), atol=1e-5)


def test_final_layer_inversion_conv_transpose_recovers_activation():
    # A transposed-convolution last layer (the DCGAN kind): z [4, 4, 3] -> x [8, 8, 1].
    kernel = 0.3 * jax.random.normal(jax.random.key(0), (4, 4, 3, 1))

    def layer(z):
        out = jax.lax.conv_transpose(z[None], kernel, (2, 2), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))[0]
        return out + 0.05

    z_true = 0.5 * jax.random.normal(jax.random.key(1), (4, 4, 3))
    x = jnp.tanh(layer(z_true))
    z_hat = final_layer_inversion(layer, x, jnp.zeros((4, 4, 3)), alpha=0.0, num_iters=3000)
    # The system is under-determined (48 unknowns, 64 equations but rank-deficient in
    # general): check the fit, i.e. that ẑ reproduces the query.
    np.testing.assert_allclose(jnp.tanh(layer(z_hat)), x, atol=1e-3)


def test_final_layer_inversion_handles_saturated_and_bad_inputs():
    w = jnp.array([[1.0, 0.0], [0.0, 1.0]])
    z = final_layer_inversion(lambda z: w @ z, jnp.array([1.0, -1.0]), jnp.zeros(2), alpha=0.0,
                              num_iters=200, eps=1e-3)
    np.testing.assert_allclose(z, [np.arctanh(1 - 1e-3), -np.arctanh(1 - 1e-3)], rtol=1e-4)
    with pytest.raises(ValueError, match="finite"):
        final_layer_inversion(lambda z: w @ z, jnp.array([np.nan, 0.0]), jnp.zeros(2))
    with pytest.raises(ValueError, match="shape"):
        final_layer_inversion(lambda z: w @ z, jnp.zeros(3), jnp.zeros(2))
    with pytest.raises(ValueError, match="target"):
        lasso_fista(lambda z: w @ z, lambda r: w.T @ r, jnp.zeros(3), jnp.zeros(2), 0.1)
    with pytest.raises(ValueError, match="alpha"):
        lasso_fista(lambda z: w @ z, lambda r: w.T @ r, jnp.zeros(2), jnp.zeros(2), -1.0)


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(lasso_mod, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
