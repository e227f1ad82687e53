"""The code hash covers the installed package versions and the data files a config reads."""

import hashlib
import importlib.metadata
import os

import ml_collections

from jaxlab.report import codehash

MODULE = "jaxlab_experiments.multimax.multimax_tradeoff"


def _config(data_dir: str, datasets: tuple[str, ...]) -> ml_collections.ConfigDict:
    return ml_collections.ConfigDict({"data_dir": data_dir, "datasets": datasets})


def test_package_versions_are_jaxlabs_requirements():
    versions = dict(codehash.package_versions())
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert versions["scipy"] == importlib.metadata.version("scipy")
    assert "jaxlab" not in versions
    assert versions["jaxlib"] == importlib.metadata.version("jaxlib")  # XLA's numerics


def test_a_package_version_changes_the_hash(monkeypatch):
    base = codehash.code_hash(MODULE)
    bumped = tuple((n, v + ".post1" if n == "numpy" else v) for n, v in codehash.package_versions())
    monkeypatch.setattr(codehash, "package_versions", lambda: bumped)
    assert codehash.code_hash(MODULE) != base


def test_data_files_change_the_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    folder = tmp_path / "graphs"
    folder.mkdir()
    (folder / "cora.npz").write_bytes(b"12345")
    config = _config(str(tmp_path), ("graphs", "generated"))
    base = codehash.code_hash(MODULE, config)
    assert base == codehash.code_hash(MODULE, config)
    assert base != codehash.code_hash(MODULE)
    listing = codehash.data_listing(("graphs", "generated"), str(tmp_path))
    assert listing[0] == "generated"
    assert listing[1] == f"graphs/cora.npz 5 {hashlib.sha256(b'12345').hexdigest()}"
    (folder / "cora.npz").write_bytes(b"123456")  # a new size
    assert codehash.code_hash(MODULE, config) != base
    grown = codehash.code_hash(MODULE, config)
    (folder / "cora.npz").write_bytes(b"654321")  # same size, other content
    os.utime(folder / "cora.npz", ns=(1, 1))
    assert codehash.code_hash(MODULE, config) != grown
    (folder / "citeseer.npz").write_bytes(b"1")  # a new file
    assert len(codehash.data_listing(("graphs",), str(tmp_path))) == 2


def test_a_local_dataset_name_lists_the_files_it_reads(tmp_path, monkeypatch):
    """``prognn_files`` names no folder: it reads ``<data_dir>/graphs/prognn``."""
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    folder = tmp_path / "graphs" / "prognn"
    folder.mkdir(parents=True)
    (folder / "cora.npz").write_bytes(b"abc")
    listing = codehash.data_listing(("prognn_files", "geom_gcn_files"), str(tmp_path))
    assert listing == [
        "geom_gcn_files",  # no graphs/geom-gcn here: enters by its name
        f"prognn_files/cora.npz 3 {hashlib.sha256(b'abc').hexdigest()}",
    ]
