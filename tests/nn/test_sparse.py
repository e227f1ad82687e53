"""sparsemax and entmax-1.5 against closed forms and a numpy bisection."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.nn import entmax15, sparsemax


def np_sparsemax(z):
    """Projection onto the simplex by bisection on τ (independent of the sort algorithm)."""
    lo, hi = z.max() - 1.0, z.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        lo, hi = (tau, hi) if np.maximum(z - tau, 0).sum() > 1 else (lo, tau)
    return np.maximum(z - (lo + hi) / 2, 0)


def np_entmax15(z):
    """1.5-entmax by bisection on τ in p = [z/2 − τ]₊²."""
    z = z / 2.0
    lo, hi = z.max() - 1.0, z.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        lo, hi = (tau, hi) if (np.maximum(z - tau, 0) ** 2).sum() > 1 else (lo, tau)
    return np.maximum(z - (lo + hi) / 2, 0) ** 2


ROWS = np.random.default_rng(0).normal(size=(6, 9)) * np.array([[0.1], [0.5], [1], [2], [5], [20]])


@pytest.mark.parametrize("fn, ref", [(sparsemax, np_sparsemax), (entmax15, np_entmax15)])
def test_against_bisection(fn, ref):
    got = np.asarray(fn(jnp.asarray(ROWS, jnp.float32)))
    want = np.stack([ref(r) for r in ROWS])
    np.testing.assert_allclose(got, want, atol=2e-6)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(got > 0, want > 1e-9)


def test_sparsemax_closed_form_two_entries():
    # For two entries, sparsemax = clip((z1 − z2 + 1)/2, 0, 1) on the first one.
    for gap in [-3.0, -0.4, 0.0, 0.7, 2.0]:
        p = sparsemax(jnp.array([gap, 0.0]))
        np.testing.assert_allclose(p[0], np.clip((gap + 1) / 2, 0, 1), atol=1e-7)


def test_sparsemax_support_and_threshold():
    z = np.array([1.0, 0.8, 0.1, -1.0])
    p = np.asarray(sparsemax(jnp.asarray(z)))
    # support {0, 1}: τ = (1 + 0.8 − 1)/2 = 0.4
    np.testing.assert_allclose(p, [0.6, 0.4, 0.0, 0.0], atol=1e-7)


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_check_grads(fn):
    # Scores away from support boundaries, where the map is differentiable.
    x = jnp.array([[1.2, 0.3, -0.7, 0.9, -2.0], [0.1, 0.25, -0.35, 0.05, 0.4]])
    check_grads(lambda x: fn(x), (x,), order=1, modes=["fwd", "rev"], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_jit_vmap_axis(fn):
    x = jnp.asarray(ROWS, jnp.float32)
    eager = fn(x)
    np.testing.assert_allclose(jax.jit(fn)(x), eager, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(fn)(x), eager, rtol=1e-6)
    np.testing.assert_allclose(fn(x.T, axis=0), eager.T, rtol=1e-6)


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_extreme_and_masked_like_values(fn):
    x = jnp.array([[1e4, -1e4, 0.0], [jnp.finfo(jnp.float32).min, 0.5, 0.2]])
    y = fn(x)
    assert np.all(np.isfinite(np.asarray(y)))
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-6)
    assert float(y[1, 0]) == 0.0
    g = jax.grad(lambda x: fn(x)[1, 1])(x)
    assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.parametrize("fn", [sparsemax, entmax15])
def test_bad_inputs(fn):
    with pytest.raises(ValueError, match="scalar"):
        fn(jnp.float32(1.0))
    with pytest.raises(ValueError, match="axis"):
        fn(jnp.ones((2, 3)), axis=-3)
    with pytest.raises(ValueError, match="non-empty"):
        fn(jnp.ones((2, 0)))
