"""The two-step task builder on synthetic tiles (no dataset needed)."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.data.two_step import TwoStepSources, two_step_batch

T = 4
# Indicator i is a tile filled with (i + 1) / 2; target j a tile filled with j / 10.
SOURCES = TwoStepSources(
    indicators=jnp.stack([jnp.full((T, T), 0.5), jnp.full((T, T), 1.0)]),
    indicator_labels=jnp.array([0, 1]),
    targets=jnp.stack([jnp.full((T, T), j / 10) for j in range(10)]),
    target_labels=jnp.arange(10),
)


def test_label_rule_layout_and_determinism():
    images, labels, same = two_step_batch(jax.random.key(0), SOURCES, 64, color_noise=0.0)
    images, labels, same = map(np.asarray, (images, labels, same))
    assert images.shape == (64, 2 * T, 2 * T, 3)
    top_right = np.rint(images[:, 0, T, 0] * 10).astype(int)  # white targets: class / 10
    bottom_left = np.rint(images[:, T, 0, 0] * 10).astype(int)
    np.testing.assert_array_equal(labels, np.where(same == 1, top_right, bottom_left))
    # Indicators are tinted: channel ratios equal across the tile, brightness ∝ the digit.
    tl, br = images[:, :T, :T], images[:, T:, T:]
    np.testing.assert_allclose(tl.std(axis=(1, 2)), 0.0, atol=1e-6)
    assert 0 < same.mean() < 1
    again = two_step_batch(jax.random.key(0), SOURCES, 64, color_noise=0.0)
    np.testing.assert_array_equal(np.asarray(again[0]), images)
    assert br.shape == tl.shape


def test_indicator_noise_only_touches_indicators():
    clean = np.asarray(two_step_batch(jax.random.key(1), SOURCES, 8, 0.0, 0.0)[0])
    noisy = np.asarray(two_step_batch(jax.random.key(1), SOURCES, 8, 0.0, 0.5)[0])
    np.testing.assert_array_equal(noisy[:, :T, T:], clean[:, :T, T:])
    np.testing.assert_array_equal(noisy[:, T:, :T], clean[:, T:, :T])
    assert np.abs(noisy[:, :T, :T] - clean[:, :T, :T]).max() > 0.1


def test_colours_follow_the_reference_task():
    """Indicators blue or red (independent of the digit), targets white; colour noise is
    one N(0, σ²) draw per tile and channel, not per pixel (reference code)."""
    images = np.asarray(two_step_batch(jax.random.key(2), SOURCES, 512, color_noise=0.0)[0])
    for tile in (images[:, :T, :T], images[:, T:, T:]):
        rgb = tile[:, 0, 0] / np.max(tile[:, 0, 0], axis=-1, keepdims=True)
        blue = np.all(rgb == [0, 0, 1], axis=-1)
        red = np.all(rgb == [1, 0, 0], axis=-1)
        assert np.all(blue | red)
        assert 0.4 < blue.mean() < 0.6
    for tile in (images[:, :T, T:], images[:, T:, :T]):  # targets: equal channels
        np.testing.assert_allclose(tile[..., 0], tile[..., 2])
    sigma = 0.05
    noisy = np.asarray(two_step_batch(jax.random.key(3), SOURCES, 2048, color_noise=sigma)[0])
    target = noisy[:, :T, T:]  # top-right target: grey j / 10 times (1 + noise) per channel
    np.testing.assert_allclose(target.std(axis=(1, 2)), 0.0, atol=1e-6)  # one draw per tile
    keep = target[:, 0, 0, 0] > 0.05  # class-0 targets are black
    grey = np.rint(target[keep, 0, 0, :].mean(-1) * 10)[:, None] / 10
    colour = target[keep, 0, 0, :] / grey
    assert abs(colour.std() - sigma) < 0.01


def test_tfds_sources_from_mock_mnist_and_fashion_mnist():
    from jaxlab.data.streaming import datasets_read, mock_datasets
    from jaxlab.data.two_step import load_two_step_sources_tfds

    datasets_read(clear=True)
    with mock_datasets(64):
        src = load_two_step_sources_tfds("train", tile=28)
        small = load_two_step_sources_tfds("test", tile=14)
    assert {d["name"] for d in datasets_read()} == {"mnist", "fashion_mnist"}
    assert src.indicators.shape[1:] == (28, 28) and src.targets.shape == (64, 28, 28)
    assert small.targets.shape == (64, 14, 14)
    assert set(np.unique(np.asarray(src.indicator_labels))) <= {0, 1}
    for tiles in (src.indicators, src.targets):
        assert 0.0 <= float(tiles.min()) and float(tiles.max()) <= 1.0
