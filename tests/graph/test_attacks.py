"""The PGD structure attack and its pieces against independent references.

References: a sort-based exact projection in numpy, brute force over flip sets, loops over
nodes for the margin, and finite differences for the gradient in the relaxed adjacency.
The GCN attack runs under ``jax.default_matmul_precision("highest")`` (``docs/precision.md``).
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.graph import attacks
from jaxlab.graph.dense import dense_gcn_propagate
from jaxlab.graph.models import GCN


def _adj(n=20, p=0.2, seed=0):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    return (upper | upper.T).astype(np.float32)


def _flipped_pairs(a, b):
    return int(np.sum(np.triu(np.abs(np.asarray(a) - np.asarray(b)), 1)))


def _sorted_projection(s, budget):
    """Exact projection onto {0 <= p <= 1, sum p <= B}: sort the 2m breakpoints of the
    piecewise-linear ``g(μ) = Σ clip(s − μ, 0, 1)`` and interpolate on the segment where
    ``g`` crosses ``B``."""
    s = np.asarray(s, np.float64).ravel()
    if np.clip(s, 0, 1).sum() <= budget:
        return np.clip(s, 0, 1)
    knots = np.sort(np.concatenate([s, s - 1.0]))
    used = np.array([np.clip(s - k, 0, 1).sum() for k in knots])  # non-increasing
    i = int(np.argmax(used <= budget))  # first knot at or below the budget
    lo, hi = knots[i - 1], knots[i]
    mu = lo + (used[i - 1] - budget) / (used[i - 1] - used[i]) * (hi - lo)
    return np.clip(s - mu, 0, 1)


def test_random_edge_flips_budget_and_symmetry():
    a = _adj()
    num_edges = int(np.triu(a, 1).sum())
    out = np.asarray(attacks.random_edge_flips(jax.random.key(0), a, 0.5))
    assert _flipped_pairs(a, out) == int(0.5 * num_edges)
    np.testing.assert_array_equal(out, out.T)
    assert set(np.unique(out)) <= {0.0, 1.0} and np.all(np.diag(out) == 0)


@pytest.mark.parametrize("budget", [0.0, 0.5, 3.0, 40.0, 200.0])
def test_projection_matches_sorted_exact_projection(budget):
    s = np.random.default_rng(5).normal(0.3, 1.5, (12, 12)).astype(np.float32)
    got = np.asarray(attacks.project_flip_budget(s, budget))
    np.testing.assert_allclose(got.ravel(), _sorted_projection(s, budget), atol=2e-5)
    assert got.min() >= 0 and got.max() <= 1 and got.sum() <= budget + 1e-3


def test_margin_and_loss_against_loops():
    rng = np.random.default_rng(4)
    z, y = rng.normal(size=(6, 4)), rng.integers(0, 4, 6)
    ref = [z[i, y[i]] - max(z[i, c] for c in range(4) if c != y[i]) for i in range(6)]
    np.testing.assert_allclose(attacks.margin(z, y), ref, rtol=1e-6)
    mask = np.array([1, 0, 1, 1, 0, 1], bool)
    np.testing.assert_allclose(
        attacks.tanh_margin_loss(z, y, mask), np.tanh(ref)[mask].mean(), rtol=1e-6
    )


def _brute_force(w, adj, budget, sign):
    """The best sign·Σ w ⊙ A' over every flip set of at most ``budget`` pairs."""
    n = adj.shape[0]
    best = np.inf
    for r in range(budget + 1):
        for chosen in itertools.combinations(itertools.combinations(range(n), 2), r):
            a = adj.copy()
            for i, j in chosen:
                a[i, j] = a[j, i] = 1 - a[i, j]
            best = min(best, sign * float(np.sum(w * a)))
    return sign * best


@pytest.mark.parametrize("objective,sign", [("minimize", 1.0), ("maximize", -1.0)])
def test_attack_finds_the_brute_force_optimum_of_a_linear_loss(objective, sign):
    n, budget = 6, 2
    w = np.random.default_rng(6).normal(size=(n, n))
    w = ((w + w.T) / 2).astype(np.float32)
    adj = _adj(n=n, p=0.4, seed=3)
    loss_fn = lambda a: jnp.sum(jnp.asarray(w) * a)  # noqa: E731
    out, loss = jax.jit(
        lambda k: attacks.pgd_structure_attack(
            k,
            adj,
            loss_fn,
            budget,
            objective=objective,
            budget_form="flips",
            iterations=50,
            base_lr=0.1,
            sampling_tries=10,
            max_draws=100,
        )
    )(jax.random.key(0))
    np.testing.assert_allclose(float(loss), _brute_force(w, adj, budget, sign), rtol=1e-5)
    np.testing.assert_allclose(float(loss), float(loss_fn(out)), rtol=1e-6)
    assert _flipped_pairs(adj, out) <= budget


def test_rate_budget_and_maximized_loss_increases():
    a = _adj(n=16)
    target = np.random.default_rng(1).random((16, 16)).astype(np.float32)
    loss_fn = lambda adj: -jnp.sum((adj - target) ** 2)  # noqa: E731
    out, _ = attacks.pgd_structure_attack(
        jax.random.key(0),
        a,
        loss_fn,
        0.2,
        objective="maximize",
        budget_form="rate",
        iterations=30,
        base_lr=0.1,
        sampling_tries=5,
        max_draws=20,
    )
    budget = int(0.2 * np.triu(a, 1).sum())
    assert budget == attacks.edge_budget(a, 0.2)
    assert 0 < _flipped_pairs(a, out) <= budget
    np.testing.assert_array_equal(out, np.asarray(out).T)
    assert float(loss_fn(out)) > float(loss_fn(jnp.asarray(a)))


def _np_gcn(params, adj, x):
    """The linear two-layer GCN written out with an explicit degree loop (numpy)."""
    a = np.asarray(adj, np.float64) + np.eye(adj.shape[0])
    deg = np.array([a[i].sum() for i in range(a.shape[0])])
    a_hat = a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
    p = {k: np.asarray(v, np.float64) for k, v in params["params"].items()}
    return a_hat @ (a_hat @ x @ p["w0"] + p["b0"]) @ p["w1"] + p["b1"]


def test_aux_attack_on_a_gcn_beats_every_single_flip_and_respects_the_budget():
    # Float32 products: a GPU's default TF32 misses the numpy GCN by ~1e-3.
    with jax.default_matmul_precision("highest"):
        n = 8
        adj = jnp.asarray(_adj(n=n, p=0.35, seed=7))
        x = jnp.asarray(np.random.default_rng(8).random((n, 3)), jnp.float32)
        module = GCN(4, 2, 0.5, activation="none", input_dropout=False, init_scheme="glorot")
        params = module.init(jax.random.key(2), x, dense_gcn_propagate(adj), train=False)

        def logits(a):
            return module.apply(params, x, dense_gcn_propagate(a), train=False)

        np.testing.assert_allclose(
            logits(adj), _np_gcn(params, adj, np.asarray(x)), rtol=1e-4, atol=1e-5
        )
        labels = jnp.argmax(logits(adj), -1)  # all correct before the attack
        mask = jnp.ones((n,), bool)
        loss_fn = lambda a: attacks.tanh_margin_loss(logits(a), labels, mask)  # noqa: E731
        out, loss = jax.jit(
            lambda k: attacks.pgd_structure_attack(
                k,
                adj,
                loss_fn,
                3,
                objective="minimize",
                budget_form="flips",
                iterations=100,
                base_lr=0.1,
                sampling_tries=50,
                max_draws=100,
                max_candidates=10,
            )
        )(jax.random.key(3))
        f = np.asarray(out)
        np.testing.assert_array_equal(f, f.T)
        assert set(np.unique(f)) <= {0.0, 1.0} and np.all(np.diag(f) == 0)
        assert _flipped_pairs(adj, f) <= 3
        singles = []
        for i, j in itertools.combinations(range(n), 2):
            e = np.zeros((n, n), np.float32)
            e[i, j] = e[j, i] = 1
            singles.append(float(loss_fn(attacks.flip_edges(adj, e))))
        assert float(loss) <= min(singles) + 1e-6  # three flips do at least as well as one
        np.testing.assert_allclose(float(loss), float(loss_fn(out)), rtol=1e-5)


def test_gcn_gradient_in_relaxed_adjacency_matches_finite_differences():
    adj = _adj(n=5, p=0.4)
    x = np.random.default_rng(2).random((5, 3))
    labels, mask = jnp.array([0, 1, 1, 0, 1]), jnp.array([1, 1, 0, 1, 1], bool)
    module = GCN(4, 2, 0.0, activation="none", input_dropout=False, init_scheme="glorot")
    with jax.enable_x64(True):
        xj = jnp.asarray(x)
        params = jax.tree.map(
            lambda v: jnp.asarray(v, jnp.float64),
            module.init(jax.random.key(1), xj, dense_gcn_propagate(jnp.asarray(adj)), train=False),
        )
        flips0 = jnp.asarray(np.random.default_rng(3).random((5, 5)) * 0.5)

        def f(fl):
            a = attacks.flip_edges(jnp.asarray(adj, jnp.float64), fl)
            return attacks.tanh_margin_loss(
                module.apply(params, xj, dense_gcn_propagate(a), train=False), labels, mask
            )

        check_grads(f, (flips0,), order=1, modes=("rev",), eps=1e-6)


def test_attack_vmaps_over_keys():
    w = jnp.asarray(np.random.default_rng(9).normal(size=(5, 5)), jnp.float32)
    run = jax.jit(
        jax.vmap(
            lambda k: attacks.pgd_structure_attack(
                k,
                jnp.zeros((5, 5)),
                lambda a: jnp.sum(w * a),
                2,
                objective="minimize",
                budget_form="flips",
                iterations=5,
                base_lr=0.1,
                sampling_tries=3,
                max_draws=5,
            )[1]
        )
    )
    assert run(jax.random.split(jax.random.key(0), 3)).shape == (3,)


def test_feature_noise():
    x = (np.random.default_rng(3).random((200, 50)) < 0.3).astype(np.float32)
    flipped = np.asarray(attacks.flip_feature_noise(jax.random.key(0), x, 0.4))
    assert abs(np.mean(flipped != x) - 0.4) < 0.02
    noisy = np.asarray(attacks.gaussian_feature_noise(jax.random.key(1), x, 0.5))
    assert abs(np.std(noisy - x) - 0.5) < 0.02


def test_pseudo_labels():
    logits = jnp.array([[2.0, 0.0], [0.0, 1.0], [3.0, 0.0]])
    out = attacks.pseudo_labels(logits, jnp.array([1, 0, 1]), jnp.array([True, False, False]))
    assert out.tolist() == [1, 1, 0]
