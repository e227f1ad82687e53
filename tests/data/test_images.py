import gzip
import struct

import numpy as np
import pytest
from sklearn.datasets import load_digits

from jaxlab.data import DataNotFoundError, builders, idx, load_images, paths


def test_digits_split_is_fixed_and_matches_sklearn():
    train_x, train_y = load_images("digits", "train")
    test_x, test_y = load_images("digits", "test")
    assert train_x.shape == (1437, 8, 8, 1) and test_x.shape == (360, 8, 8, 1)
    assert train_x.dtype == np.float32 and train_y.dtype == np.int32
    assert 0.0 <= train_x.min() and train_x.max() == 1.0
    digits = load_digits()
    reference = {(img.tobytes(), int(y)) for img, y in
                 zip((digits.images / 16.0).astype(np.float32), digits.target, strict=True)}
    ours = [(x[..., 0].tobytes(), int(y)) for x, y in
            zip(np.concatenate([train_x, test_x]), np.concatenate([train_y, test_y]),
                strict=True)]
    assert set(ours) == reference and len(ours) == 1797
    assert np.bincount(test_y).min() >= 35  # stratified


def test_fashion_mnist_matches_its_idx_files():
    train_x, train_y = load_images("fashion_mnist", "train")
    test_x, test_y = load_images("fashion_mnist", "test")
    assert train_x.shape == (60000, 28, 28, 1) and test_x.shape == (10000, 28, 28, 1)
    np.testing.assert_array_equal(np.bincount(train_y), np.full(10, 6000))
    folder = builders.find_fashion_mnist()
    raw = idx.read_idx(folder / "t10k-images-idx3-ubyte.gz")
    np.testing.assert_allclose(test_x[..., 0], raw / 255.0, atol=1e-7)


def test_idx_reader_against_a_handwritten_file(tmp_path):
    data = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    path = tmp_path / "x-idx3-ubyte.gz"
    with gzip.open(path, "wb") as f:
        f.write(bytes([0, 0, 0x08, 3]) + struct.pack(">III", 2, 3, 4) + data.tobytes())
    np.testing.assert_array_equal(idx.read_idx(path), data)
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX"):
        idx.read_idx(bad)


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
