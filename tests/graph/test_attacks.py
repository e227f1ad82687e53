"""Attacks respect their budgets and never produce invalid graphs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph import attacks


def _adj(n=20, p=0.2, seed=0):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    return (upper | upper.T).astype(np.float32)


def _flipped_pairs(a, b):
    return int(np.sum(np.triu(np.abs(np.asarray(a) - np.asarray(b)), 1)))


def test_random_edge_flips_budget_and_symmetry():
    a = _adj()
    num_edges = int(np.triu(a, 1).sum())
    out = np.asarray(attacks.random_edge_flips(jax.random.key(0), a, 0.5))
    assert _flipped_pairs(a, out) == int(0.5 * num_edges)
    np.testing.assert_array_equal(out, out.T)
    assert set(np.unique(out)) <= {0.0, 1.0} and np.all(np.diag(out) == 0)


def test_pgd_attack_budget_and_increases_loss():
    a = _adj(n=16)
    target = np.random.default_rng(1).random((16, 16)).astype(np.float32)
    # A toy objective: the attacker wants A' close to a random target.
    loss_fn = lambda adj: -jnp.sum((adj - target) ** 2)
    out = attacks.pgd_structure_attack(jax.random.key(0), a, loss_fn, 0.2, steps=30)
    budget = int(0.2 * np.triu(a, 1).sum())
    assert 0 < _flipped_pairs(a, out) <= budget
    np.testing.assert_array_equal(out, np.asarray(out).T)
    assert float(loss_fn(out)) > float(loss_fn(jnp.asarray(a)))


def test_projection_onto_budget():
    s = jnp.asarray(np.random.default_rng(2).random(50) * 3 - 1, jnp.float32)
    proj = attacks._project_budget(s, 4.0)
    assert float(jnp.sum(proj)) <= 4.0 + 1e-3
    assert float(proj.min()) >= 0.0 and float(proj.max()) <= 1.0


def test_feature_noise():
    x = (np.random.default_rng(3).random((200, 50)) < 0.3).astype(np.float32)
    flipped = np.asarray(attacks.flip_feature_noise(jax.random.key(0), x, 0.4))
    assert abs(np.mean(flipped != x) - 0.4) < 0.02
    noisy = np.asarray(attacks.gaussian_feature_noise(jax.random.key(1), x, 0.5))
    assert abs(np.std(noisy - x) - 0.5) < 0.02
    with pytest.raises(ValueError, match="p must"):
        attacks.flip_feature_noise(jax.random.key(0), x, 1.5)
    with pytest.raises(ValueError, match="square"):
        attacks.random_edge_flips(jax.random.key(0), x, 0.1)
