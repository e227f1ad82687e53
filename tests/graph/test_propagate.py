"""CSR propagation ``make_propagate`` against a dense numpy ``M @ x``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph.graphs import make_propagate, propagate


def _random_graph(seed, n=23, e=90):
    rng = np.random.default_rng(seed)
    s, r = rng.integers(0, n, e), rng.integers(0, n, e)  # duplicates and self-loops included
    w = rng.normal(size=e).astype(np.float32)
    dense = np.zeros((n, n), np.float64)
    np.add.at(dense, (r, s), w)
    return (jnp.asarray(s, jnp.int32), jnp.asarray(r, jnp.int32), jnp.asarray(w)), dense, rng


def test_forward_and_traced_graph_match_dense():
    (s, r, w), dense, rng = _random_graph(0)
    x = rng.normal(size=(23, 4)).astype(np.float32)
    np.testing.assert_allclose(propagate(s, r, w, jnp.asarray(x)), dense @ x, atol=1e-5)
    np.testing.assert_allclose(jax.jit(propagate)(s, r, w, jnp.asarray(x)), dense @ x, atol=1e-5)
    v = rng.normal(size=(23, 2, 3)).astype(np.float32)  # trailing dims are columns
    np.testing.assert_allclose(
        propagate(s, r, w, jnp.asarray(v)), np.einsum("ij,jab->iab", dense, v), atol=1e-5
    )


def test_gradients_match_closed_form():
    (s, r, w), dense, rng = _random_graph(1)
    x = rng.normal(size=(23, 5)).astype(np.float32)
    loss = lambda ww, v: jnp.sum(jnp.sin(propagate(s, r, ww, v)))
    grad_w, grad_x = jax.jit(jax.grad(loss, argnums=(0, 1)))(w, jnp.asarray(x))
    upstream = np.cos(dense @ x)
    np.testing.assert_allclose(grad_x, dense.T @ upstream, atol=1e-4)
    np.testing.assert_allclose(
        grad_w, np.sum(upstream[np.asarray(r)] * x[np.asarray(s)], -1), atol=1e-4
    )


def test_vmap_over_features_and_over_weights():
    (s, r, w), dense, rng = _random_graph(2)
    xb = rng.normal(size=(3, 23, 4)).astype(np.float32)
    apply = make_propagate(s, r, w, 23)
    np.testing.assert_allclose(
        jax.vmap(apply)(jnp.asarray(xb)), np.einsum("ij,bjk->bik", dense, xb), atol=1e-5
    )
    wb = rng.normal(size=(2, 90)).astype(np.float32)
    x = rng.normal(size=(23, 4)).astype(np.float32)
    out = jax.vmap(lambda ww: propagate(s, r, ww, jnp.asarray(x)))(jnp.asarray(wb))
    for i in range(2):
        m = np.zeros((23, 23))
        np.add.at(m, (np.asarray(r), np.asarray(s)), wb[i])
        np.testing.assert_allclose(out[i], m @ x, atol=1e-5)
    g = jax.grad(lambda v: jnp.sum(jax.vmap(apply)(v) ** 2))(jnp.asarray(xb))
    np.testing.assert_allclose(
        g, 2 * np.einsum("ji,bjk->bik", dense, np.einsum("ij,bjk->bik", dense, xb)), atol=1e-4
    )


def test_empty_edge_list_and_bad_rows():
    x = jnp.ones((4, 2))
    empty = jnp.zeros((0,), jnp.int32)
    np.testing.assert_array_equal(propagate(empty, empty, jnp.zeros((0,)), x), 0.0)
    apply = make_propagate(empty, empty, jnp.zeros((0,)), 4)
    with pytest.raises(ValueError, match="rows"):
        apply(jnp.ones((5, 2)))
    with pytest.raises(ValueError, match="one shape"):
        make_propagate(jnp.zeros((3,), jnp.int32), jnp.zeros((3,), jnp.int32), jnp.ones((2,)), 4)
