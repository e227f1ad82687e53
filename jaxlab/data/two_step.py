"""The two-step task of Hoffmann et al. (ICML 2024, "Eureka-Moments").

A 2×2 grid of tiles: indicators top-left and bottom-right (digits 1 or 2, each tinted blue
or red at random, independently of the digit), targets top-right and bottom-left
(Fashion-MNIST, white); every tile's colour gets N(0, 0.05²) noise per RGB channel — the
reference code's ``spacial_decision_indicator_digit_1_2_fashion`` task. The label is the
class of the top-right target when the two indicators show the same digit, else that of the
bottom-left target. Only the label is supervised; which target to read is latent. A model
that ignores the indicators and reads one target is right ≈ ½·(its target accuracy) +
½·(chance the two targets share a class) of the time — the plateau of the paper.

Two sources of tiles: :func:`load_two_step_sources` (offline, the spec's small setting:
scikit-learn's 8×8 digits {1, 2} upsampled to the tile size, Fashion-MNIST downsampled to
it) and :func:`load_two_step_sources_tfds` (the paper's: TFDS ``mnist`` digits {1, 2} and
``fashion_mnist``, 28×28 tiles, the train or test split of both). ``two_step_batch`` is a
pure jax function of a key, so a training loop samples a fresh batch per step inside
``jit``; the same key gives the same batch.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.data.images import load_images


class TwoStepSources(NamedTuple):
    """Tiles the task is assembled from (float32 in [0, 1]).

    Attributes:
      indicators: ``[n_i, t, t]`` digits 1 and 2.
      indicator_labels: int ``[n_i]`` in {0, 1} (digit 1 → 0, digit 2 → 1).
      targets: ``[n_t, t, t]`` Fashion-MNIST images.
      target_labels: int ``[n_t]`` in 0..9.
    """

    indicators: jax.Array
    indicator_labels: jax.Array
    targets: jax.Array
    target_labels: jax.Array


def load_two_step_sources(
    split: str, tile: int = 14, data_dir: str | os.PathLike | None = None
) -> TwoStepSources:
    """Digits {1, 2} (scikit-learn) and Fashion-MNIST resized to ``tile × tile``.

    Args:
      split: ``"train"`` (digits train split, Fashion-MNIST test images 0..7999) or
        ``"test"`` (digits test split, Fashion-MNIST test images 8000..9999).
      tile: side of a tile.
      data_dir: offline data folder (Fashion-MNIST; see ``jaxlab.data.paths``).

    Returns:
      ``TwoStepSources``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    digits, digit_labels = load_images("digits", split, data_dir)
    keep = np.isin(digit_labels, (1, 2))
    ind = jax.image.resize(
        jnp.asarray(digits[keep, :, :, 0]), (int(keep.sum()), tile, tile), "bilinear"
    )
    # Targets from Fashion-MNIST's 10k test images only (loading and resizing the 60k
    # training images costs minutes on a busy CPU): the first 8k train, the last 2k test.
    fashion, fashion_labels = load_images("fashion_mnist", "test", data_dir)
    part = slice(0, 8000) if split == "train" else slice(8000, None)
    fashion, fashion_labels = fashion[part], fashion_labels[part]
    tgt = jax.image.resize(
        jnp.asarray(fashion[:, :, :, 0]), (len(fashion), tile, tile), "linear", antialias=True
    )
    return TwoStepSources(
        jnp.clip(ind, 0.0, 1.0),
        jnp.asarray(digit_labels[keep] - 1, jnp.int32),
        jnp.clip(tgt, 0.0, 1.0),
        jnp.asarray(fashion_labels, jnp.int32),
    )


def _tfds_images(
    name: str, split: str, data_dir: str | os.PathLike | None
) -> tuple[np.ndarray, np.ndarray]:
    """Every record of a TFDS image-classification split: images ``[n, h, w]`` in [0, 1]
    (first channel) and int labels ``[n]``."""
    from jaxlab.data.streaming import open_source

    source = open_source(name, split, data_dir=data_dir)
    records = [source[i] for i in range(len(source))]
    images = np.stack([np.asarray(r["image"])[..., 0] for r in records]).astype(np.float32)
    return images / 255.0, np.asarray([r["label"] for r in records], np.int64)


def load_two_step_sources_tfds(
    split: str, tile: int = 28, data_dir: str | os.PathLike | None = None
) -> TwoStepSources:
    """The paper's tiles: TFDS ``mnist`` digits {1, 2} and ``fashion_mnist`` of ``split``
    (the reference code builds its training images from both train splits and its validation
    images from both test splits), resized to ``tile × tile`` when that is not 28.

    Args:
      split: a TFDS split of both datasets (``"train"``, ``"test"``).
      tile: side of a tile.
      data_dir: TFDS's data directory (``None``: TFDS's default).
    """
    digits, digit_labels = _tfds_images("mnist", split, data_dir)
    fashion, fashion_labels = _tfds_images("fashion_mnist", split, data_dir)
    keep = np.isin(digit_labels, (1, 2))
    ind, tgt = jnp.asarray(digits[keep]), jnp.asarray(fashion)
    if tile != ind.shape[-1]:
        ind = jax.image.resize(ind, (ind.shape[0], tile, tile), "linear", antialias=True)
        tgt = jax.image.resize(tgt, (tgt.shape[0], tile, tile), "linear", antialias=True)
    return TwoStepSources(
        jnp.clip(ind, 0.0, 1.0),
        jnp.asarray(digit_labels[keep] - 1, jnp.int32),
        jnp.clip(tgt, 0.0, 1.0),
        jnp.asarray(fashion_labels, jnp.int32),
    )


# The reference code's colour table for this task: half the indices blue, half red
# (numpy, so that importing this module does not start a JAX backend).
_INDICATOR_COLORS = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], np.float32)  # blue, red


def two_step_batch(
    key: jax.Array,
    sources: TwoStepSources,
    batch_size: int,
    color_noise: float = 0.05,
    indicator_noise: float = 0.0,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Samples a batch of two-step images.

    Each tile is a grey image times an RGB colour: blue or red (equally likely) for an
    indicator, white for a target, plus N(0, ``color_noise``²) per channel of that colour
    (one draw per tile, as the reference code's ``__apply_colors_and_color_noise__``).

    Args:
      key: a PRNG key (deterministic: the same key gives the same batch).
      sources: ``TwoStepSources``.
      batch_size: number of images b.
      color_noise: std of the per-tile, per-channel colour noise (paper: 0.05).
      indicator_noise: extra per-pixel Gaussian noise on the indicators only — a harder
        variant, not in the paper (the indicator digits become harder to read).

    Returns:
      ``(images [b, 2t, 2t, 3], labels int [b], same int [b])``; ``same`` is 1 when the two
      indicators agree (the top-right target is the answer).
    """
    ind, ind_lab, tgt, tgt_lab = sources
    k_i, k_t, k_c, k_n, k_in = jax.random.split(key, 5)
    i_idx = jax.random.randint(k_i, (batch_size, 2), 0, ind.shape[0])
    t_idx = jax.random.randint(k_t, (batch_size, 2), 0, tgt.shape[0])
    # Tile colours [b, 4, 3] in reading order (indicator, target, target, indicator).
    ind_colors = jnp.asarray(_INDICATOR_COLORS)[jax.random.randint(k_c, (batch_size, 2), 0, 2)]
    white = jnp.ones_like(ind_colors[:, 0])
    colors = jnp.stack([ind_colors[:, 0], white, white, ind_colors[:, 1]], axis=1)
    colors = colors + color_noise * jax.random.normal(k_n, colors.shape)
    indicators = ind[i_idx]
    indicators = indicators + indicator_noise * jax.random.normal(k_in, indicators.shape)
    grey = jnp.stack(
        [indicators[:, 0], tgt[t_idx[:, 0]], tgt[t_idx[:, 1]], indicators[:, 1]], axis=1
    )  # [b, 4, t, t]
    tiles = grey[..., None] * colors[:, :, None, None, :]  # [b, 4, t, t, 3]
    top = jnp.concatenate([tiles[:, 0], tiles[:, 1]], axis=2)
    bottom = jnp.concatenate([tiles[:, 2], tiles[:, 3]], axis=2)
    images = jnp.concatenate([top, bottom], axis=1)
    same = (ind_lab[i_idx[:, 0]] == ind_lab[i_idx[:, 1]]).astype(jnp.int32)
    labels = jnp.where(same == 1, tgt_lab[t_idx[:, 0]], tgt_lab[t_idx[:, 1]])
    return images, labels, same
