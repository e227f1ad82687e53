"""Tests of the MultiMax kernel against an independent numpy reference."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.nn import MultiMaxParams, init_multimax_params, multimax, multimax_modulate


def np_sigma(x, b, d, t_b, t_d):
    """Eq. (6) written out with numpy, one term at a time."""
    x = np.asarray(x, np.float64)
    out = x.copy()
    for k in range(1, len(b) + 1):
        out += t_b[k - 1] * np.where(x < b[k - 1], b[k - 1] - x, 0.0) ** k
        out += t_d[k - 1] * np.where(x > d[k - 1], x - d[k - 1], 0.0) ** k
    return out


def np_multimax(x, params, axis=-1, mask=None):
    s = np_sigma(x, *[np.asarray(p, np.float64) for p in params])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(axis=axis, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


STRONG = MultiMaxParams(
    b=jnp.array([-0.5, 0.3]),
    d=jnp.array([0.8, 1.2]),
    t_b=jnp.array([0.7, 0.4]),
    t_d=jnp.array([-0.3, 0.5]),
)


def test_init_matches_reference_scale():
    params = init_multimax_params(jax.random.key(0), order=3, std=0.02)
    for field in params:
        chex.assert_shape(field, (3,))
    draws = jnp.concatenate(init_multimax_params(jax.random.key(1), order=5000))
    assert abs(float(jnp.std(draws)) - 0.02) < 1e-3
    assert float(jnp.max(jnp.abs(draws))) < 0.2


def test_modulate_matches_numpy():
    x = np.linspace(-3, 3, 101)
    np.testing.assert_allclose(
        multimax_modulate(x, STRONG), np_sigma(x, *map(np.asarray, STRONG)), rtol=1e-5, atol=1e-5
    )


def test_modulate_identity_between_thresholds():
    x = jnp.linspace(0.31, 0.79, 7)
    np.testing.assert_allclose(multimax_modulate(x, STRONG), x, rtol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_multimax_matches_numpy(axis):
    x = np.random.default_rng(0).normal(size=(4, 5, 6)) * 2
    np.testing.assert_allclose(
        multimax(x, STRONG, axis=axis), np_multimax(x, STRONG, axis=axis), rtol=1e-5, atol=1e-6
    )


def test_zero_params_is_softmax():
    x = np.random.default_rng(1).normal(size=(3, 7))
    zero = MultiMaxParams(*jnp.zeros((4, 2)))
    np.testing.assert_allclose(multimax(x, zero), jax.nn.softmax(x), rtol=1e-6)


def test_check_grads_x_and_params():
    x = jnp.asarray(np.random.default_rng(2).normal(size=(3, 5)) * 1.5)
    w = jnp.asarray(np.random.default_rng(3).normal(size=(3, 5)))
    f = lambda x, p: jnp.sum(multimax(x, p) * w)
    check_grads(f, (x, STRONG), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)
    check_grads(lambda x: multimax(x, STRONG), (x,), order=2, modes=["rev"], atol=1e-2, rtol=1e-2)


def plain_multimax(x, p, mask=None):
    """softmax(σ(x)) written directly (Eq. (6)–(7)), masked entries set to −inf after σ,
    for plain autodiff."""
    s = x
    for k in range(1, p.b.shape[0] + 1):
        s = s + p.t_b[k - 1] * jax.nn.relu(p.b[k - 1] - x) ** k
        s = s + p.t_d[k - 1] * jax.nn.relu(x - p.d[k - 1]) ** k
    return jax.nn.softmax(s if mask is None else jnp.where(mask, s, -jnp.inf))


MASK = np.random.default_rng(10).random((2, 3, 9)) < 0.7
MASK[..., 0] = True  # no all-masked row (the plain formula gives NaN there)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("mask", [None, MASK])
def test_grads_match_autodiff_of_plain_formula(fused, mask):
    """Both paths' gradients (scores and all 8 parameters) against autodiff of
    softmax(σ(x)) written directly."""
    x = jnp.asarray(np.random.default_rng(4).normal(size=(2, 3, 9)) * 2)
    w = jnp.asarray(np.random.default_rng(5).normal(size=(2, 3, 9)))
    loss = lambda x, p: jnp.sum(multimax(x, p, where=mask, fused=fused) * w)
    plain = lambda x, p: jnp.sum(plain_multimax(x, p, mask) * w)
    with jax.default_matmul_precision("highest"):
        got = jax.jit(jax.grad(loss, (0, 1)))(x, STRONG)
        want = jax.grad(plain, (0, 1))(x, STRONG)
    chex.assert_trees_all_close(got, want, rtol=1e-5, atol=1e-6)


def test_unfused_supports_forward_mode_and_masked_overflow():
    x = jnp.array([[1e30, 0.0, 1.0]])
    mask = jnp.array([[False, True, True]])
    tangent = jnp.array([[0.0, 1.0, 0.0]])
    _, jvp = jax.jvp(lambda x: multimax(x, STRONG, where=mask, fused=False), (x,), (tangent,))
    y = multimax(x[:, 1:], STRONG)
    np.testing.assert_allclose(jvp[0, 1:], y[0, 0] * (np.eye(2)[0] - y[0]) * _dsigma0(), rtol=1e-5)
    g = jax.grad(lambda x: multimax(x, STRONG, where=mask, fused=False)[0, 1])(x)
    assert np.all(np.isfinite(np.asarray(g))) and g[0, 0] == 0.0


def _dsigma0():
    # σ'(0) for STRONG: 0 lies in (b_1, b_2) = (−0.5, 0.3): t_b,2 term 2·relu(0.3 − 0)·(−1).
    return 1.0 - 0.4 * 2 * 0.3


def test_jit_vmap_equivalence_and_param_batch():
    x = jnp.asarray(np.random.default_rng(6).normal(size=(4, 6)))
    eager = multimax(x, STRONG)
    np.testing.assert_allclose(jax.jit(multimax)(x, STRONG), eager, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(multimax, (0, None))(x, STRONG), eager, rtol=1e-6)
    batch = jax.vmap(lambda k: init_multimax_params(k))(jax.random.split(jax.random.key(0), 3))
    batch = jax.tree.map(lambda a, s: a.at[0].set(s), batch, STRONG)
    per_set = jax.vmap(multimax, (None, 0))(x, batch)
    chex.assert_shape(per_set, (3, 4, 6))
    np.testing.assert_allclose(per_set[0], eager, rtol=1e-6)
    np.testing.assert_allclose(
        per_set[2], np_multimax(x, jax.tree.map(lambda a: a[2], batch)), rtol=1e-5
    )
    grads = jax.vmap(jax.grad(lambda p: multimax(x, p)[0, 0]))(batch)
    want = jax.grad(lambda p: multimax(x, p)[0, 0])(STRONG)
    chex.assert_trees_all_close(jax.tree.map(lambda a: a[0], grads), want, rtol=1e-5)


def test_no_retrace_for_same_shapes():
    @jax.jit
    @chex.assert_max_traces(n=1)
    def f(x, p):
        return multimax(x, p)

    for seed in range(3):
        f(jnp.asarray(np.random.default_rng(seed).normal(size=(2, 4)), jnp.float32), STRONG)


def test_mask_zero_and_no_gradient():
    x = jnp.asarray(np.random.default_rng(7).normal(size=(3, 6)))
    mask = jnp.array([[True] * 6, [True, False, True, False, True, False], [False] * 6])
    y = multimax(x, STRONG, where=mask)
    np.testing.assert_allclose(y[:2], np_multimax(x[:2], STRONG, mask=mask[:2]), rtol=1e-5)
    assert np.all(np.asarray(y)[~np.asarray(mask)] == 0.0)
    np.testing.assert_array_equal(y[2], np.zeros(6))  # all-masked row: zeros, documented
    w = jnp.asarray(np.random.default_rng(8).normal(size=(3, 6)))
    g = jax.grad(lambda x: jnp.sum(multimax(x, STRONG, where=mask) * w))(x)
    assert np.all(np.asarray(g)[~np.asarray(mask)] == 0.0)
    assert np.all(np.isfinite(np.asarray(g)))


def test_mask_is_applied_after_modulation():
    # A masked entry with a huge score must not change the others (σ sees no -inf).
    x = jnp.array([0.0, 1.0, 1e4])
    y = multimax(x, STRONG, where=jnp.array([True, True, False]))
    np.testing.assert_allclose(y[:2], np_multimax(x[:2], STRONG), rtol=1e-5)


@pytest.mark.parametrize("scale", [1e4, 1e30, 3e38])
def test_extreme_values_are_finite(scale):
    x = jnp.array([[-scale, 0.0, scale], [scale, scale, -scale]])
    y = multimax(x, STRONG)
    assert np.all(np.isfinite(np.asarray(y)))
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-6)
    g = jax.grad(lambda x: multimax(x, STRONG)[0, 1])(x)
    assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.parametrize("fused", [True, False])
def test_bfloat16_computed_in_float32(fused):
    """bfloat16 scores: bfloat16 outputs and score gradients, float32 parameter gradients,
    all with float32 statistics (so within bfloat16 rounding of the float64 reference)."""
    x = np.random.default_rng(9).normal(size=(4, 8)).astype(np.float32)
    w = np.random.default_rng(11).normal(size=(4, 8)).astype(np.float32)
    xb = jnp.asarray(x, jnp.bfloat16)
    y = multimax(xb, STRONG, fused=fused)
    assert y.dtype == jnp.bfloat16
    x64 = np.asarray(xb, np.float64)
    np.testing.assert_allclose(np.asarray(y, np.float32), np_multimax(x64, STRONG), atol=1e-2)
    loss = lambda x, p: jnp.sum(multimax(x, p, fused=fused).astype(jnp.float32) * w)
    g_x, g_p = jax.grad(loss, (0, 1))(xb, STRONG)
    assert g_x.dtype == jnp.bfloat16 and g_p.b.dtype == jnp.float32
    with jax.default_matmul_precision("highest"):
        want_x, want_p = jax.grad(lambda x, p: jnp.sum(plain_multimax(x, p) * w), (0, 1))(
            jnp.asarray(x64, jnp.float32), STRONG
        )
    np.testing.assert_allclose(np.asarray(g_x, np.float32), want_x, atol=2e-2, rtol=2e-2)
    chex.assert_trees_all_close(g_p, want_p, atol=2e-2, rtol=2e-2)


def test_bad_inputs():
    with pytest.raises(ValueError, match="same shape"):
        multimax(jnp.ones(3), MultiMaxParams(jnp.ones(2), jnp.ones(2), jnp.ones(3), jnp.ones(2)))
    with pytest.raises(ValueError, match="MultiMaxParams"):
        multimax(jnp.ones(3), (jnp.ones(2),) * 4)
    with pytest.raises(ValueError, match="axis"):
        multimax(jnp.ones((2, 3)), STRONG, axis=2)
    with pytest.raises(ValueError, match="scalar"):
        multimax(jnp.float32(1.0), STRONG)
    with pytest.raises(ValueError, match="non-empty"):
        multimax(jnp.ones((2, 0)), STRONG)
    with pytest.raises(ValueError, match="broadcast"):
        multimax(jnp.ones((2, 3)), STRONG, where=jnp.ones((4,), bool))
    with pytest.raises(ValueError, match="boolean"):
        multimax(jnp.ones((2, 3)), STRONG, where=jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="order"):
        init_multimax_params(jax.random.key(0), order=0)
