"""Offline loaders for the citation and heterophilic graphs in the data directory.

Files are read from ``<data_dir>/graphs`` (see ``jaxlab.data.paths``); nothing is copied
or downloaded. Every loader returns a :class:`GraphData` with a scipy CSR adjacency
(``A[i, j] = 1``: edge i -> j), dense float32 features, int32 labels and index splits.

* ``load_prognn(name, ptb_rate)``: Cora/Citeseer/Pubmed in the Pro-GNN setting (largest connected
  component, fixed 10/10/80 split) and, with ``ptb_rate`` in {0.25, 0.5, 0.75}, the
  pre-generated Metattack adjacency behind Table 1 of the GADC paper.
* ``load_planetoid(name)``: the Planetoid pickles (Cora, Citeseer, Pubmed) with the
  standard split (Cora 140/500/1000); :func:`parse_planetoid` parses them from any paths
  (the ``planetoid`` TFDS builder's).
* ``load_geom_gcn(name)``: Cornell/Texas/Wisconsin/film as DIRECTED Geom-GCN edge lists.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from jaxlab.data.paths import require_file

PathLike = str | os.PathLike | None
PTB_RATES = (0.25, 0.5, 0.75)


@dataclasses.dataclass(frozen=True)
class GraphData:
    """A node-classification dataset: ``adj [n, n]`` CSR, ``features [n, d]``, ``labels [n]``.

    ``idx_train``/``idx_val``/``idx_test`` are fixed splits (empty when the protocol draws
    random splits).
    """

    adj: sp.csr_matrix
    features: np.ndarray
    labels: np.ndarray
    idx_train: np.ndarray
    idx_val: np.ndarray
    idx_test: np.ndarray

    @property
    def num_nodes(self) -> int:
        return self.features.shape[0]

    @property
    def num_classes(self) -> int:
        return int(self.labels.max()) + 1


def _check(condition: bool, path: Path, what: str) -> None:
    if not condition:
        raise ValueError(f"malformed data file {path}: {what}")


def _undirected_simple(adj: sp.spmatrix) -> sp.csr_matrix:
    """Symmetrise A + Aᵀ, zero the diagonal, clip to {0, 1}."""
    adj = sp.csr_matrix(adj + adj.T)
    adj.setdiag(0)
    adj.eliminate_zeros()
    adj.data[:] = 1.0
    return adj.astype(np.float32)


def largest_connected_component(adj: sp.spmatrix) -> np.ndarray:
    """Ascending node ids of the largest connected component of an undirected graph."""
    _, component = connected_components(adj, directed=False)
    sizes = np.bincount(component)
    return np.flatnonzero(component == np.argmax(sizes))


def load_prognn(name: str, ptb_rate: float | None = None, data_dir: PathLike = None) -> GraphData:
    """Pro-GNN Cora/Citeseer/Pubmed (LCC, fixed split); Metattack graph when ``ptb_rate`` is
    given.

    Pre-processing (Pro-GNN/DeepRobust): symmetrise, zero the diagonal, clip to {0, 1},
    keep the LCC in ascending node order. Cora: 2485 nodes / 5069 edges; Citeseer:
    2110 / 3668. Pubmed is the Planetoid graph (:func:`load_planetoid`), whose LCC is every
    node (19717), with Pro-GNN's split (:func:`prognn_from_planetoid`).

    Args:
      name: ``"cora"``, ``"citeseer"`` or ``"pubmed"``.
      ptb_rate: ``None`` (clean graph) or one of 0.25, 0.5, 0.75.
      data_dir: data directory (default: ``jaxlab.data.paths.resolve_data_dir``).
    """
    if name == "pubmed":
        return prognn_from_planetoid(load_planetoid(name, data_dir), name, ptb_rate, data_dir)
    if name not in ("cora", "citeseer"):
        raise ValueError(f"name must be 'cora', 'citeseer' or 'pubmed', got {name!r}")
    if ptb_rate is not None and ptb_rate not in PTB_RATES:
        raise ValueError(f"ptb_rate must be None or one of {PTB_RATES}, got {ptb_rate}")
    path = require_file(f"graphs/prognn/{name}.npz", data_dir)
    with np.load(path) as f:
        adj = sp.csr_matrix(
            (f["adj_data"], f["adj_indices"], f["adj_indptr"]), shape=tuple(f["adj_shape"])
        )
        attr = sp.csr_matrix(
            (f["attr_data"], f["attr_indices"], f["attr_indptr"]), shape=tuple(f["attr_shape"])
        )
        labels = np.asarray(f["labels"], np.int32)
    _check(adj.shape[0] == attr.shape[0] == labels.shape[0], path, "node counts differ")
    adj = _undirected_simple(adj)
    keep = largest_connected_component(adj)
    adj = adj[keep][:, keep]
    features = np.asarray(attr[keep].todense(), np.float32)
    labels = labels[keep]
    split_path = require_file(f"graphs/prognn/{name}_prognn_splits.json", data_dir)
    splits = json.loads(split_path.read_text())
    idx = {k: np.asarray(splits[k], np.int32) for k in ("idx_train", "idx_val", "idx_test")}
    _check(all(v.max() < len(keep) for v in idx.values()), split_path, "index beyond the LCC")
    if ptb_rate is not None:
        meta_path = require_file(f"graphs/prognn/meta_adj/{name}_meta_adj_{ptb_rate}.npz", data_dir)
        adj = sp.csr_matrix(sp.load_npz(meta_path), dtype=np.float32)
        _check(
            adj.shape == (len(keep), len(keep)),
            meta_path,
            f"shape {adj.shape}, expected the LCC's {(len(keep), len(keep))}",
        )
    return GraphData(adj, features, labels, idx["idx_train"], idx["idx_val"], idx["idx_test"])


def _prognn_split(name: str, num_nodes: int, data_dir: PathLike) -> dict[str, np.ndarray]:
    split_path = require_file(f"graphs/prognn/{name}_prognn_splits.json", data_dir)
    splits = json.loads(split_path.read_text())
    idx = {k: np.asarray(splits[k], np.int32) for k in ("idx_train", "idx_val", "idx_test")}
    _check(all(v.max() < num_nodes for v in idx.values()), split_path, "index beyond the LCC")
    return idx


def _metattack_adj(name: str, ptb_rate: float, num_nodes: int, data_dir: PathLike) -> sp.csr_matrix:
    meta_path = require_file(f"graphs/prognn/meta_adj/{name}_meta_adj_{ptb_rate}.npz", data_dir)
    adj = sp.csr_matrix(sp.load_npz(meta_path), dtype=np.float32)
    _check(
        adj.shape == (num_nodes, num_nodes),
        meta_path,
        f"shape {adj.shape}, expected the LCC's {(num_nodes, num_nodes)}",
    )
    return adj


def prognn_from_planetoid(
    graph: GraphData, name: str, ptb_rate: float | None = None, data_dir: PathLike = None
) -> GraphData:
    """A connected Planetoid graph in the Pro-GNN setting: Pro-GNN's 10/10/80 split
    (``graphs/prognn/<name>_prognn_splits.json``) and, with ``ptb_rate``, the Metattack
    adjacency (``graphs/prognn/meta_adj/<name>_meta_adj_<rate>.npz``) instead of the clean one.

    ``graph`` is the Planetoid graph however it was read (:func:`load_planetoid` or the
    ``planetoid`` TFDS builder); features and labels are kept as they are (Pubmed's TF-IDF).

    Raises:
      ValueError: ``graph`` is not connected (Pro-GNN keeps the LCC), or a bad ``ptb_rate``.
    """
    if ptb_rate is not None and ptb_rate not in PTB_RATES:
        raise ValueError(f"ptb_rate must be None or one of {PTB_RATES}, got {ptb_rate}")
    n = graph.num_nodes
    if len(largest_connected_component(graph.adj)) != n:
        raise ValueError(f"{name}: the graph is not connected; Pro-GNN keeps its LCC")
    idx = _prognn_split(name, n, data_dir)
    adj = graph.adj if ptb_rate is None else _metattack_adj(name, ptb_rate, n, data_dir)
    return GraphData(
        adj, graph.features, graph.labels, idx["idx_train"], idx["idx_val"], idx["idx_test"]
    )


def _load_pickle(path: Path):
    with open(path, "rb") as f:
        return pickle.load(f, encoding="latin1")


PLANETOID = ("cora", "citeseer", "pubmed")
#: The Planetoid files of one dataset: ``ind.<name>.<part>``.
PLANETOID_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")


def load_planetoid(name: str, data_dir: PathLike = None) -> GraphData:
    """Planetoid Cora/Citeseer/Pubmed (Yang et al. 2016) with the standard split.

    Reads ``<data_dir>/graphs/planetoid/ind.<name>.*`` and parses them with
    :func:`parse_planetoid`.
    """
    if name not in PLANETOID:
        raise ValueError(f"name must be one of {PLANETOID}, got {name!r}")
    return parse_planetoid(
        name,
        {
            part: require_file(f"graphs/planetoid/ind.{name}.{part}", data_dir)
            for part in PLANETOID_PARTS
        },
    )


def parse_planetoid(name: str, paths: Mapping[str, str | os.PathLike]) -> GraphData:
    """The Planetoid graph ``name`` from its files, ``paths[part]`` for each of
    :data:`PLANETOID_PARTS` (the standard loader of Kipf & Welling).

    The split: the first ``len(y)`` nodes train (Cora 140, Citeseer 120, Pubmed 60), the
    next 500 validate (those of them that exist, in a graph smaller than the real ones), the
    ``test.index`` nodes (1000) test. Citeseer's isolated test nodes missing from ``tx`` get
    zero feature rows and a zero label row (label 0). The graph is made undirected and
    simple (A + Aᵀ, no self-loops, entries 1).
    """
    if name not in PLANETOID:
        raise ValueError(f"name must be one of {PLANETOID}, got {name!r}")
    parts = {
        part: _load_pickle(Path(paths[part])) for part in PLANETOID_PARTS if part != "test.index"
    }
    index_path = Path(paths["test.index"])
    test_idx = np.array([int(line) for line in index_path.read_text().split()])
    test_sorted = np.sort(test_idx)
    tx, ty = parts["tx"], parts["ty"]
    if name == "citeseer":
        full = np.arange(test_idx.min(), test_idx.max() + 1)
        tx_ext = sp.lil_matrix((len(full), tx.shape[1]))
        tx_ext[test_sorted - test_idx.min(), :] = tx
        ty_ext = np.zeros((len(full), ty.shape[1]))
        ty_ext[test_sorted - test_idx.min(), :] = ty
        tx, ty = tx_ext, ty_ext
    features = sp.vstack((parts["allx"], tx)).tolil()
    features[test_idx, :] = features[test_sorted, :]
    onehot = np.vstack((parts["ally"], ty))
    onehot[test_idx, :] = onehot[test_sorted, :]
    graph = parts["graph"]
    n = features.shape[0]
    _check(onehot.shape[0] == n, index_path, f"{onehot.shape[0]} label rows for {n} nodes")
    rows = np.array([i for i, nbrs in graph.items() for _ in nbrs])
    cols = np.array([j for nbrs in graph.values() for j in nbrs])
    adj = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    adj = _undirected_simple(adj)
    n_train = parts["y"].shape[0]
    return GraphData(
        adj,
        np.asarray(features.todense(), np.float32),
        np.argmax(onehot, axis=1).astype(np.int32),
        np.arange(n_train, dtype=np.int32),
        np.arange(n_train, min(n_train + 500, n), dtype=np.int32),
        test_sorted.astype(np.int32),
    )


GEOM_GCN = ("cornell", "texas", "wisconsin", "film")


def load_geom_gcn(name: str, data_dir: PathLike = None) -> GraphData:
    """A Geom-GCN graph as the GADC paper used it: DIRECTED, self-loops kept, no split.

    ``adj[i, j] = 1`` for each (de-duplicated) line ``i j`` of ``out1_graph_edges.txt``;
    features are the binary vectors of ``out1_node_feature_label.txt`` (for ``film``,
    932-dim from the listed non-zero indices). Node ids are sorted ascending.
    """
    if name not in GEOM_GCN:
        raise ValueError(f"name must be one of {GEOM_GCN}, got {name!r}")
    node_path = require_file(f"graphs/geom-gcn/{name}/out1_node_feature_label.txt", data_dir)
    edge_path = require_file(f"graphs/geom-gcn/{name}/out1_graph_edges.txt", data_dir)
    ids, feats, labels = [], [], []
    for line in node_path.read_text().splitlines()[1:]:
        fields = line.rstrip().split("\t")
        _check(len(fields) == 3, node_path, f"expected 3 tab-separated fields, got {line!r}")
        ids.append(int(fields[0]))
        values: np.ndarray = np.array(fields[1].split(","), dtype=np.int64)
        if name == "film":
            row = np.zeros(932, np.float32)
            row[values] = 1.0
            values = row
        feats.append(values)
        labels.append(int(fields[2]))
    order = np.argsort(ids)
    node_ids = np.asarray(ids)[order]
    _check(np.array_equal(node_ids, np.arange(len(node_ids))), node_path, "node ids are not 0..n-1")
    features = np.asarray(np.stack(feats)[order], np.float32)
    edges = np.loadtxt(edge_path, dtype=np.int64, skiprows=1, delimiter="\t", ndmin=2)
    _check(edges.shape[1] == 2 and edges.max() < len(node_ids), edge_path, "bad edge list")
    n = len(node_ids)
    adj = sp.csr_matrix((np.ones(len(edges), np.float32), (edges[:, 0], edges[:, 1])), shape=(n, n))
    adj.data[:] = 1.0  # duplicate lines count once (a DiGraph)
    empty = np.zeros((0,), np.int32)
    return GraphData(adj, features, np.asarray(labels, np.int32)[order], empty, empty, empty)


def metattack_edge_difference(clean: sp.spmatrix, attacked: sp.spmatrix) -> float:
    """Flipped undirected edges of ``attacked`` relative to ``clean``, over clean edges."""
    diff = sp.triu(abs(sp.csr_matrix(attacked) - sp.csr_matrix(clean)), k=1)
    return float((diff > 0).sum()) / float(sp.triu(clean, k=1).nnz)
