"""Objects pasted on textured canvases, with ground-truth object masks (for locality metrics).

``textured_canvases`` pastes small grey-scale items (e.g. Fashion-MNIST) at random positions
on larger canvases of smooth noise plus random stripes; the item's pixels above a threshold
are pasted and form the ground-truth mask. Everything is drawn from one
``numpy.random.Generator`` seeded by ``seed``, so a seed fixes the data exactly.
"""

from __future__ import annotations

import os

import numpy as np
from scipy import ndimage

__all__ = ["fashion_mnist_canvases", "textured_canvases"]


def _textures(
    rng: np.random.Generator, n: int, size: int, cells: int, amplitude: float
) -> np.ndarray:
    """``[n, size, size]`` backgrounds in [0, amplitude]: smooth noise plus stripes."""
    coarse = rng.random((n, cells, cells))
    smooth = ndimage.zoom(coarse, (1, size / cells, size / cells), order=1)[:, :size, :size]
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    angle = rng.uniform(0, np.pi, n)[:, None, None]
    freq = rng.uniform(0.15, 0.6, n)[:, None, None]
    phase = rng.uniform(0, 2 * np.pi, n)[:, None, None]
    stripes = 0.5 + 0.5 * np.sin(freq * (np.cos(angle) * xx + np.sin(angle) * yy) + phase)
    return amplitude * (0.5 * smooth + 0.5 * stripes)


def textured_canvases(
    items: np.ndarray,
    seed: int,
    size: int = 48,
    threshold: float = 0.1,
    texture_amplitude: float = 0.5,
    texture_cells: int = 6,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pastes each item at a uniformly random position on its own textured canvas.

    Args:
      items: ``[n, h, w]`` or ``[n, h, w, 1]`` grey-scale items in [0, 1], h, w ≤ size.
      seed: fixes the textures and positions.
      size: canvas side S.
      threshold: item pixels above it are pasted and are the object mask.
      texture_amplitude: the background lies in [0, texture_amplitude].
      texture_cells: side of the coarse noise grid of the background.

    Returns:
      ``(images [n, S, S, 1] float32, masks [n, S, S] bool, offsets [n, 2] int)``:
      ``offsets[i] = (row, col)`` of the item's top-left corner.

    Example:
      >>> from jaxlab.data.canvas import textured_canvases
      >>> imgs, masks, offs = textured_canvases(np.ones((2, 4, 4)), seed=0, size=8)
      >>> imgs.shape, int(masks[0].sum())
      ((2, 8, 8, 1), 16)
    """
    items = np.asarray(items, dtype=np.float32)
    if items.ndim == 4 and items.shape[-1] == 1:
        items = items[..., 0]
    if items.ndim != 3:
        raise ValueError(f"items must have shape [n, h, w] or [n, h, w, 1]; got {items.shape}")
    n, h, w = items.shape
    if h > size or w > size:
        raise ValueError(f"items ({h}×{w}) must fit on the canvas (size={size})")
    if not (np.isfinite(items).all() and items.min() >= 0.0 and items.max() <= 1.0):
        raise ValueError("items must be finite and lie in [0, 1]")
    rng = np.random.default_rng(seed)
    images = _textures(rng, n, size, texture_cells, texture_amplitude).astype(np.float32)
    offsets = np.stack([rng.integers(0, size - h + 1, n), rng.integers(0, size - w + 1, n)], 1)
    masks = np.zeros((n, size, size), dtype=bool)
    for i, (r, c) in enumerate(offsets):
        keep = items[i] > threshold
        masks[i, r : r + h, c : c + w] = keep
        window = images[i, r : r + h, c : c + w]
        window[keep] = items[i][keep]
    return images[..., None], masks, offsets


def fashion_mnist_canvases(
    split: str, num: int, seed: int, data_dir: str | os.PathLike | None = None, **kwargs
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``num`` Fashion-MNIST items of ``split`` (drawn with ``seed``) on textured canvases.

    Returns ``(images [num, S, S, 1], masks [num, S, S], labels [num])``; ``kwargs`` go to
    ``textured_canvases``.
    """
    from jaxlab.data.images import load_images

    x, y = load_images("fashion_mnist", split, data_dir)
    if not 1 <= num <= len(x):
        raise ValueError(f"num must be in [1, {len(x)}]; got {num}")
    idx = np.random.default_rng(seed).choice(len(x), num, replace=False)
    images, masks, _ = textured_canvases(x[idx], seed=seed + 1, **kwargs)
    return images, masks, y[idx]
