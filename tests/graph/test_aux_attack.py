"""Aux-Attack kernels against independent references: numpy, finite differences, brute force."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.graph import aux_attack as aa


def _graph(n=7, p=0.35, seed=0):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    return (upper | upper.T).astype(np.float32)


def _np_gcn(params, adj, x, relu=False):
    """Kipf & Welling's GCN written out with an explicit degree loop (numpy, float64)."""
    a = np.asarray(adj, np.float64) + np.eye(adj.shape[0])
    deg = np.array([a[i].sum() for i in range(a.shape[0])])
    a_hat = a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
    w0, b0, w1, b1 = (np.asarray(v, np.float64) for v in params)
    h = a_hat @ x @ w0 + b0
    h = np.maximum(h, 0) if relu else h
    return a_hat @ h @ w1 + b1


def _exact_projection(s, budget):
    """Projection onto {0 <= p <= 1, sum p <= B} from the sorted breakpoints of the shift."""
    s = np.asarray(s, np.float64).ravel()
    if np.clip(s, 0, 1).sum() <= budget:
        return np.clip(s, 0, 1)
    used = lambda mu: np.clip(s - mu, 0, 1).sum()  # noqa: E731
    knots = np.unique(np.concatenate([s, s - 1.0, [0.0]]))
    knots = knots[knots >= 0]
    vals = np.array([used(k) for k in knots])  # non-increasing in mu
    i = np.nonzero(vals <= budget)[0][0]
    lo, hi = knots[i - 1], knots[i]
    mu = lo + (vals[i - 1] - budget) / (vals[i - 1] - vals[i]) * (hi - lo)  # linear between knots
    return np.clip(s - mu, 0, 1)


@pytest.mark.parametrize("relu", [False, True])
def test_gcn_logits_matches_numpy(relu):
    adj = _graph()
    x = np.random.default_rng(1).random((7, 4)).astype(np.float32)
    params = aa.init_gcn(jax.random.key(0), 4, 5, 3)
    params = params._replace(b0=jnp.linspace(-1, 1, 5), b1=jnp.array([0.3, -0.2, 0.1]))
    out = aa.gcn_logits(params, adj, x, activation="relu" if relu else "none")
    np.testing.assert_allclose(out, _np_gcn(params, adj, x, relu), rtol=1e-5, atol=1e-6)


def test_gcn_gradient_in_relaxed_adjacency_matches_finite_differences():
    adj = _graph(n=5)
    x = np.random.default_rng(2).random((5, 3))
    labels, mask = jnp.array([0, 1, 1, 0, 1]), jnp.array([1, 1, 0, 1, 1], bool)
    with jax.enable_x64(True):
        params = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64),
                              aa.init_gcn(jax.random.key(1), 3, 4, 2))
        flips0 = jnp.asarray(np.random.default_rng(3).random((5, 5)) * 0.5)
        f = lambda fl: aa.tanh_margin_loss(  # noqa: E731
            aa.gcn_logits(params, aa.flip_edges(jnp.asarray(adj, jnp.float64), fl),
                          jnp.asarray(x)), labels, mask)
        check_grads(f, (flips0,), order=1, modes=("rev",), eps=1e-6)


def test_margin_and_loss_against_loops():
    rng = np.random.default_rng(4)
    z, y = rng.normal(size=(6, 4)), rng.integers(0, 4, 6)
    ref = [z[i, y[i]] - max(z[i, c] for c in range(4) if c != y[i]) for i in range(6)]
    np.testing.assert_allclose(aa.margin(z, y), ref, rtol=1e-6)
    mask = np.array([1, 0, 1, 1, 0, 1], bool)
    np.testing.assert_allclose(aa.tanh_margin_loss(z, y, mask), np.tanh(ref)[mask].mean(),
                               rtol=1e-6)


@pytest.mark.parametrize("budget", [0.5, 3.0, 40.0, 200.0])
def test_projection_matches_exact_projection(budget):
    s = np.random.default_rng(5).normal(0.3, 1.5, (12, 12)).astype(np.float32)
    got = np.asarray(aa.project_flip_budget(s, budget))
    np.testing.assert_allclose(got.ravel(), _exact_projection(s, budget), atol=2e-5)
    assert got.min() >= 0 and got.max() <= 1 and got.sum() <= budget + 1e-3


def test_attack_finds_the_brute_force_optimum_of_a_linear_loss():
    n, budget = 6, 2
    w = np.random.default_rng(6).normal(size=(n, n))
    w = (w + w.T) / 2
    loss_fn = lambda p: jnp.sum(jnp.asarray(w, jnp.float32) * p)  # noqa: E731
    flips, loss = jax.jit(lambda k: aa.pgd_flip_attack(k, loss_fn, n, budget, iterations=50,
                                                       sampling_tries=10))(jax.random.key(0))
    pairs = list(itertools.combinations(range(n), 2))
    best = min(sum(2 * w[i, j] for i, j in chosen) for r in range(budget + 1)
               for chosen in itertools.combinations(pairs, r))
    np.testing.assert_allclose(float(loss), best, rtol=1e-5)
    np.testing.assert_allclose(float(loss), float(loss_fn(flips)), rtol=1e-6)


def test_attack_on_a_gcn_beats_every_single_flip_and_respects_the_budget():
    n = 8
    adj = jnp.asarray(_graph(n=n, seed=7))
    x = jnp.asarray(np.random.default_rng(8).random((n, 3)), jnp.float32)
    params = aa.init_gcn(jax.random.key(2), 3, 4, 2)
    labels = jnp.argmax(aa.gcn_logits(params, adj, x), -1)  # all correct before the attack
    mask = jnp.ones((n,), bool)
    loss_fn = lambda fl: aa.tanh_margin_loss(  # noqa: E731
        aa.gcn_logits(params, aa.flip_edges(adj, fl), x), labels, mask)
    flips, loss = jax.jit(lambda k: aa.pgd_flip_attack(
        k, loss_fn, n, 3, iterations=100, sampling_tries=50, max_candidates=10))(jax.random.key(3))
    f = np.asarray(flips)
    np.testing.assert_array_equal(f, f.T)
    assert set(np.unique(f)) <= {0.0, 1.0} and np.all(np.diag(f) == 0)
    assert np.triu(f, 1).sum() <= 3
    singles = []
    for i, j in itertools.combinations(range(n), 2):
        e = np.zeros((n, n), np.float32)
        e[i, j] = e[j, i] = 1
        singles.append(float(loss_fn(jnp.asarray(e))))
    assert float(loss) <= min(singles) + 1e-6  # three flips do at least as well as one
    np.testing.assert_allclose(float(loss), float(loss_fn(flips)), rtol=1e-5)


def test_attack_vmaps_over_keys():
    w = jnp.asarray(np.random.default_rng(9).normal(size=(5, 5)), jnp.float32)
    run = jax.jit(jax.vmap(lambda k: aa.pgd_flip_attack(k, lambda p: jnp.sum(w * p), 5, 2,
                                                iterations=5, sampling_tries=3)[1]))
    assert run(jax.random.split(jax.random.key(0), 3)).shape == (3,)


def test_bad_inputs():
    with pytest.raises(ValueError, match="budget"):
        aa.pgd_flip_attack(jax.random.key(0), jnp.sum, 4, 0)
    with pytest.raises(ValueError, match="budget"):
        aa.project_flip_budget(jnp.ones(3), 0.0)
    with pytest.raises(ValueError, match="adj"):
        aa.gcn_logits(aa.init_gcn(jax.random.key(0), 2, 2, 2), jnp.ones((3, 2)), jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="labels"):
        aa.margin(jnp.ones((3, 2)), jnp.ones((2,), jnp.int32))
    with pytest.raises(ValueError, match="shape"):
        aa.flip_edges(jnp.ones((3, 3)), jnp.ones((2, 2)))
