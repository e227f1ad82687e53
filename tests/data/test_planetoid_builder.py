"""The ``planetoid`` TFDS builder: a tiny Planetoid fixture written here round-trips through
the builder into the graph the file loader reads; mock data gives a usable graph."""

import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import tensorflow_datasets as tfds

import jaxlab.data.tfds_builders  # noqa: F401  (registers planetoid)
from jaxlab.data import fetch, graphs
from jaxlab.data.streaming import mock_datasets, open_source
from jaxlab.data.tfds_builders import planetoid


def _write_fixture(folder: Path, name: str = "pubmed") -> dict[str, Path]:
    """A 10-node Planetoid graph in the ``ind.<name>.*`` format: 2 train nodes (x, y),
    6 in allx/ally, 4 test nodes (tx, ty) listed out of order in ``test.index``."""
    rng = np.random.default_rng(0)
    d, c = 5, 3
    onehot = np.eye(c)[rng.integers(0, c, 10)]
    feats = sp.csr_matrix(rng.random((10, d)) * (rng.random((10, d)) < 0.4))
    test_index = [9, 7, 6, 8]
    parts = {
        "x": feats[:2],
        "y": onehot[:2],
        "allx": feats[:6],
        "ally": onehot[:6],
        "tx": feats[[9, 7, 6, 8]],
        "ty": onehot[[9, 7, 6, 8]],
        "graph": {i: [(i + 1) % 10, (i + 3) % 10] for i in range(10)} | {4: [4, 5]},
    }
    paths = {}
    for part, value in parts.items():
        paths[part] = folder / f"ind.{name}.{part}"
        paths[part].write_bytes(pickle.dumps(value))
    paths["test.index"] = folder / f"ind.{name}.test.index"
    paths["test.index"].write_text("\n".join(map(str, test_index)) + "\n")
    return paths


def _assert_same(got: graphs.GraphData, want: graphs.GraphData) -> None:
    assert (got.adj != want.adj).nnz == 0 and got.adj.dtype == want.adj.dtype
    for field in ("features", "labels", "idx_train", "idx_val", "idx_test"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and np.array_equal(a, b), field


def test_parse_planetoid_on_the_fixture(tmp_path):
    graph = graphs.parse_planetoid("pubmed", _write_fixture(tmp_path))
    assert graph.num_nodes == 10 and graph.features.shape == (10, 5)
    assert (graph.adj != graph.adj.T).nnz == 0 and graph.adj.diagonal().sum() == 0
    np.testing.assert_array_equal(graph.idx_train, [0, 1])
    np.testing.assert_array_equal(graph.idx_test, [6, 7, 8, 9])
    with pytest.raises(ValueError, match="name"):
        graphs.parse_planetoid("reddit", {})


def test_example_round_trip(tmp_path):
    graph = graphs.parse_planetoid("pubmed", _write_fixture(tmp_path))
    _assert_same(planetoid.graph_from_example(planetoid.to_example(graph)), graph)


def test_builder_prepares_the_fixture_from_manual_dir(tmp_path, monkeypatch):
    manual = tmp_path / "manual"
    manual.mkdir()
    paths = _write_fixture(manual)
    # The recorded SHA-256s are those of the real files: use the fixture's instead.
    monkeypatch.setattr(
        planetoid,
        "_files",
        lambda name: {
            part: fetch.RemoteFile(
                f"graphs/planetoid/ind.{name}.{part}", "https://invalid/", fetch.sha256_of(path)
            )
            for part, path in paths.items()
        },
    )
    builder = tfds.builder("planetoid/pubmed", data_dir=tmp_path / "tfds")
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=str(manual))
    )
    source = open_source("planetoid/pubmed", "train", data_dir=tmp_path / "tfds")
    assert len(source) == 1
    _assert_same(planetoid.graph_from_example(source[0]), graphs.parse_planetoid("pubmed", paths))


def test_a_file_with_another_hash_is_refused(tmp_path, monkeypatch):
    manual = tmp_path / "manual"
    manual.mkdir()
    paths = _write_fixture(manual)
    monkeypatch.setattr(
        planetoid,
        "_files",
        lambda name: {
            part: fetch.RemoteFile(
                f"graphs/planetoid/ind.{name}.{part}", "https://invalid/", "0" * 64
            )
            for part in paths
        },
    )
    builder = tfds.builder("planetoid/pubmed", data_dir=tmp_path / "tfds")
    with pytest.raises(fetch.ChecksumError, match="SHA-256"):
        builder.download_and_prepare(
            download_config=tfds.download.DownloadConfig(manual_dir=str(manual))
        )


def test_every_config_has_its_pinned_files():
    for name, classes in planetoid.NUM_CLASSES.items():
        files = planetoid._files(name)
        assert sorted(files) == sorted(graphs.PLANETOID_PARTS)
        assert all(f.url.endswith(f"data/ind.{name}.{part}") for part, f in files.items())
        assert (
            tfds.builder(f"planetoid/{name}").info.features["label"].feature.num_classes == classes
        )


def test_mock_data_gives_a_consistent_graph():
    with mock_datasets(4):
        source = open_source("planetoid/pubmed", "train")
        graph = planetoid.graph_from_example(source[0])
    n = graph.num_nodes
    assert graph.adj.shape == (n, n) and graph.features.shape[0] == n
    assert graph.labels.max() < 3
    for idx in (graph.idx_train, graph.idx_val, graph.idx_test):
        assert idx.size and idx.max() < n


def test_prognn_from_planetoid_takes_the_split_and_the_attacked_graph(tmp_path):
    graph = graphs.parse_planetoid("pubmed", _write_fixture(tmp_path))
    prognn = tmp_path / "data" / "graphs" / "prognn"
    (prognn / "meta_adj").mkdir(parents=True)
    (prognn / "pubmed_prognn_splits.json").write_text(
        '{"idx_train": [0, 1], "idx_val": [2, 3], "idx_test": [4, 5, 6, 7, 8, 9]}'
    )
    attacked = sp.csr_matrix(np.ones((10, 10)) - np.eye(10))
    sp.save_npz(prognn / "meta_adj" / "pubmed_meta_adj_0.25.npz", attacked)
    clean = graphs.prognn_from_planetoid(graph, "pubmed", None, tmp_path / "data")
    assert (clean.adj != graph.adj).nnz == 0
    np.testing.assert_array_equal(clean.idx_val, [2, 3])
    meta = graphs.prognn_from_planetoid(graph, "pubmed", 0.25, tmp_path / "data")
    assert meta.adj.nnz == 90 and meta.adj.dtype == np.float32
    with pytest.raises(ValueError, match="ptb_rate"):
        graphs.prognn_from_planetoid(graph, "pubmed", 0.3, tmp_path / "data")
