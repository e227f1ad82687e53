"""Optimal denoiser against a dense numpy softmax and its σ → 0 limit; RP / memorization."""

import doctest
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxlab.diffusion.reproducibility as repro
from jaxlab.diffusion import (
    calibrate_threshold,
    memorization_score,
    nearest_neighbor_ratio,
    optimal_denoiser,
    pair_cosine,
    pca_embed,
    pca_proxy,
    reproducibility_score,
)
from tests.precision import assert_takes_precision

#: The kernel compared at float32 precision: its logits 2xᵀy − ‖y‖² cancel, and a GPU's
#: default TF32 products move the denoised points by up to ~1e-2 at small σ.
denoise = functools.partial(optimal_denoiser, precision="highest")


def test_denoiser_multiplies_at_the_precision_it_is_given():
    assert_takes_precision(optimal_denoiser, jnp.ones((2, 3)), 0.5, jnp.ones((5, 3)), count=2)


def np_optimal_denoiser(x, sigma, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    logits = -d2 / (2 * np.reshape(sigma, (-1, 1)) ** 2)
    w = np.exp(logits - logits.max(1, keepdims=True))
    return (w / w.sum(1, keepdims=True)) @ y


@pytest.mark.parametrize("chunk", [7, 64, 4096])
def test_matches_dense_numpy(chunk):
    rng = np.random.default_rng(0)
    y = rng.normal(size=(50, 6)).astype(np.float32)
    x = rng.normal(size=(5, 6)).astype(np.float32) * 2
    sigma = np.array([0.3, 0.7, 1.0, 3.0, 30.0], np.float32)
    got = denoise(x, sigma, y, chunk_size=chunk)
    np.testing.assert_allclose(got, np_optimal_denoiser(x, sigma, y), atol=1e-4)
    np.testing.assert_allclose(
        denoise(x, 1.5, y, chunk_size=chunk), np_optimal_denoiser(x, 1.5, y), atol=1e-4
    )


def test_small_sigma_limit_is_nearest_item_and_large_sigma_is_mean():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(40, 5)).astype(np.float32)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    nearest = y[np.argmin(((x[:, None] - y[None]) ** 2).sum(-1), axis=1)]
    for sigma in (1e-3, 1e-20):
        got = denoise(x, sigma, y, chunk_size=16)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, nearest, atol=1e-6)
    # Traced σ = 0 (no concrete check under jit) still gives the nearest item.
    got0 = jax.jit(lambda s: denoise(x, s, y, chunk_size=16))(jnp.float32(0.0))
    np.testing.assert_allclose(got0, nearest, atol=1e-6)
    np.testing.assert_allclose(denoise(x, 1e4, y), np.broadcast_to(y.mean(0), x.shape), atol=1e-4)


def test_one_item_vmap_grad():
    y = jnp.ones((1, 3))
    np.testing.assert_allclose(denoise(jnp.zeros((2, 3)), 0.1, y), jnp.ones((2, 3)))
    ys = jax.random.normal(jax.random.key(0), (10, 3))
    xs = jax.random.normal(jax.random.key(1), (4, 2, 3))
    batched = jax.vmap(lambda x: denoise(x, 0.5, ys, chunk_size=4))(xs)
    np.testing.assert_allclose(
        batched, np.stack([np_optimal_denoiser(x, 0.5, ys) for x in xs]), atol=1e-4
    )
    # ∂D*/∂x = Cov_w(y) / σ² (softmax Jacobian); check one entry by finite differences.
    g = jax.grad(lambda x: denoise(x, 0.8, ys)[0, 0])(xs[0])
    eps = 1e-3
    fd = (
        np_optimal_denoiser(np.asarray(xs[0]) + eps * np.eye(3)[None, 1], 0.8, ys)[0, 0]
        - np_optimal_denoiser(np.asarray(xs[0]) - eps * np.eye(3)[None, 1], 0.8, ys)[0, 0]
    )
    np.testing.assert_allclose(g[0, 1], fd / (2 * eps), rtol=2e-2, atol=1e-3)


def test_bad_inputs():
    y = jnp.ones((4, 3))
    with pytest.raises(ValueError, match="sigma"):
        optimal_denoiser(jnp.ones((2, 3)), 0.0, y)
    with pytest.raises(ValueError, match="sigma"):
        optimal_denoiser(jnp.ones((2, 3)), jnp.ones(3), y)
    with pytest.raises(ValueError, match="finite"):
        optimal_denoiser(jnp.array([[np.nan, 0.0, 0.0]]), 1.0, y)
    with pytest.raises(ValueError, match="train_set"):
        optimal_denoiser(jnp.ones((2, 3)), 1.0, jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="train_set"):
        optimal_denoiser(jnp.ones((2, 3)), 1.0, jnp.ones((0, 3)))
    with pytest.raises(ValueError, match="features_b"):
        reproducibility_score(jnp.ones((3, 2)), jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="train_set"):
        nearest_neighbor_ratio(jnp.ones((3, 2)), jnp.ones((1, 2)))


def test_scores_against_numpy():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(200, 8)), rng.normal(size=(200, 8))
    b[:120] = a[:120] + 0.1 * rng.normal(size=(120, 8))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(reproducibility_score(a, b, 0.6), np.mean(cos > 0.6), atol=1e-6)
    np.testing.assert_allclose(pair_cosine(a, b), cos, rtol=1e-5, atol=1e-6)
    train = rng.normal(size=(30, 8))
    sims = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (
        train / np.linalg.norm(train, axis=1, keepdims=True)
    ).T
    np.testing.assert_allclose(
        memorization_score(a, train, 0.5), np.mean(sims.max(1) > 0.5), atol=1e-6
    )
    dist = np.linalg.norm(a[:, None] - train[None], axis=-1)
    dist.sort(axis=1)
    np.testing.assert_allclose(nearest_neighbor_ratio(a, train), dist[:, 0] / dist[:, 1], rtol=1e-3)


def test_pca_proxy_and_calibration_separate_copies():
    rng = np.random.default_rng(3)
    y = rng.normal(size=(100, 16)) @ rng.normal(size=(16, 16))
    proxy = pca_proxy(y, 8)
    from sklearn.decomposition import PCA

    ref = PCA(8).fit(y)
    np.testing.assert_allclose(np.abs(proxy.components @ ref.components_.T), np.eye(8), atol=1e-3)
    items = pca_embed(proxy, y)
    copies = pca_embed(proxy, y + 0.05 * y.std() * rng.normal(size=y.shape))
    tau = calibrate_threshold(items, copies)
    assert float(reproducibility_score(items, copies, tau)) > 0.9
    assert float(reproducibility_score(items, np.roll(items, 1, axis=0), tau)) < 0.1


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(repro, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
