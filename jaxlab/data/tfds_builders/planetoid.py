"""``planetoid``: the Planetoid citation graphs (Yang et al. 2016) as a TFDS dataset.

Configs ``cora``, ``citeseer`` and ``pubmed``; split ``train`` holds ONE example, the whole
graph with its standard split as node masks (Cora 140/500/1000, Citeseer 120/500/1000,
Pubmed 60/500/1000)::

    label             [n] int64 (ClassLabel: 7 / 6 / 3 classes)
    feature_indices   [nnz, 2] int32   (node, column) of each non-zero feature
    feature_values    [nnz] float32    its value (Cora/Citeseer binary, Pubmed TF-IDF)
    num_features      int32            d (1433 / 3703 / 500)
    edges             [E, 2] int32     (i, j) with A[i, j] = 1, both directions of each edge
    train_mask, val_mask, test_mask   [n] bool

The features are sparse (1.3 % / 0.9 % / 10 % non-zero), so they are stored as coordinates;
:func:`graph_from_example` rebuilds the :class:`jaxlab.data.graphs.GraphData` that
:func:`jaxlab.data.graphs.load_planetoid` returns from the same files (same pre-processing:
:func:`jaxlab.data.graphs.parse_planetoid`).

Source: the ``ind.<name>.*`` pickles of github.com/kimiyoung/planetoid at a pinned commit,
each checked against the SHA-256 recorded in :mod:`jaxlab.data.fetch` (the table behind
``jaxlab data fetch planetoid``). The files are taken, in this order, from ``manual_dir``
(``ind.<name>.<part>`` directly in it), from jaxlab's data directory
(``<data_dir>/graphs/planetoid/``, where ``jaxlab data fetch planetoid`` puts them), or
downloaded from the pinned URLs. Prepare with
``tfds build planetoid/pubmed --imports jaxlab.data.tfds_builders`` (array_record is this
builder's default file format); read with
``jaxlab.data.streaming.open_source("planetoid/pubmed", "train")``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import tensorflow_datasets as tfds

from jaxlab.data import fetch
from jaxlab.data.graphs import PLANETOID_PARTS, GraphData, parse_planetoid

NUM_CLASSES = {"cora": 7, "citeseer": 6, "pubmed": 3}


@dataclasses.dataclass
class PlanetoidConfig(tfds.core.BuilderConfig):
    """One Planetoid graph: its class count."""

    num_classes: int = 0


def _files(name: str) -> dict[str, fetch.RemoteFile]:
    """``{part: RemoteFile}`` of graph ``name`` from :data:`jaxlab.data.fetch.DATASETS`."""
    by_path = {f.path: f for f in fetch.DATASETS["planetoid"]}
    return {part: by_path[f"graphs/planetoid/ind.{name}.{part}"] for part in PLANETOID_PARTS}


def to_example(graph: GraphData) -> dict[str, Any]:
    """The TFDS example of a graph (see the module docstring)."""
    n = graph.num_nodes
    features = sp.coo_matrix(graph.features)
    adj = sp.coo_matrix(graph.adj)

    def mask(idx: np.ndarray) -> np.ndarray:
        out = np.zeros(n, bool)
        out[idx] = True
        return out

    return {
        "label": graph.labels.astype(np.int64),
        "feature_indices": np.stack([features.row, features.col], 1).astype(np.int32),
        "feature_values": features.data.astype(np.float32),
        "num_features": np.int32(graph.features.shape[1]),
        "edges": np.stack([adj.row, adj.col], 1).astype(np.int32).reshape(-1, 2),
        "train_mask": mask(graph.idx_train),
        "val_mask": mask(graph.idx_val),
        "test_mask": mask(graph.idx_test),
    }


def graph_from_example(example: Mapping[str, Any]) -> GraphData:
    """The :class:`GraphData` of a ``planetoid`` example (the inverse of :func:`to_example`).

    ``n`` is the length of ``label``. An example whose arrays disagree (the random examples
    of ``tfds.testing.mock_data``) is made consistent: node indices are taken modulo ``n``,
    the coordinate and value lists are cut to the shorter, the masks padded with ``False``
    or cut to ``n``, and ``d`` is at least the largest column + 1. A prepared dataset's
    example is already consistent, and then this is exact.

    Raises:
      ValueError: an example without nodes.
    """
    labels = np.asarray(example["label"]).astype(np.int32).reshape(-1)
    n = labels.shape[0]
    if n == 0:
        raise ValueError("a planetoid example needs at least one node")
    coords = np.asarray(example["feature_indices"], np.int64).reshape(-1, 2)
    values = np.asarray(example["feature_values"], np.float32).reshape(-1)
    count = min(len(coords), len(values))
    coords, values = coords[:count], values[:count]
    d = max(int(example["num_features"]), int(coords[:, 1].max()) + 1 if count else 1, 1)
    features = np.zeros((n, d), np.float32)
    features[coords[:, 0] % n, coords[:, 1]] = values
    edges = np.asarray(example["edges"], np.int64).reshape(-1, 2) % n
    adj = sp.csr_matrix((np.ones(len(edges), np.float32), (edges[:, 0], edges[:, 1])), shape=(n, n))
    adj.data[:] = 1.0

    def index(key: str) -> np.ndarray:
        mask = np.zeros(n, bool)
        given = np.asarray(example[key], bool).reshape(-1)[:n]
        mask[: len(given)] = given
        return np.flatnonzero(mask).astype(np.int32)

    return GraphData(
        adj, features, labels, index("train_mask"), index("val_mask"), index("test_mask")
    )


class Planetoid(tfds.core.GeneratorBasedBuilder):
    """Cora, Citeseer and Pubmed with the Planetoid split, one graph per config."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "The ind.<name>.* files of kimiyoung/planetoid, pinned."}
    BUILDER_CONFIGS = [
        PlanetoidConfig(
            name=name,
            num_classes=classes,
            description=f"Planetoid {name} (one example: the whole graph).",
        )
        for name, classes in NUM_CLASSES.items()
    ]
    DEFAULT_CONFIG_NAME = "cora"
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "Optional: place the files ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index} of "
        "github.com/kimiyoung/planetoid (data/) in manual_dir to skip the download."
    )

    def __init__(self, *, file_format: Any = None, **kwargs: Any):
        super().__init__(file_format=file_format or "array_record", **kwargs)

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description=__doc__,
            features=tfds.features.FeaturesDict(
                {
                    "label": tfds.features.Sequence(
                        tfds.features.ClassLabel(num_classes=self.builder_config.num_classes)
                    ),
                    "feature_indices": tfds.features.Tensor(shape=(None, 2), dtype=np.int32),
                    "feature_values": tfds.features.Tensor(shape=(None,), dtype=np.float32),
                    "num_features": np.int32,
                    "edges": tfds.features.Tensor(shape=(None, 2), dtype=np.int32),
                    "train_mask": tfds.features.Tensor(shape=(None,), dtype=np.bool_),
                    "val_mask": tfds.features.Tensor(shape=(None,), dtype=np.bool_),
                    "test_mask": tfds.features.Tensor(shape=(None,), dtype=np.bool_),
                }
            ),
            homepage="https://github.com/kimiyoung/planetoid",
            citation="Yang, Cohen & Salakhutdinov, Revisiting Semi-Supervised Learning with "
            "Graph Embeddings, ICML 2016.",
        )

    def _local(self, dl_manager, relative: str) -> Path | None:
        """``relative`` in ``manual_dir`` or in jaxlab's data directory, if there."""
        from jaxlab.data.paths import DataNotFoundError, resolve_data_dir

        try:
            manual = Path(dl_manager.manual_dir) / Path(relative).name
        except (AssertionError, AttributeError, TypeError):
            manual = None
        if manual is not None and manual.is_file():
            return manual
        try:
            local = resolve_data_dir() / relative
        except DataNotFoundError:
            return None
        return local if local.is_file() else None

    def _source_files(self, dl_manager) -> dict[str, Path]:
        """Each file of this config, local or downloaded, checked against its SHA-256."""
        paths = {}
        for part, remote in _files(self.builder_config.name).items():
            path = self._local(dl_manager, remote.path) or Path(dl_manager.download(remote.url))
            if fetch.sha256_of(path) != remote.sha256:
                raise fetch.ChecksumError(
                    f"{path}: SHA-256 {fetch.sha256_of(path)} differs from the recorded "
                    f"{remote.sha256} of {remote.url}"
                )
            paths[part] = path
        return paths

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(self._source_files(dl_manager))}

    def _generate_examples(self, paths: Mapping[str, Path]) -> Iterator[tuple[str, dict]]:
        name = self.builder_config.name
        yield name, to_example(parse_planetoid(name, paths))
