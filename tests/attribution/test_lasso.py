"""FISTA against scikit-learn's Lasso and the KKT conditions; final-layer inversion.

The operators are the tests' own products, multiplied at the ambient matmul precision
(``docs/precision.md``); every comparison with a reference runs under
``jax.default_matmul_precision("highest")``, where a GPU's default TF32 would move the
Lipschitz constant and the solutions by ~1e-3.
"""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from sklearn.linear_model import Lasso

import jaxlab.attribution.lasso as lasso_mod
from jaxlab.attribution import (
    final_layer_inversion,
    lasso_fista,
    linear_adjoint,
    lipschitz_constant,
)


def _problem(m=30, p=20, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(m, p)).astype(np.float32)
    t = rng.normal(size=m).astype(np.float32)
    anchor = 0.3 * rng.normal(size=p).astype(np.float32)
    return w, t, anchor


def test_matches_sklearn_lasso_and_kkt():
    with jax.default_matmul_precision("highest"):
        w, t, anchor = _problem()
        alpha = 2.0
        z = np.asarray(
            lasso_fista(lambda z: w @ z, lambda r: w.T @ r, t, anchor, alpha, num_iters=3000)
        )
        # sklearn minimises (1/2m)‖y − Xβ‖² + a‖β‖₁: the same problem in δ with a = α/m.
        # In float64: sklearn's float32 coordinate descent cannot reach this duality gap.
        w64, t64, a64 = (x.astype(np.float64) for x in (w, t, anchor))
        ref = (
            Lasso(alpha=alpha / len(t), fit_intercept=False, tol=1e-10, max_iter=100_000)
            .fit(w64, t64 - w64 @ a64)
            .coef_
            + a64
        )
        np.testing.assert_allclose(z, ref, atol=2e-3)
        # KKT: Wᵀ(t − Wz) = α·sign(δ) where δ ≠ 0, |·| ≤ α where δ = 0.
        g = w.T @ (t - w @ z)
        delta = z - anchor
        active = np.abs(delta) > 1e-6
        assert active.any() and (~active).any()
        np.testing.assert_allclose(g[active], alpha * np.sign(delta[active]), atol=2e-2)
        assert np.all(np.abs(g[~active]) <= alpha + 2e-2)


def test_lipschitz_and_vmap_jit():
    with jax.default_matmul_precision("highest"):
        w, t, anchor = _problem(seed=1)
        np.testing.assert_allclose(
            lipschitz_constant(lambda z: w @ z, lambda r: w.T @ r, (20,)),
            np.linalg.norm(w, 2) ** 2,
            rtol=1e-3,
        )
        ts = np.stack([t, -t, 2 * t])

        def solve(tt):
            return lasso_fista(lambda z: w @ z, lambda r: w.T @ r, tt, anchor, 1.0, num_iters=200)

        batched = jax.jit(jax.vmap(solve))(ts)
        np.testing.assert_allclose(batched, np.stack([solve(tt) for tt in ts]), atol=1e-5)


def test_final_layer_inversion_conv_transpose_recovers_activation():
    with jax.default_matmul_precision("highest"):
        # A transposed-convolution last layer (the DCGAN kind): z [4, 4, 3] -> x [8, 8, 1].
        kernel = 0.3 * jax.random.normal(jax.random.key(0), (4, 4, 3, 1))

        def layer(z):
            out = jax.lax.conv_transpose(
                z[None], kernel, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )[0]
            return out + 0.05

        z_true = 0.5 * jax.random.normal(jax.random.key(1), (4, 4, 3))
        x = jnp.tanh(layer(z_true))
        z_hat = final_layer_inversion(layer, x, jnp.zeros((4, 4, 3)), alpha=0.0, num_iters=3000)
        # The system is under-determined (48 unknowns, 64 equations but rank-deficient in
        # general): check the fit, i.e. that ẑ reproduces the query.
        np.testing.assert_allclose(jnp.tanh(layer(z_hat)), x, atol=1e-3)


def test_final_layer_inversion_handles_saturated_and_bad_inputs():
    with jax.default_matmul_precision("highest"):
        w = jnp.array([[1.0, 0.0], [0.0, 1.0]])
        z = final_layer_inversion(
            lambda z: w @ z,
            jnp.array([1.0, -1.0]),
            jnp.zeros(2),
            alpha=0.0,
            num_iters=200,
            eps=1e-3,
        )
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


def _conv_transpose_operator(seed=0, in_hw=3, channels=2):
    """A Flax stride-2 ConvTranspose (4×4 kernel, no bias): z [h, h, C] -> x [2h, 2h, 1]."""
    layer = nn.ConvTranspose(1, (4, 4), strides=(2, 2), padding="SAME", use_bias=False)
    params = layer.init(jax.random.key(seed), jnp.zeros((1, in_hw, in_hw, channels)))

    def apply_w(z):
        return layer.apply(params, z[None])[0]

    return apply_w, jnp.zeros((in_hw, in_hw, channels))


def test_linear_adjoint_of_conv_transpose_is_the_matrix_transpose():
    with jax.default_matmul_precision("highest"):
        apply_w, z0 = _conv_transpose_operator(seed=3)
        apply_wt = linear_adjoint(apply_w, z0)
        # The explicit matrix of the operator, materialised column by column by jax.jacobian.
        mat = np.asarray(jax.jacobian(apply_w)(z0)).reshape(-1, z0.size)  # [36, 18]
        rng = np.random.default_rng(0)
        for _ in range(3):
            z = rng.normal(size=z0.shape).astype(np.float32)
            r = rng.normal(size=(6, 6, 1)).astype(np.float32)
            # <W z, r> = <z, Wᵀ r>, and Wᵀ r equals the explicit matrix's transpose times r.
            np.testing.assert_allclose(np.vdot(apply_w(z), r), np.vdot(z, apply_wt(r)), rtol=1e-5)
            np.testing.assert_allclose(np.ravel(apply_wt(r)), mat.T @ r.ravel(), atol=1e-5)
            np.testing.assert_allclose(np.ravel(apply_w(z)), mat @ z.ravel(), atol=1e-5)
        with pytest.raises(ValueError, match="linear"):
            linear_adjoint(lambda z: apply_w(z) + 0.1, z0)
        with pytest.raises(ValueError, match="shape"):
            apply_wt(jnp.zeros((5, 5, 1)))


def test_lasso_with_conv_transpose_operator_matches_sklearn_and_kkt():
    with jax.default_matmul_precision("highest"):
        apply_w, z0 = _conv_transpose_operator(seed=1)
        apply_wt = linear_adjoint(apply_w, z0)
        mat = np.asarray(jax.jacobian(apply_w)(z0), np.float64).reshape(-1, z0.size)  # [36, 18]
        rng = np.random.default_rng(2)
        t = rng.normal(size=(6, 6, 1)).astype(np.float32)
        anchor = 0.3 * rng.normal(size=z0.shape).astype(np.float32)
        alpha = 0.05
        z = np.asarray(
            jax.jit(lambda t, a: lasso_fista(apply_w, apply_wt, t, a, alpha, num_iters=5000))(
                t, anchor
            )
        )
        # sklearn on the explicit matrix: (1/2m)‖t' − W δ‖² + (α/m)‖δ‖₁, t' = t − W z̄.
        tp = t.ravel() - mat @ anchor.ravel()
        ref = (
            Lasso(alpha=alpha / tp.size, fit_intercept=False, tol=1e-12, max_iter=200_000)
            .fit(mat, tp)
            .coef_
            + anchor.ravel()
        )
        np.testing.assert_allclose(z.ravel(), ref, atol=2e-3)
        # KKT in δ = z − z̄: Wᵀ(t − W z) = α·sign(δ) on the support, |·| ≤ α off it.
        g = mat.T @ (t.ravel() - mat @ z.ravel())
        delta = z.ravel() - anchor.ravel()
        active = np.abs(delta) > 1e-5
        assert active.any() and (~active).any()
        np.testing.assert_allclose(g[active], alpha * np.sign(delta[active]), atol=2e-3)
        assert np.all(np.abs(g[~active]) <= alpha + 2e-3)


def test_default_step_survives_an_underestimated_lipschitz_constant():
    """Power iteration (100 steps) falls short of ‖W‖² when many singular values sit just
    below the top one: 1.01 × its estimate is below L, so a fixed step 1/(1.01·estimate)
    would exceed 1/L. The default step backtracks and still reaches scikit-learn's solution."""
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(3)
        m, p = 60, 40
        u, _ = np.linalg.qr(rng.normal(size=(m, p)))
        v, _ = np.linalg.qr(rng.normal(size=(p, p)))
        sigma = np.full(p, 0.985)
        sigma[-1] = 1.0
        sigma[:10] = np.linspace(0.1, 0.9, 10)
        w = ((u * sigma) @ v.T).astype(np.float32)
        true_l = np.linalg.norm(w.astype(np.float64), 2) ** 2
        estimate = float(lipschitz_constant(lambda z: w @ z, lambda r: w.T @ r, (p,)))
        assert 1.01 * estimate < true_l  # the situation of the issue: a step above 1/L
        t = rng.normal(size=m).astype(np.float32)
        anchor = np.zeros(p, np.float32)
        alpha = 0.05
        z = np.asarray(
            lasso_fista(lambda z: w @ z, lambda r: w.T @ r, t, anchor, alpha, num_iters=2000)
        )
        w64, t64 = w.astype(np.float64), t.astype(np.float64)
        ref = (
            Lasso(alpha=alpha / m, fit_intercept=False, tol=1e-12, max_iter=200_000)
            .fit(w64, t64)
            .coef_
        )
        np.testing.assert_allclose(z, ref, atol=1e-4)


def test_backtracking_recovers_from_a_far_too_small_start(monkeypatch):
    """With the power-iteration estimate replaced by L/1000 (a step 1000× too large, which a
    fixed step turns into NaN), backtracking still converges to scikit-learn's solution."""
    with jax.default_matmul_precision("highest"):
        w, t, anchor = _problem(seed=2)
        true_l = np.linalg.norm(w.astype(np.float64), 2) ** 2
        monkeypatch.setattr(lasso_mod, "lipschitz_constant", lambda *a, **k: true_l / 1000)
        z = np.asarray(
            lasso_fista(lambda z: w @ z, lambda r: w.T @ r, t, anchor, 2.0, num_iters=3000)
        )
        fixed = lasso_fista(
            lambda z: w @ z, lambda r: w.T @ r, t, anchor, 2.0, step=1000 / true_l, num_iters=300
        )
        assert not np.all(np.isfinite(np.asarray(fixed)))
        w64, t64, a64 = (x.astype(np.float64) for x in (w, t, anchor))
        ref = (
            Lasso(alpha=2.0 / len(t), fit_intercept=False, tol=1e-10, max_iter=100_000)
            .fit(w64, t64 - w64 @ a64)
            .coef_
            + a64
        )
        np.testing.assert_allclose(z, ref, atol=2e-3)
