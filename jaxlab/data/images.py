"""Image classification datasets as arrays: prepared once with TFDS, then read from cache."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import numpy as np

from jaxlab.data import builders

BUILDERS = {"digits": builders.Digits, "fashion_mnist": builders.FashionMnist}
# Largest pixel value per dataset, to scale images to [0, 1].
_MAX_PIXEL = {"digits": 16.0, "fashion_mnist": 255.0}


def cache_dir() -> Path:
    """Where prepared datasets live: ``$JAXLAB_CACHE_DIR`` or ``~/.cache/jaxlab``."""
    root = os.environ.get("JAXLAB_CACHE_DIR") or Path.home() / ".cache" / "jaxlab"
    return Path(root) / "tfds"


def prepare(name: str, data_dir: str | os.PathLike | None = None):
    """Builds dataset ``name`` as array_record (once; a file lock guards parallel callers)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown dataset {name!r}; valid: {sorted(BUILDERS)}")
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    kwargs = {"source_dir": data_dir} if name == "fashion_mnist" else {}
    builder = BUILDERS[name](data_dir=str(root), file_format="array_record", **kwargs)
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        builder.download_and_prepare()
    return builder


def load_images(
    name: str, split: str, data_dir: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Loads a whole split as arrays.

    Args:
      name: ``"digits"`` (8×8, 1437/360) or ``"fashion_mnist"`` (28×28, 60000/10000).
      split: ``"train"`` or ``"test"``.
      data_dir: folder to look for source files in (see ``jaxlab.data.paths``).

    Returns:
      ``(images, labels)``: float32 ``[n, h, w, 1]`` scaled to [0, 1] and int32 ``[n]``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    source = prepare(name, data_dir).as_data_source()[split]
    records = source.__getitems__(range(len(source)))
    images = np.stack([r["image"] for r in records]).astype(np.float32) / _MAX_PIXEL[name]
    labels = np.asarray([r["label"] for r in records], dtype=np.int32)
    return images, labels
