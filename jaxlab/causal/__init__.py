"""Causal inference kernels: CI tests, CCPG causal discovery, policy comparison bounds.

CCPG's graph search is host-side Python (a combinatorial search over node sets); the
Fisher-z test's numerics, the SCM sampler and the policy-comparison bounds are JAX.
"""

from jaxlab.causal.ccpg import Partition, ccpg, prefix_set
from jaxlab.causal.ci_tests import (
    CountingCITest,
    DSeparationOracle,
    FisherZTest,
    as_digraph,
    correlation_matrix,
    d_separation_oracle,
    fisher_z_pvalue,
    fisher_z_test,
    partial_correlation,
)
from jaxlab.causal.policy import (
    METRICS,
    cell_table,
    fill_cells,
    identified_cells,
    mu0_bounds_iv,
    mu0_bounds_msm,
    mu0_bounds_none,
    outcome_bounds_iv,
    regret,
    regret_interval,
    simulate_policy_data,
    unobserved_cell_bounds,
    unobserved_cell_bounds_dr,
)
from jaxlab.causal.scm import (
    all_edges_in_vstructures,
    dag_edges,
    is_topological,
    random_vstructure_dag,
    random_weights,
    sample_linear_gaussian,
    star_dag,
    vstructure_chain_dag,
)

__all__ = [
    "METRICS",
    "cell_table",
    "fill_cells",
    "identified_cells",
    "mu0_bounds_iv",
    "mu0_bounds_msm",
    "mu0_bounds_none",
    "outcome_bounds_iv",
    "regret",
    "regret_interval",
    "simulate_policy_data",
    "unobserved_cell_bounds",
    "unobserved_cell_bounds_dr",
    "CountingCITest",
    "DSeparationOracle",
    "FisherZTest",
    "Partition",
    "all_edges_in_vstructures",
    "as_digraph",
    "ccpg",
    "correlation_matrix",
    "d_separation_oracle",
    "dag_edges",
    "fisher_z_pvalue",
    "fisher_z_test",
    "is_topological",
    "partial_correlation",
    "prefix_set",
    "random_vstructure_dag",
    "random_weights",
    "sample_linear_gaussian",
    "star_dag",
    "vstructure_chain_dag",
]
