"""The graph loaders reproduce the Pro-GNN setting and the Metattack budgets."""

import numpy as np
import pytest

from jaxlab.data import graphs
from jaxlab.data.paths import DataNotFoundError


@pytest.mark.parametrize(
    ("name", "nodes", "edges", "d"), [("cora", 2485, 5069, 1433), ("citeseer", 2110, 3668, 3703)]
)
def test_prognn_lcc_sizes_and_metattack_ratios(name, nodes, edges, d):
    clean = graphs.load_prognn(name)
    assert clean.num_nodes == nodes and clean.features.shape == (nodes, d)
    assert clean.adj.nnz // 2 == edges
    assert (clean.adj != clean.adj.T).nnz == 0 and clean.adj.diagonal().sum() == 0
    assert len(np.intersect1d(clean.idx_train, clean.idx_test)) == 0
    for rate in graphs.PTB_RATES:
        attacked = graphs.load_prognn(name, rate)
        ratio = graphs.metattack_edge_difference(clean.adj, attacked.adj)
        assert abs(ratio - rate) < 1e-3


def test_planetoid_and_geom_gcn():
    cora = graphs.load_planetoid("cora")
    assert cora.num_nodes == 2708 and cora.adj.nnz // 2 == 5278
    assert (len(cora.idx_train), len(cora.idx_val), len(cora.idx_test)) == (140, 500, 1000)
    citeseer = graphs.load_planetoid("citeseer")
    assert citeseer.num_nodes == 3327 and np.sum(citeseer.features.sum(1) == 0) > 0
    texas = graphs.load_geom_gcn("texas")
    assert texas.num_nodes == 183 and texas.num_classes == 5
    assert (texas.adj != texas.adj.T).nnz > 0  # directed, as the paper used it
    assert graphs.load_geom_gcn("film").features.shape == (7600, 932)


def test_missing_and_bad_names(tmp_path):
    with pytest.raises(DataNotFoundError, match="cora.npz"):
        graphs.load_prognn("cora", data_dir=tmp_path)
    with pytest.raises(ValueError, match="ptb_rate"):
        graphs.load_prognn("cora", 0.3)
    with pytest.raises(ValueError, match="name"):
        graphs.load_geom_gcn("pubmed")
