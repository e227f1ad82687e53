import gzip
import struct

import numpy as np
import pytest
from sklearn.datasets import load_digits

from jaxlab.data import DataNotFoundError, builders, load_images, paths


def test_digits_split_is_fixed_and_matches_sklearn():
    train_x, train_y = load_images("digits", "train")
    test_x, test_y = load_images("digits", "test")
    assert train_x.shape == (1437, 8, 8, 1) and test_x.shape == (360, 8, 8, 1)
    assert train_x.dtype == np.float32 and train_y.dtype == np.int32
    assert 0.0 <= train_x.min() and train_x.max() == 1.0
    digits = load_digits()
    reference = {
        (img.tobytes(), int(y))
        for img, y in zip((digits.images / 16.0).astype(np.float32), digits.target, strict=True)
    }
    ours = [
        (x[..., 0].tobytes(), int(y))
        for x, y in zip(
            np.concatenate([train_x, test_x]), np.concatenate([train_y, test_y]), strict=True
        )
    ]
    assert set(ours) == reference and len(ours) == 1797
    assert np.bincount(test_y).min() >= 35  # stratified


def _raw_idx(path, header: int) -> np.ndarray:
    """The bytes of a gzipped IDX file after its header, as uint8 (independent of jaxlab)."""
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read()[header:], dtype=np.uint8)


@pytest.mark.parametrize("split, prefix, n", [("train", "train", 60000), ("test", "t10k", 10000)])
def test_fashion_mnist_is_the_idx_files_bytes_over_255(split, prefix, n):
    # The arrays every Fashion-MNIST experiment reads (slwi_stream, mc_ensemble_ood and
    # curbench_vision): the IDX files' values, order and dtype.
    x, y = load_images("fashion_mnist", split)
    folder = builders.find_fashion_mnist()
    pixels = _raw_idx(folder / f"{prefix}-images-idx3-ubyte.gz", header=16)
    labels = _raw_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", header=8)
    assert x.shape == (n, 28, 28, 1) and x.dtype == np.float32 and y.dtype == np.int32
    assert np.array_equal(x.ravel(), pixels.astype(np.float32) / np.float32(255))  # bitwise
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_array_equal(np.bincount(y), np.full(10, n // 10))
    again_x, again_y = load_images("fashion_mnist", split)  # from the decoded-array cache
    assert np.array_equal(again_x, x) and np.array_equal(again_y, y)


def _write_idx(path, code: int, data: np.ndarray) -> None:
    with gzip.open(path, "wb") as f:
        f.write(
            bytes([0, 0, code, data.ndim])
            + struct.pack(f">{data.ndim}I", *data.shape)
            + data.tobytes()
        )


def test_builder_reads_handwritten_idx_files(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXLAB_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "data" / "fashion-mnist"
    source.mkdir(parents=True)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 5, 28, 28), dtype=np.uint8)
    labels = np.array([[3, 9, 0, 9, 1], [7, 2, 2, 0, 5]], dtype=np.uint8)
    for s, (images_file, labels_file) in enumerate(builders.FASHION_MNIST_FILES.values()):
        _write_idx(source / images_file, 0x08, pixels[s])
        _write_idx(source / labels_file, 0x08, labels[s])
    for s, split in enumerate(("train", "test")):
        for _ in range(2):  # decoded from the records, then from the array cache
            x, y = load_images("fashion_mnist", split, tmp_path / "data")
            np.testing.assert_array_equal(x[..., 0], pixels[s] / np.float32(255))
            np.testing.assert_array_equal(y, labels[s])
            assert x.dtype == np.float32 and y.dtype == np.int32


def test_builder_refuses_a_file_that_is_not_idx(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXLAB_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "fashion-mnist"
    source.mkdir()
    for name in [n for pair in builders.FASHION_MNIST_FILES.values() for n in pair]:
        with gzip.open(source / name, "wb") as f:
            f.write(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX"):
        load_images("fashion_mnist", "train", tmp_path)


def test_missing_data_names_the_file_and_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(builders, "FASHION_MNIST_SYSTEM_DIR", tmp_path / "nowhere")
    with pytest.raises(DataNotFoundError, match=r"train-images-idx3-ubyte\.gz.*nowhere"):
        builders.find_fashion_mnist(tmp_path)
    with pytest.raises(DataNotFoundError, match=r"missing data file graphs/x\.npz"):
        paths.require_file("graphs/x.npz", tmp_path)
    monkeypatch.setenv(paths.ENV_VAR, str(tmp_path / "absent"))
    with pytest.raises(DataNotFoundError, match="absent"):
        paths.resolve_data_dir()


def test_bad_names_and_splits():
    with pytest.raises(ValueError, match="unknown dataset"):
        load_images("mnist", "train")
    with pytest.raises(ValueError, match="split"):
        load_images("digits", "validation")
