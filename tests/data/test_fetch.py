"""``jaxlab data fetch`` against a local HTTP server: download, verify, place, refuse."""

import functools
import hashlib
import http.server
import shutil
import threading

import numpy as np
import pytest

from jaxlab.data import fetch, graphs, paths


@pytest.fixture
def serve(tmp_path):
    """Serves a folder over HTTP on 127.0.0.1; returns ``(base_url, request_log)``."""
    root = tmp_path / "served"
    root.mkdir()
    log = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            log.append(self.path)

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", log
    server.shutdown()
    server.server_close()


def _synthetic(root, base, contents):
    """Writes served files and returns their :class:`RemoteFile` records."""
    files = []
    for rel, data in contents.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        files.append(fetch.RemoteFile(rel, f"{base}/{rel}", hashlib.sha256(data).hexdigest()))
    return files


CONTENTS = {"graphs/toy/a.bin": bytes(range(256)) * 4000, "graphs/toy/sub/b.txt": b"0\t1\n"}


def test_good_hash_places_every_file(serve, tmp_path):
    root, base, log = serve
    files = _synthetic(root, base, CONTENTS)
    out = fetch.download_files(files, tmp_path / "data")
    assert [p.read_bytes() for p in out] == list(CONTENTS.values())
    assert sorted(p.name for p in (tmp_path / "data/graphs/toy").rglob("*")) == [
        "a.bin",
        "b.txt",
        "sub",
    ]
    # A second run keeps verified files: no request, even when the server's copy changed.
    (root / "graphs/toy/a.bin").write_bytes(b"changed")
    requests = len(log)
    fetch.download_files(files, tmp_path / "data")
    assert len(log) == requests


def test_wrong_hash_raises_and_leaves_nothing(serve, tmp_path):
    root, base, _ = serve
    (good,) = _synthetic(root, base, {"graphs/toy/a.bin": b"payload"})
    bad = fetch.RemoteFile(good.path, good.url, hashlib.sha256(b"other").hexdigest())
    with pytest.raises(fetch.ChecksumError, match=r"SHA-256 mismatch for http://127\.0\.0\.1"):
        fetch.download_files([bad], tmp_path / "data")
    assert list((tmp_path / "data").rglob("*.*")) == []  # neither the file nor a .part


def test_a_corrupt_local_copy_is_replaced(serve, tmp_path):
    root, base, _ = serve
    files = _synthetic(root, base, CONTENTS)
    target = tmp_path / "data/graphs/toy/a.bin"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"truncated")
    fetch.download_files(files, tmp_path / "data")
    assert target.read_bytes() == CONTENTS["graphs/toy/a.bin"]


def test_http_error_names_the_url_and_leaves_nothing(serve, tmp_path):
    _, base, _ = serve
    missing = fetch.RemoteFile("graphs/toy/x.npz", f"{base}/nope.npz", "0" * 64)
    with pytest.raises(fetch.DownloadError, match="nope.npz"):
        fetch.download_files([missing], tmp_path / "data")
    assert list((tmp_path / "data").rglob("*.*")) == []


def test_unknown_name_lists_the_datasets():
    assert fetch.available() == ["geom-gcn", "planetoid", "prognn"]
    with pytest.raises(ValueError, match="available: geom-gcn, planetoid, prognn"):
        fetch.fetch("pubmed")


def test_the_table_covers_every_file_the_graph_loaders_read():
    loader_files = (
        [f"graphs/prognn/{n}.npz" for n in ("cora", "citeseer")]
        + [f"graphs/prognn/{n}_prognn_splits.json" for n in ("cora", "citeseer", "pubmed")]
        + [
            f"graphs/prognn/meta_adj/{n}_meta_adj_{r}.npz"
            for n in ("cora", "citeseer", "pubmed")
            for r in graphs.PTB_RATES
        ]
        + [
            f"graphs/planetoid/ind.{n}.{p}"
            for n in graphs.PLANETOID
            for p in ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")
        ]
        + [
            f"graphs/geom-gcn/{n}/out1_{p}.txt"
            for n in graphs.GEOM_GCN
            for p in ("graph_edges", "node_feature_label")
        ]
    )
    table = [f.path for files in fetch.DATASETS.values() for f in files]
    assert sorted(table) == sorted(loader_files)
    for name, files in fetch.DATASETS.items():
        for f in files:
            assert f.path.startswith(f"graphs/{name}/") and fetch.dataset_of(f.path) == name
            assert f.url.startswith("https://raw.githubusercontent.com/")
            assert len(f.sha256) == 64 and int(f.sha256, 16) >= 0


def test_loaders_download_only_when_allowed(serve, tmp_path, monkeypatch):
    root, base, log = serve
    files = _synthetic(root, base, {"graphs/toy/a.bin": b"payload"})
    monkeypatch.setitem(fetch.DATASETS, "toy", tuple(files))
    monkeypatch.delenv(fetch.ALLOW_ENV, raising=False)
    with pytest.raises(paths.DataNotFoundError, match=r"jaxlab data fetch toy"):
        paths.require_file("graphs/toy/a.bin", tmp_path / "data")
    assert log == []
    monkeypatch.setenv(fetch.ALLOW_ENV, "1")
    got = paths.require_file("graphs/toy/a.bin", tmp_path / "data")
    assert got.read_bytes() == b"payload"


def _offline_graphs():
    try:
        graphs_dir = paths.resolve_data_dir() / "graphs"
    except paths.DataNotFoundError:
        graphs_dir = None
    if graphs_dir is None or not all((graphs_dir / n).is_dir() for n in fetch.available()):
        pytest.skip("the offline data directory with graphs/ is not on this machine")
    return graphs_dir


def test_fetch_serves_the_real_files_into_the_loaders_layout(serve, tmp_path):
    graphs_dir = _offline_graphs()
    root, base, _ = serve
    for name in fetch.available():
        shutil.copytree(graphs_dir / name, root / "graphs" / name)
    data = tmp_path / "data"
    for name in fetch.available():
        files = fetch.DATASETS[name]
        present = [f for f in files if (root / f.path).is_file()]  # no Pubmed offline here
        if len(present) == len(files):
            assert fetch.fetch(name, data, mirror=base) == data / "graphs" / name
        else:
            fetch.download_files(present, data, mirror=base)
    attacked = graphs.load_prognn("cora", 0.5, data_dir=data)
    assert attacked.adj.shape == (2485, 2485)
    assert graphs.load_planetoid("cora", data_dir=data).features.shape == (2708, 1433)
    texas = graphs.load_geom_gcn("texas", data_dir=data)
    np.testing.assert_array_equal(
        texas.features, graphs.load_geom_gcn("texas", data_dir=graphs_dir.parent).features
    )
