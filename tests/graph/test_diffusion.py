"""GADC/PPR/heat diffusion against an independent dense numpy computation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.graph import diffusion, graphs


def _random_graph(rng, n=9, p=0.35):
    upper = np.triu(rng.random((n, n)) < p, k=1)
    upper[n - 1, :] = False  # node n-1 is isolated
    upper[:, n - 1] = False
    a = (upper | upper.T).astype(np.float64)
    s, r = np.nonzero(a)
    return a, graphs.from_edges(s, r, n)


def _features(rng, n=9, d=4):
    x = rng.random((n, d))
    x[2] = 0.0  # all-zero feature row
    return x


def _dense_a_hat(a, degree_axis=1):
    m = a + np.eye(a.shape[0])
    deg = m.sum(axis=degree_axis)
    d = np.where(deg > 0, deg**-0.5, 0.0)
    return d[:, None] * m * d[None, :]


def _cosine_on_edges(a, p):
    norms = np.linalg.norm(p, axis=1)
    out = np.zeros_like(a)
    for i, j in zip(*np.nonzero(a), strict=True):
        if norms[i] > 0 and norms[j] > 0:
            out[i, j] = p[i] @ p[j] / (norms[i] * norms[j])
    return out


def _dense_phi(a, p, phi):
    if phi == "cosine":
        return _cosine_on_edges(a, p)
    if phi == "gram":
        g = p @ p.T
        return g / np.linalg.norm(g)
    if phi == "edge_inner":
        vals = (p @ p.T) * (a != 0)
        return vals / np.linalg.norm(vals)
    raise AssertionError(phi)


def _dense_series(t, x, lam, k):
    s = sum(np.linalg.matrix_power(lam / (lam + 1) * t, i) for i in range(k + 1))
    return s @ x / (lam + 1)


@pytest.mark.parametrize("phi", ["cosine", "gram", "edge_inner", "limit"])
def test_gadc_matches_dense_numpy(phi):
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(0)
        a, g = _random_graph(rng)
        x = _features(rng)
        p = _features(rng, d=6)
        lam, eps, k = 2.0, 0.7, 5
        if phi == "limit":
            t = _cosine_on_edges(a, p) + np.eye(a.shape[0])
        else:
            t = _dense_a_hat(a) - eps * _dense_phi(a, p, phi)
        expected = _dense_series(t, x, lam, k)
        got = diffusion.gadc(g, x, lam=lam, eps=eps, num_terms=k, phi=phi, phi_features=p)
        assert not np.any(np.isnan(np.asarray(got)))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)


def test_eps_zero_is_ppr():
    rng = np.random.default_rng(1)
    a, g = _random_graph(rng)
    x = _features(rng)
    lam = 3.0
    ppr = diffusion.ppr_diffusion(g, x, alpha=1.0 / (lam + 1.0), num_terms=8)
    for phi in ("cosine", "gram", "edge_inner"):
        got = diffusion.gadc(g, x, lam=lam, eps=0.0, num_terms=8, phi=phi)
        np.testing.assert_allclose(got, ppr, rtol=1e-5, atol=1e-6)
    alpha = 0.2
    expected = (
        alpha * sum(np.linalg.matrix_power((1 - alpha) * _dense_a_hat(a), i) for i in range(9)) @ x
    )
    np.testing.assert_allclose(
        diffusion.ppr_diffusion(g, x, alpha=alpha, num_terms=8), expected, rtol=1e-5, atol=1e-6
    )


def test_heat_diffusion_dense():
    rng = np.random.default_rng(2)
    a, g = _random_graph(rng)
    x = _features(rng)
    t, k = 1.5, 10
    a_hat = _dense_a_hat(a)
    expected = (
        sum(
            np.exp(-t) * t**i / np.prod(np.arange(1, i + 1)) * np.linalg.matrix_power(a_hat, i)
            for i in range(k + 1)
        )
        @ x
    )
    np.testing.assert_allclose(
        diffusion.heat_diffusion(g, x, t=t, num_terms=k), expected, rtol=1e-5, atol=1e-6
    )


def test_directed_out_degree_matches_reference_form():
    rng = np.random.default_rng(3)
    n = 7
    a = (rng.random((n, n)) < 0.3).astype(np.float64)
    np.fill_diagonal(a, 0.0)
    s, r = np.nonzero(a)  # a[i, j] = 1: edge i -> j
    g = graphs.from_edges(s, r, n)
    m = a + np.eye(n)
    d = m.sum(axis=1) ** -0.5  # row sums of A + I
    expected = d[:, None] * m.T * d[None, :]  # D^{-1/2}(A+I)ᵀD^{-1/2}
    a_hat = diffusion.gcn_normalize(g, n, degree="out")
    np.testing.assert_allclose(graphs.to_dense(a_hat, n), expected, rtol=1e-6)


def test_gcn_normalize_isolated_node_without_self_loops():
    g = graphs.from_edges([0, 1], [1, 0], 3)
    a_hat = diffusion.gcn_normalize(g, 3, add_self_loops=False)
    dense = np.asarray(graphs.to_dense(a_hat, 3))
    assert np.all(np.isfinite(dense))
    np.testing.assert_allclose(dense, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])


def test_jit_vmap_and_padding():
    rng = np.random.default_rng(4)
    _, g = _random_graph(rng)
    xs = np.stack([_features(rng) for _ in range(3)])
    f = lambda x: diffusion.gadc(g, x, lam=1.0, eps=0.5, num_terms=4, phi="cosine")
    batched = jax.jit(jax.vmap(f))(xs)
    for i in range(3):
        np.testing.assert_allclose(batched[i], f(xs[i]), rtol=1e-5, atol=1e-6)
    padded = graphs.pad_edges(g, g.senders.shape[0] + 5)
    np.testing.assert_allclose(
        diffusion.gadc(padded, xs[0], lam=1.0, eps=0.5, num_terms=4, phi="cosine"),
        f(xs[0]),
        rtol=1e-5,
        atol=1e-6,
    )


def test_no_recompile_for_same_padded_size():
    rng = np.random.default_rng(5)
    traces = []

    @jax.jit
    def run(graph, x):
        traces.append(1)
        return diffusion.gadc(graph, x, lam=1.0, num_terms=3, phi="limit")

    for seed in range(3):
        _, g = _random_graph(np.random.default_rng(seed))
        run(graphs.pad_edges(g, 80), _features(rng))
    assert len(traces) == 1


def test_grads():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(6)
        _, g = _random_graph(rng)
        x = jnp.asarray(_features(rng) + 0.1)
        f = lambda x, lam: diffusion.gadc(g, x, lam=lam, eps=0.3, num_terms=3, phi="gram")
        check_grads(f, (x, 2.0), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)
