"""Offline TFDS builders, written as array_record and read without TensorFlow.

Each builder is a ``tfds.core.GeneratorBasedBuilder`` whose examples come from files that a
package ships (scikit-learn's digits, Debian's ``dataset-fashion-mnist``) or from a
directory the user gives; none of them downloads anything. They are built by instance
(``jaxlab.data.images.prepare``), not by name, so they stay out of TFDS's registry, where
the catalog's own ``fashion_mnist`` (downloaded) keeps its name.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import tensorflow_datasets as tfds

from jaxlab.data import paths

FASHION_MNIST_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
# IDX type codes (the third byte of the magic number) and their big-endian dtypes.
_IDX_DTYPES: dict[int, type[np.generic] | str] = {
    0x08: np.uint8,
    0x09: np.int8,
    0x0B: ">i2",
    0x0C: ">i4",
    0x0D: ">f4",
    0x0E: ">f8",
}


def _image_features(height: int, width: int) -> tfds.features.FeaturesDict:
    return tfds.features.FeaturesDict(
        {
            "image": tfds.features.Tensor(shape=(height, width, 1), dtype=np.uint8),
            "label": tfds.features.ClassLabel(num_classes=10),
            # Position in the source files: TFDS stores examples in hashed-key order, and
            # readers restore the source order with it.
            "index": tfds.features.Scalar(dtype=np.int64),
        }
    )


# tfds is untyped (an Any base), so mypy checks the class keyword against object's.
class Digits(tfds.core.GeneratorBasedBuilder, skip_registration=True):  # type: ignore[call-arg]
    """scikit-learn's 8×8 handwritten digits (1797 images), a fixed 1437/360 split.

    Pixel values 0..16 are stored as uint8; the split is a stratified shuffle with seed 0.
    """

    VERSION = tfds.core.Version("1.1.0")

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(builder=self, features=_image_features(8, 8))

    def _split_generators(self, dl_manager):
        del dl_manager
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        digits = load_digits()
        images = digits.images.astype(np.uint8)[..., None]
        index = np.arange(len(images))
        train, test = train_test_split(index, test_size=360, random_state=0, stratify=digits.target)
        return {
            "train": self._generate_examples(images, digits.target, np.sort(train)),
            "test": self._generate_examples(images, digits.target, np.sort(test)),
        }

    def _generate_examples(self, images, labels, index):
        for i in index:
            yield int(i), {"image": images[i], "label": int(labels[i]), "index": int(i)}


class FashionMnist(tfds.core.GeneratorBasedBuilder, skip_registration=True):  # type: ignore[call-arg]  # as Digits
    """Fashion-MNIST (Xiao et al. 2017) from local IDX files, its official 60000/10000 split.

    The files are looked up in ``<data_dir>/fashion-mnist/`` and then in the Debian package's
    folder (``apt-get install dataset-fashion-mnist``).
    """

    VERSION = tfds.core.Version("1.1.0")

    def __init__(self, *, source_dir: str | os.PathLike | None = None, **kwargs):
        self._source_dir = source_dir
        super().__init__(**kwargs)

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(builder=self, features=_image_features(28, 28))

    def _split_generators(self, dl_manager):
        del dl_manager
        folder = find_fashion_mnist(self._source_dir)
        return {
            split: self._generate_examples(folder / images, folder / labels)
            for split, (images, labels) in FASHION_MNIST_FILES.items()
        }

    def _generate_examples(self, images_path: Path, labels_path: Path):
        images = _read_idx(images_path)
        labels = _read_idx(labels_path)
        if images.shape[0] != labels.shape[0] or images.shape[1:] != (28, 28):
            raise ValueError(
                f"{images_path}: images {images.shape} do not match labels {labels.shape}"
            )
        for i in range(images.shape[0]):
            yield i, {"image": images[i][..., None], "label": int(labels[i]), "index": i}


def _read_idx(path: Path) -> np.ndarray:
    """Reads an IDX file (``*-idx3-ubyte[.gz]``) into an array of its declared shape.

    jaxlab's only IDX reader: everything else reads Fashion-MNIST through this builder.

    Raises:
      ValueError: the file is not IDX or its size disagrees with its header.
    """
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    header = 4 + 4 * raw[3]
    shape = tuple(int(s) for s in np.frombuffer(raw[4:header], dtype=">u4"))
    data = np.frombuffer(raw[header:], dtype=dtype)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header shape {shape} but {data.size} values")
    return data.reshape(shape)


def find_fashion_mnist(data_dir: str | os.PathLike | None = None) -> Path:
    """Returns the folder holding the four Fashion-MNIST IDX files.

    Raises:
      paths.DataNotFoundError: naming the missing file and every folder tried.
    """
    candidates = []
    try:
        candidates.append(paths.resolve_data_dir(data_dir) / "fashion-mnist")
    except paths.DataNotFoundError:
        pass
    candidates.append(FASHION_MNIST_SYSTEM_DIR)
    needed = [name for pair in FASHION_MNIST_FILES.values() for name in pair]
    for folder in candidates:
        if all((folder / name).exists() for name in needed):
            return folder
    missing = next(n for n in needed if not (candidates[-1] / n).exists())
    looked = ", ".join(str(c) for c in candidates)
    raise paths.DataNotFoundError(
        f"missing Fashion-MNIST file {missing} (looked in: {looked}); "
        "install it with `apt-get install dataset-fashion-mnist` or put the IDX files in "
        "<data_dir>/fashion-mnist/"
    )
