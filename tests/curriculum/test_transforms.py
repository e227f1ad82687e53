"""noisy_labels and imbalance against counting references."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxlab.curriculum import imbalance, noisy_labels


def test_noisy_labels_flip_rate_and_always_different():
    y = jnp.asarray(np.random.default_rng(0).integers(0, 10, 20000), jnp.int32)
    z = np.asarray(noisy_labels(y, 0.4, 10, jax.random.key(1)))
    changed = z != np.asarray(y)
    # Binomial(20000, 0.4): 4 standard deviations.
    assert abs(changed.mean() - 0.4) < 4 * np.sqrt(0.4 * 0.6 / 20000)
    assert z.min() >= 0 and z.max() < 10
    # Among flipped labels of class 3, the new class is uniform over the other 9 classes.
    new = z[changed & (np.asarray(y) == 3)]
    counts = np.bincount(new, minlength=10)
    assert counts[3] == 0
    assert stats.chisquare(counts[np.arange(10) != 3]).pvalue > 1e-3


def test_noisy_labels_deterministic_and_jittable():
    y = jnp.arange(100) % 5
    a = noisy_labels(y, 0.3, 5, jax.random.key(7))
    b = jax.jit(noisy_labels, static_argnums=(1, 2))(y, 0.3, 5, jax.random.key(7))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(noisy_labels(y, 0.0, 5, jax.random.key(7)), y)


def test_imbalance_follows_mu_power_c():
    c, per_class, ratio = 10, 5000, 50.0
    y = jnp.repeat(jnp.arange(c), per_class)
    kept = imbalance(y, ratio, c, jax.random.key(0))
    assert np.all(np.diff(kept) > 0)
    counts = np.bincount(np.asarray(y)[kept], minlength=c)
    mu = (1 / ratio) ** (1 / (c - 1))
    expected = per_class * mu ** np.arange(c)
    sd = np.sqrt(per_class * mu ** np.arange(c) * (1 - mu ** np.arange(c))) + 1e-9
    assert np.all(np.abs(counts - expected) <= 4 * sd + 1e-6)
    assert counts[0] == per_class
    np.testing.assert_array_equal(kept, imbalance(y, ratio, c, jax.random.key(0)))


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_noise_rate_out_of_range(p):
    with pytest.raises(ValueError, match="p must"):
        noisy_labels(jnp.zeros(3, jnp.int32), p, 10, jax.random.key(0))


def test_traced_noise_rate_is_unchecked_not_an_error():
    y = jnp.arange(6, dtype=jnp.int32) % 3
    flip = jax.jit(lambda p: noisy_labels(y, p, 3, jax.random.key(2)))
    np.testing.assert_array_equal(flip(0.0), y)
    np.testing.assert_array_equal(flip(0.3), noisy_labels(y, 0.3, 3, jax.random.key(2)))


def test_imbalance_bad_ratio_and_shape():
    with pytest.raises(ValueError, match="ratio"):
        imbalance(jnp.zeros(3, jnp.int32), 0.5, 10, jax.random.key(0))
    with pytest.raises(ValueError, match="labels"):
        imbalance(jnp.zeros((3, 2), jnp.int32), 10.0, 10, jax.random.key(0))
