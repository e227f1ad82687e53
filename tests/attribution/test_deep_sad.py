"""Deep SAD's centre, loss and score against numpy formulas; gradients and bad inputs."""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.test_util import check_grads

import jaxlab.attribution.deep_sad as deep_sad
from jaxlab.attribution import DeepSADNet, deep_sad_center, deep_sad_loss, deep_sad_score


def test_loss_and_score_match_numpy():
    rng = np.random.default_rng(0)
    reps = rng.normal(size=(12, 4)).astype(np.float32)
    c = rng.normal(size=4).astype(np.float32)
    labels = rng.integers(-1, 2, size=12)
    d = ((reps - c) ** 2).sum(1)
    terms = [
        di if y == 0 else 2.0 * (di + 1e-6) ** float(y) for di, y in zip(d, labels, strict=True)
    ]
    np.testing.assert_allclose(deep_sad_loss(reps, c, labels, eta=2.0), np.mean(terms), rtol=1e-5)
    np.testing.assert_allclose(deep_sad_score(reps, c), np.sqrt(d), rtol=1e-5)
    check_grads(
        lambda r: deep_sad_loss(r, c, labels),
        (jnp.asarray(reps),),
        order=1,
        modes=["rev"],
        atol=1e-2,
        rtol=1e-2,
    )


def test_center_and_bias_free_net():
    c = deep_sad_center(np.array([[0.05, 1.0, -0.02], [-0.05, 3.0, -0.04]]))
    np.testing.assert_allclose(c, [0.1, 2.0, -0.1])
    net = DeepSADNet((8, 4))
    params = net.init(jax.random.key(0), jnp.ones((2, 5)))
    assert all(
        "bias" not in str(path) for path, _ in jax.tree_util.tree_flatten_with_path(params)[0]
    )
    # Bias-free and leaky-ReLU: φ(0) = 0 and φ is positively homogeneous.
    x = jax.random.normal(jax.random.key(1), (3, 5))
    np.testing.assert_allclose(net.apply(params, 0 * x), 0.0)
    np.testing.assert_allclose(net.apply(params, 2 * x), 2 * net.apply(params, x), rtol=1e-5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="labels"):
        deep_sad_loss(jnp.ones((3, 2)), jnp.zeros(2), jnp.zeros(2))
    with pytest.raises(ValueError, match="center"):
        deep_sad_score(jnp.ones((3, 2)), jnp.zeros(3))
    with pytest.raises(ValueError, match="reps"):
        deep_sad_center(jnp.ones(3))


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(deep_sad, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
