"""Per-example image transforms for streamed TFDS image datasets (grain operations).

The ``paper`` presets of the image benchmarks read CIFAR-10/100, SVHN, MNIST, LSUN,
CIFAR-10-C ... through :func:`jaxlab.data.streaming.open_source`; a record is a dict of numpy
values (``{"image": uint8 [h, w, c], "label": int, ...}``). These operations turn it into
what a model eats, in grain's worker processes:

    ops = train_ops("cifar10", crop_padding=4, flip=True)   # decode, crop, flip, normalise
    loader = make_loader(source, ops, global_batch=128, seed=0)
    test = to_arrays(open_source("svhn_cropped", "test"), eval_ops("cifar10", size=32))

- :class:`Decode`: ``uint8 [0, 255]`` → ``float32 [0, 1]``; keeps only the image and label
  (other features, such as LSUN's or CIFAR's ids, are dropped so batches stack).
- :class:`Normalize`: ``(x − mean) / std`` per channel (:data:`STATS` has each dataset's).
- :class:`RandomCrop`: zero-pad ``padding`` pixels on each side, then crop the original
  size at a uniform offset (torchvision's ``RandomCrop(size, padding)``).
- :class:`RandomFlip`: mirror left–right with probability 1/2.
- :class:`Resize`: bilinear resize (half-pixel centres, no antialiasing) to a square size,
  for out-of-distribution sets of another resolution; grey images are tiled to 3 channels
  when ``channels=3``.

Random operations draw from the per-example ``np.random.Generator`` grain passes to a
``RandomMap`` (seeded from the loader's seed and the record index), so an epoch's
augmentations are reproducible and independent of the number of workers.

:func:`random_crop_flip` is the same crop and flip as a jitted JAX function of a batch, for
programs that sample their own minibatches from data held in device memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grain
import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "STATS",
    "Decode",
    "Normalize",
    "RandomCrop",
    "RandomFlip",
    "Resize",
    "eval_ops",
    "random_crop_flip",
    "resize_bilinear",
    "to_arrays",
    "train_ops",
]

Example = dict[str, Any]

#: Per-channel ``(mean, std)`` of each dataset's training images in [0, 1]: the values
#: torchvision examples and the papers' reference code use (MNIST: 0.1307 / 0.3081;
#: CIFAR-10: 0.4914, 0.4822, 0.4465 / 0.2470, 0.2435, 0.2616; CIFAR-100:
#: 0.5071, 0.4865, 0.4409 / 0.2673, 0.2564, 0.2762; SVHN: 0.4377, 0.4438, 0.4728 /
#: 0.1980, 0.2010, 0.1970).
STATS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "mnist": ((0.1307,), (0.3081,)),
    "fashion_mnist": ((0.2860,), (0.3530,)),
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
    "svhn_cropped": ((0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970)),
}


def _stats(dataset: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    base = dataset.split("/")[0]
    if base == "cifar10_corrupted":
        base = "cifar10"
    if base not in STATS:
        raise ValueError(f"no normalisation statistics for {dataset!r}; known: {sorted(STATS)}")
    return STATS[base]


class Decode(grain.transforms.Map):
    """``{"image": uint8 [h, w, c], "label": int}`` → ``float32`` image in [0, 1], ``int32``
    label; every other feature is dropped.

    Attributes:
      image_key: the record's image feature.
      label_key: the record's label feature (``None``: no label, e.g. an OOD set).
    """

    def __init__(self, image_key: str = "image", label_key: str | None = "label"):
        self.image_key = image_key
        self.label_key = label_key

    def map(self, example: Mapping[str, Any]) -> Example:
        image = np.asarray(example[self.image_key])
        if image.ndim == 2:
            image = image[..., None]
        out: dict[str, Any] = {"image": image.astype(np.float32) / np.float32(255.0)}
        if self.label_key is not None:
            out["label"] = np.int32(example[self.label_key])
        return out


class Normalize(grain.transforms.Map):
    """``image ← (image − mean) / std`` per channel (float32)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]):
        self.mean = np.asarray(mean, np.float32)
        self.std = np.asarray(std, np.float32)

    def map(self, example: Mapping[str, Any]) -> Example:
        out = dict(example)
        out["image"] = ((example["image"] - self.mean) / self.std).astype(np.float32)
        return out


class RandomCrop(grain.transforms.RandomMap):
    """Zero-pads ``padding`` pixels on every side, then crops the original ``[h, w]`` at an
    offset drawn uniformly from ``{0, …, 2·padding}²`` (before normalisation, so the
    padding is black, as torchvision's ``RandomCrop(size, padding)``)."""

    def __init__(self, padding: int):
        if padding < 0:
            raise ValueError(f"padding must be >= 0, got {padding}")
        self.padding = padding

    def random_map(self, example: Mapping[str, Any], rng: np.random.Generator) -> Example:
        image = example["image"]
        h, w = image.shape[:2]
        p = self.padding
        padded = np.pad(image, ((p, p), (p, p), (0, 0)))
        top, left = rng.integers(0, 2 * p + 1, size=2)
        out = dict(example)
        out["image"] = padded[top : top + h, left : left + w]
        return out


class RandomFlip(grain.transforms.RandomMap):
    """Mirrors the image left–right with probability 1/2."""

    def random_map(self, example: Mapping[str, Any], rng: np.random.Generator) -> Example:
        out = dict(example)
        if rng.random() < 0.5:
            out["image"] = example["image"][:, ::-1]
        return out


def resize_bilinear(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Bilinear resize of ``[h, w, c]`` to ``[size[0], size[1], c]`` with half-pixel centres
    and no antialiasing: output pixel ``i`` samples the input at ``(i + 0.5)·h/H − 0.5``,
    clamped to the edges (the convention of ``jax.image.resize(..., "linear",
    antialias=False)``). Float32 out."""
    image = np.asarray(image, np.float32)
    h, w = image.shape[:2]
    out_h, out_w = size

    def axis(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
        pos = np.clip(pos, 0.0, n_in - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, (pos - lo).astype(np.float32)

    r0, r1, fr = axis(h, out_h)
    c0, c1, fc = axis(w, out_w)
    rows = image[r0] * (1 - fr)[:, None, None] + image[r1] * fr[:, None, None]
    return rows[:, c0] * (1 - fc)[None, :, None] + rows[:, c1] * fc[None, :, None]


class Resize(grain.transforms.Map):
    """Resizes the (decoded, float) image to ``[size, size]`` (:func:`resize_bilinear`); an
    image already that size is left as is. ``channels=3`` tiles a grey image to RGB."""

    def __init__(self, size: int, channels: int | None = None):
        self.size = size
        self.channels = channels

    def map(self, example: Mapping[str, Any]) -> Example:
        image = example["image"]
        if image.shape[:2] != (self.size, self.size):
            image = resize_bilinear(image, (self.size, self.size))
        if self.channels is not None and image.shape[-1] != self.channels:
            image = np.repeat(image, self.channels // image.shape[-1], axis=-1)
        out = dict(example)
        out["image"] = image.astype(np.float32)
        return out


def train_ops(
    dataset: str,
    *,
    crop_padding: int = 0,
    flip: bool = False,
    stats: tuple[Sequence[float], Sequence[float]] | None = None,
) -> list[Any]:
    """Decode → (random crop) → (flip) → normalise with ``dataset``'s :data:`STATS` (or
    ``stats``, a ``(mean, std)`` pair)."""
    mean, std = stats if stats is not None else _stats(dataset)
    ops: list[Any] = [Decode()]
    if crop_padding:
        ops.append(RandomCrop(crop_padding))
    if flip:
        ops.append(RandomFlip())
    return [*ops, Normalize(mean, std)]


def eval_ops(
    dataset: str,
    *,
    size: int | None = None,
    channels: int | None = None,
    label_key: str | None = "label",
    stats: tuple[Sequence[float], Sequence[float]] | None = None,
) -> list[Any]:
    """Deterministic evaluation transforms: decode → (resize to ``size``) → normalise with
    the statistics of ``dataset`` (the training set's, also for an OOD set)."""
    mean, std = stats if stats is not None else _stats(dataset)
    ops: list[Any] = [Decode(label_key=label_key)]
    if size is not None:
        ops.append(Resize(size, channels))
    elif channels is not None:
        ops.append(_Channels(channels))
    return [*ops, Normalize(mean, std)]


class _Channels(grain.transforms.Map):
    def __init__(self, channels: int):
        self.channels = channels

    def map(self, example: Mapping[str, Any]) -> Example:
        image = example["image"]
        out = dict(example)
        if image.shape[-1] != self.channels:
            out["image"] = np.repeat(image, self.channels // image.shape[-1], axis=-1)
        return out


def to_arrays(
    source: Any, operations: Sequence[Any], *, limit: int | None = None, seed: int = 0
) -> dict[str, np.ndarray]:
    """The first ``limit`` records of ``source`` (all by default) through ``operations``,
    stacked: ``{"image": [n, h, w, c], "label": [n]}``.

    For a program that holds its data in device memory (a simulation sampling its own
    minibatches, a test-time stream of a few thousand images). Random operations draw from
    ``seed`` and the record index, as in a loader.
    """
    n = len(source) if limit is None else min(limit, len(source))
    dataset = grain.MapDataset.source(source)[:n].seed(seed)
    dataset = grain.experimental.apply_transformations(dataset, list(operations))
    examples = [dataset[i] for i in range(n)]
    return {k: np.stack([e[k] for e in examples]) for k in examples[0]}


def random_crop_flip(key: jax.Array, images: jax.Array, padding: int, flip: bool) -> jax.Array:
    """:class:`RandomCrop` (``padding``) then :class:`RandomFlip` (if ``flip``) of every image
    of ``images [..., h, w, c]``, each with its own offsets and coin from ``key``; traceable.

    The images are padded with zeros, so apply it before normalisation, or pass images
    whose zero is the padding value wanted.
    """
    shape = images.shape
    flat = images.reshape(-1, *shape[-3:])
    h, w, c = shape[-3:]
    crop_key, flip_key = jax.random.split(key)
    offsets = jax.random.randint(crop_key, (flat.shape[0], 2), 0, 2 * padding + 1)
    coins = jax.random.bernoulli(flip_key, 0.5, (flat.shape[0],))

    def one(image, offset, coin):
        padded = jnp.pad(image, ((padding, padding), (padding, padding), (0, 0)))
        out = jax.lax.dynamic_slice(padded, (offset[0], offset[1], 0), (h, w, c))
        return jnp.where(coin & flip, out[:, ::-1], out)

    return jax.vmap(one)(flat, offsets, coins).reshape(shape)
