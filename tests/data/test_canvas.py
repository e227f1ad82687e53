import doctest

import numpy as np
import pytest

import jaxlab.data.canvas as canvas_mod
from jaxlab.data.canvas import textured_canvases


def test_items_are_pasted_at_their_offsets_with_exact_masks():
    rng = np.random.default_rng(0)
    items = rng.random((5, 7, 6)).astype(np.float32) * (rng.random((5, 7, 6)) > 0.3)
    images, masks, offsets = textured_canvases(
        items, seed=3, size=16, threshold=0.1, texture_amplitude=0.4
    )
    assert images.shape == (5, 16, 16, 1) and images.dtype == np.float32
    assert masks.shape == (5, 16, 16) and masks.dtype == bool
    for i, (r, c) in enumerate(offsets):
        assert 0 <= r <= 16 - 7 and 0 <= c <= 16 - 6
        keep = np.zeros((16, 16), bool)
        keep[r : r + 7, c : c + 6] = items[i] > 0.1
        np.testing.assert_array_equal(masks[i], keep)
        np.testing.assert_array_equal(
            images[i, r : r + 7, c : c + 6, 0][items[i] > 0.1], items[i][items[i] > 0.1]
        )
        background = images[i, ..., 0][~keep]
        assert background.min() >= 0 and background.max() <= 0.4 + 1e-6
        assert background.std() > 0.02  # textured, not flat


def test_deterministic_given_seed_and_positions_vary():
    items = np.ones((64, 4, 4))
    a = textured_canvases(items, seed=7, size=12)
    b = textured_canvases(items, seed=7, size=12)
    c = textured_canvases(items, seed=8, size=12)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    # Positions cover the allowed range roughly uniformly.
    assert set(np.unique(a[2][:, 0])) == set(range(0, 9))


def test_bad_inputs():
    with pytest.raises(ValueError, match="fit"):
        textured_canvases(np.ones((1, 30, 30)), seed=0, size=28)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        textured_canvases(np.full((1, 4, 4), 2.0), seed=0, size=8)
    with pytest.raises(ValueError, match="shape"):
        textured_canvases(np.ones((4, 4)), seed=0, size=8)


def test_doctests():
    result = doctest.testmod(canvas_mod, extraglobs={"np": np})
    assert result.failed == 0 and result.attempted > 0


def test_fashion_mnist_canvases_are_deterministic():
    from jaxlab.data.canvas import fashion_mnist_canvases

    a = fashion_mnist_canvases("test", 3, seed=0)
    b = fashion_mnist_canvases("test", 3, seed=0)
    assert a[0].shape == (3, 48, 48, 1) and a[1].shape == (3, 48, 48) and a[2].shape == (3,)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert 0.02 < a[1].mean() < 0.5  # the item covers part of the canvas
