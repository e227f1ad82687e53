"""CCPG against the d-separation oracle: exact recovery of identifiable DAGs, valid partitions."""

import jax
import networkx as nx
import numpy as np
import pytest

from jaxlab.causal import (
    CountingCITest,
    all_edges_in_vstructures,
    ccpg,
    d_separation_oracle,
    dag_edges,
    fisher_z_test,
    random_vstructure_dag,
    random_weights,
    sample_linear_gaussian,
    star_dag,
    vstructure_chain_dag,
)
from jaxlab.causal.baselines import pc_adjacency


def _recovers(adj, rule="prefix"):
    g = ccpg(range(adj.shape[0]), d_separation_oracle(adj), edge_rule=rule)
    return g.is_dag and set(g.to_dag().edges()) == dag_edges(adj)


@pytest.mark.parametrize("n", [3, 5, 8])
def test_star_dag_recovered(n):
    assert _recovers(star_dag(n))


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_chains_of_vstructures_recovered_with_prefix_rule(depth):
    adj = vstructure_chain_dag(depth)
    assert all_edges_in_vstructures(adj)
    assert _recovers(adj, "prefix")


@pytest.mark.parametrize("rule", ["before_i", "reference"])
@pytest.mark.parametrize("depth", [2, 3])
def test_chains_of_vstructures_break_the_other_readings(rule, depth):
    # 0 → 2 → 4: conditioning on the parts before V_i (or fewer) leaves 0 ⟂̸ 4 | ∅, so
    # both readings add the spurious edge 0 → 4; the "prefix" set blocks it through 2.
    adj = vstructure_chain_dag(depth)
    g = ccpg(range(adj.shape[0]), d_separation_oracle(adj), edge_rule=rule)
    assert g.is_dag
    learned = set(g.to_dag().edges())
    assert dag_edges(adj) < learned and (0, 4) in learned


@pytest.mark.parametrize("seed", range(6))
def test_random_identifiable_dags_recovered(seed):
    adj = random_vstructure_dag(9, jax.random.key(seed))
    assert all_edges_in_vstructures(adj)
    assert _recovers(adj)


@pytest.mark.parametrize("seed", range(6))
def test_valid_partition_on_random_dags(seed):
    rng = np.random.default_rng(100 + seed)
    n = 8
    adj = np.triu(rng.random((n, n)) < 0.35, k=1).astype(int)
    perm = rng.permutation(n)
    adj = adj[np.ix_(perm, perm)]
    g = ccpg(range(n), d_separation_oracle(adj))
    part = g.part_of()
    assert sorted(part) == list(range(n))
    for u, v in dag_edges(adj):  # no true edge points backwards between parts
        assert part[u] <= part[v]
    # with the oracle, V_i → V_j exactly when the DAG has an edge from V_i into V_j
    expected = {(part[u], part[v]) for u, v in dag_edges(adj) if part[u] != part[v]}
    assert set(g.edges) == expected


def test_test_count_polynomial_on_star():
    counts = []
    for n in (4, 8, 16):
        ci = CountingCITest(d_separation_oracle(star_dag(n)))
        ccpg(range(n), ci)
        counts.append(ci.num_distinct)
    slope = np.polyfit(np.log([4, 8, 16]), np.log(counts), 1)[0]
    assert slope < 5.0  # O(n⁵) at most


def test_pc_adapter_recovers_chain_and_counts():
    adj = vstructure_chain_dag(2)
    ci = CountingCITest(d_separation_oracle(adj))
    assert (pc_adjacency(5, ci) == adj).all() and ci.num_distinct > 0


def test_fisher_z_recovers_collider_from_data():
    adj = star_dag(4)
    x = sample_linear_gaussian(jax.random.key(0), random_weights(jax.random.key(1), adj), 3000)
    g = ccpg(range(4), fisher_z_test(np.asarray(x), alpha=1e-3))
    assert g.is_dag and set(g.to_dag().edges()) == dag_edges(adj)


def test_partition_and_bad_inputs():
    g = ccpg(range(3), d_separation_oracle(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])))
    assert not g.is_dag  # a chain is not identifiable: one part
    with pytest.raises(ValueError, match="singleton"):
        g.to_dag()
    with pytest.raises(ValueError, match="edge_rule"):
        ccpg(range(3), d_separation_oracle(star_dag(3)), edge_rule="x")
    with pytest.raises(ValueError, match="empty"):
        ccpg([], d_separation_oracle(star_dag(3)))
    assert isinstance(ccpg(range(3), d_separation_oracle(star_dag(3))).to_dag(), nx.DiGraph)
