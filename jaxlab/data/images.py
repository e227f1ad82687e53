"""Image classification datasets as arrays: prepared once with TFDS, then read from cache.

This is jaxlab's one path to Fashion-MNIST (and scikit-learn's digits): the TFDS builders of
``jaxlab.data.builders`` read the local source files once into array_record; every reader
gets the arrays through :func:`load_images`.
"""

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


def _decoded_split(builder, split: str) -> tuple[np.ndarray, np.ndarray]:
    """The split's raw ``(uint8 images, int32 labels)`` in source order, decoded once.

    TFDS decodes a record at a time in Python (slow for Fashion-MNIST's 60000 training
    images), so the decoded arrays are kept beside the records, in the builder's versioned
    folder, and later calls read them as one array each.
    """
    path = Path(builder.data_dir) / f"arrays-{split}.npz"
    if path.exists():
        with np.load(path) as arrays:
            return arrays["images"], arrays["labels"]
    source = builder.as_data_source()[split]
    records = source.__getitems__(range(len(source)))
    records = sorted(records, key=lambda r: int(r["index"]))  # the source files' order
    images = np.stack([r["image"] for r in records])
    labels = np.asarray([r["label"] for r in records], dtype=np.int32)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    try:
        np.savez(partial, images=images, labels=labels)
        os.replace(partial, path)  # atomic: a parallel reader sees no file or the whole file
    except OSError:  # a read-only cache: decode again next time
        partial.unlink(missing_ok=True)
    return images, labels


def load_images(
    name: str, split: str, data_dir: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Loads a whole split as arrays.

    Args:
      name: ``"digits"`` (8×8, 1437/360) or ``"fashion_mnist"`` (28×28, 60000/10000).
      split: ``"train"`` or ``"test"``.
      data_dir: folder to look for source files in (see ``jaxlab.data.paths``).

    Returns:
      ``(images, labels)``: float32 ``[n, h, w, 1]`` scaled to [0, 1] (the stored uint8
      divided by the largest pixel value, 255 for Fashion-MNIST: bit for bit the source
      files' bytes ``/ 255`` in float32) and int32 ``[n]``, in the order of the source files.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    images, labels = _decoded_split(prepare(name, data_dir), split)
    return images.astype(np.float32) / _MAX_PIXEL[name], labels
