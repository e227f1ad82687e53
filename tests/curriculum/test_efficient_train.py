"""EfficientTrain: the low-frequency crop against the reference's crop-then-resize path."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.curriculum import efficient_train, low_frequency_crop, rand_augment
from jaxlab.curriculum.efficient_train import efficient_train_stage

RNG = np.random.default_rng(0)
IMAGES = RNG.normal(size=(2, 12, 12, 3)).astype(np.float32)


def reference_crop(image, band):
    """The reference's crop of the four spectrum corners, its (B/n)² scaling and B×B
    inverse transform, then a Fourier (zero-padded spectrum) resize back to n×n."""
    n, b = image.shape[0], band // 2
    f = np.fft.fft2(image)
    crop = np.zeros((2 * b, 2 * b), complex)
    crop[:b, :b], crop[-b:, :b] = f[:b, :b], f[-b:, :b]
    crop[:b, -b:], crop[-b:, -b:] = f[:b, -b:], f[-b:, -b:]
    small = np.real(np.fft.ifft2(crop * (2 * b / n) ** 2))
    g = np.fft.fft2(small)
    big = np.zeros((n, n), complex)
    big[:b, :b], big[-b:, :b], big[:b, -b:], big[-b:, -b:] = (
        g[:b, :b],
        g[-b:, :b],
        g[:b, -b:],
        g[-b:, -b:],
    )
    return np.real(np.fft.ifft2(big * (n / (2 * b)) ** 2))


def _without_edge(image, b):
    """``image`` with the spectrum rows/columns at ``|k| = b`` (the band's edge) zeroed."""
    f = np.fft.fft2(image)
    f[[b, -b], :] = 0.0
    f[:, [b, -b]] = 0.0
    return np.real(np.fft.ifft2(f))


@pytest.mark.parametrize("band", [2, 4, 6, 8, 10])
def test_crop_matches_reference_path(band):
    # At the band's edge |k| = B/2 the reference keeps the -B/2 terms and takes the real
    # part of the B×B image (an aliased Nyquist term) - the two paths differ only there,
    # so the inputs carry no energy at the edge; everything else must agree exactly.
    x = np.stack(
        [
            np.stack(
                [
                    _without_edge(IMAGES[i, :, :, ch].astype(np.float64), band // 2)
                    for ch in range(3)
                ],
                -1,
            )
            for i in range(2)
        ]
    )
    got = np.asarray(low_frequency_crop(x.astype(np.float32), band))
    for i in range(2):
        for ch in range(3):
            np.testing.assert_allclose(
                got[i, :, :, ch], reference_crop(x[i, :, :, ch], band), atol=1e-5
            )
    # Invariants: the full band is the identity; a low cosine passes, a high one vanishes.
    np.testing.assert_allclose(low_frequency_crop(IMAGES, 12), IMAGES, atol=1e-5)
    r = np.arange(12)
    low = np.cos(2 * np.pi * r / 12)[:, None] * np.ones((1, 12))
    high = np.cos(2 * np.pi * 5 * r / 12)[:, None] * np.ones((1, 12))
    x = np.stack([low, high])[..., None].astype(np.float32)
    y = np.asarray(low_frequency_crop(x, 6))
    np.testing.assert_allclose(y[0], x[0], atol=1e-5)
    np.testing.assert_allclose(y[1], 0.0, atol=1e-5)


def test_crop_band_is_traced_once():
    f = jax.jit(chex.assert_max_traces(low_frequency_crop, n=1))
    for band in (2, 4, 12):
        f(IMAGES, jnp.int32(band))
    with pytest.raises(ValueError, match="images"):
        low_frequency_crop(IMAGES[0], 4)


def test_rand_augment_ops():
    x = jnp.asarray(IMAGES)
    np.testing.assert_allclose(rand_augment(x, 0.0, jax.random.key(0)), x, atol=1e-6)
    y = np.asarray(rand_augment(x, 10.0, jax.random.key(1), num_ops=1))
    assert y.shape == x.shape and np.all(np.isfinite(y))
    for i in range(2):  # each image: translated (zero fill), scaled, or contrast-changed
        a, b = IMAGES[i], y[i]
        shifted = [
            np.allclose(b[:, 5:], a[:, :-5]),
            np.allclose(b[:, :-5], a[:, 5:]),
            np.allclose(b[5:], a[:-5]),
            np.allclose(b[:-5], a[5:]),
        ]
        m = a.mean()
        photometric = [
            np.allclose(b, a * f, atol=1e-5) or np.allclose(b, m + (a - m) * f, atol=1e-5)
            for f in (0.1, 1.9)
        ]
        assert any(shifted) or any(photometric) or np.allclose(b, a)


def test_stages_and_hooks():
    for e in range(10):  # the reference's e_list / b_list at 28 px over 10 epochs
        j = min(e // 2, 4)
        assert efficient_train_stage(e, 10, 28) == ([20, 20, 20, 24, 28][j], 2 * j + 1)
    c = efficient_train()
    assert c.vision_only
    state = c.model_prepare(c.data_prepare(4, 2, jax.random.key(0)), None, 10)
    step = jax.jit(chex.assert_max_traces(lambda x, s, k: c.transform_inputs(x, s, k), n=1))
    x = jnp.asarray(RNG.normal(size=(3, 28, 28, 1)), jnp.float32)
    for e in range(10):
        state = c.data_curriculum(state, e, None)
        out = step(x, jax.tree.map(jnp.asarray, state), jax.random.key(e))
        assert out.shape == x.shape
    no_aug = efficient_train(augment=False)
    s = no_aug.model_prepare(no_aug.data_prepare(4, 2, jax.random.key(0)), None, 10)
    s = no_aug.data_curriculum(s, 0, None)
    np.testing.assert_allclose(
        no_aug.transform_inputs(x, s, jax.random.key(0)), low_frequency_crop(x, 20), atol=1e-6
    )
    with pytest.raises(ValueError, match="grow_epochs"):
        efficient_train(grow_epochs=0)


def test_vmap_over_bands():
    bands = jnp.array([2, 6, 12])
    got = jax.vmap(low_frequency_crop, in_axes=(None, 0))(IMAGES, bands)
    for b, out in zip((2, 6, 12), got, strict=True):
        np.testing.assert_allclose(out, low_frequency_crop(IMAGES, b), atol=1e-6)
