"""Attacks against their formulas."""

import chex
import numpy as np
import pytest
from scipy.stats import norm

from jaxlab.robust import attacks


def honest_and_own(seed=0, h=9, f=8, d=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(h, d)), rng.normal(size=(f, d))


def test_alie_z_formula():
    for m, f in [(17, 8), (17, 4), (25, 12), (10, 3)]:
        s = np.floor(m / 2 + 1) - f
        expected = norm.ppf((m - f - s) / (m - f))
        assert attacks.alie_z(m, f) == pytest.approx(expected, rel=1e-6)
    assert attacks.alie_z(17, 8) == pytest.approx(1.22, abs=0.01)
    with pytest.raises(ValueError):
        attacks.alie_z(17, 9)


def test_alie_vectors():
    honest, own = honest_and_own()
    out = np.asarray(attacks.a_little_is_enough(honest, own, 17, 8))
    z = norm.ppf((9 - 1) / 9)
    expected = honest.mean(0) - z * honest.std(0, ddof=1)
    chex.assert_equal_shape([out, own])
    np.testing.assert_allclose(out, np.broadcast_to(expected, own.shape), rtol=1e-5)


def test_ipm_sign_flip_none_lf():
    honest, own = honest_and_own()
    out = np.asarray(attacks.inner_product_manipulation(honest, own, epsilon=0.5))
    np.testing.assert_allclose(out, np.broadcast_to(-0.5 * honest.mean(0), own.shape), rtol=1e-5)
    np.testing.assert_allclose(attacks.sign_flip(honest, own), -own)
    np.testing.assert_allclose(attacks.no_attack(honest, own), own)
    np.testing.assert_allclose(attacks.label_flip(honest, own), own)


def test_flip_labels():
    np.testing.assert_array_equal(attacks.flip_labels(np.array([0, 3, 9]), 10), [9, 6, 0])
    with pytest.raises(ValueError, match="integers"):
        attacks.flip_labels(np.array([0.5]), 10)


def test_pytree_attacks_and_registry():
    honest, own = honest_and_own()
    tree_h, tree_o = {"a": honest}, {"a": own}
    for name in ("none", "sf", "lf", "ipm", "alie"):
        out = attacks.get_attack(name, 17, 8)(tree_h, tree_o)
        chex.assert_equal_shape([out["a"], own])
    with pytest.raises(ValueError, match="unknown attack"):
        attacks.get_attack("xyz", 17, 8)
