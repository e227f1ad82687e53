"""Bad input, one row per argument of every public ``jaxlab.causal`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import causal
from tests.bad_inputs import KEY, NAN, Case, case_id, check

Y01 = jnp.array([0.0, 1.0, 1.0, 0.0])
T01 = jnp.array([0, 1, 1, 0])
E4 = jnp.full(4, 0.5)
ADJ3 = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
DATA = np.random.default_rng(0).normal(size=(40, 3))
CORR = jnp.eye(3)
ORACLE = causal.d_separation_oracle(ADJ3)

CASES = [
    Case("causal.cell_table", "t", lambda: causal.cell_table(Y01, T01[:3], T01)),
    Case("causal.cell_table", "y", lambda: causal.cell_table(Y01.at[0].set(NAN), T01, T01)),
    Case(
        "causal.check_instrument_strata",
        "num_z",
        lambda: causal.check_instrument_strata(T01, T01, 0),
    ),
    Case(
        "causal.check_instrument_strata",
        "z",
        lambda: causal.check_instrument_strata(jnp.array([0, 1, 5, 0]), T01, 2),
    ),
    Case("causal.fill_cells", "p_t_d0", lambda: causal.fill_cells(E4, jnp.full(4, 1.5), E4, E4)),
    Case("causal.identified_cells", "e", lambda: causal.identified_cells(T01, E4 + 1.0, E4)),
    Case("causal.identified_cells", "mu1", lambda: causal.identified_cells(T01, E4, E4[:2])),
    Case("causal.mu0_bounds_iv", "e_z", lambda: causal.mu0_bounds_iv(E4, -E4, E4, E4)),
    Case("causal.mu0_bounds_msm", "lam", lambda: causal.mu0_bounds_msm(E4, 0.5)),
    Case("causal.mu0_bounds_msm", "mu1", lambda: causal.mu0_bounds_msm(E4 + 2.0, 2.0)),
    Case("causal.mu0_bounds_none", "mu1", lambda: causal.mu0_bounds_none(E4 - 1.0)),
    Case("causal.outcome_bounds_iv", "e_z", lambda: causal.outcome_bounds_iv(E4, E4[:2])),
    Case("causal.regret", "metric", lambda: causal.regret(jnp.ones((2, 2, 2)), "bogus")),
    Case("causal.regret", "v", lambda: causal.regret(jnp.ones(3), "accuracy")),
    Case(
        "causal.regret_interval",
        "kind",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)) / 4, jnp.ones(2) / 2, jnp.zeros(2), jnp.ones(2), "tpr", kind="bogus"
        ),
    ),
    Case(
        "causal.regret_interval",
        "lower",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)) / 4, jnp.ones(2) / 2, jnp.ones(2), jnp.zeros(2), "tpr"
        ),
    ),
    Case(
        "causal.simulate_policy_data",
        "setting",
        lambda: causal.simulate_policy_data(KEY, 10, "bogus"),
    ),
    Case(
        "causal.simulate_policy_data",
        "num_samples",
        lambda: causal.simulate_policy_data(KEY, 0, "msm"),
    ),
    Case(
        "causal.simulate_policy_data",
        "lam",
        lambda: causal.simulate_policy_data(KEY, 10, "msm", lam=0.5),
    ),
    Case("causal.simulate_policy_data", "key", lambda: causal.simulate_policy_data(0, 10, "msm")),
    Case(
        "causal.unobserved_cell_bounds",
        "mu0_upper",
        lambda: causal.unobserved_cell_bounds(T01, E4, E4, E4 - 0.4),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "lam",
        lambda: causal.unobserved_cell_bounds_dr(T01, T01, Y01, E4, E4, 0.0),
    ),
    Case(
        "causal.all_edges_in_vstructures",
        "adj",
        lambda: causal.all_edges_in_vstructures(np.ones((2, 3))),
    ),
    Case("causal.as_digraph", "dag", lambda: causal.as_digraph(np.ones((2, 2)))),
    Case("causal.ccpg", "ci_test", lambda: causal.ccpg(range(3), None)),
    Case("causal.ccpg", "edge_rule", lambda: causal.ccpg(range(3), ORACLE, edge_rule="bogus")),
    Case("causal.correlation_matrix", "data", lambda: causal.correlation_matrix(jnp.ones(3))),
    Case(
        "causal.correlation_matrix",
        "data",
        lambda: causal.correlation_matrix(jnp.asarray(DATA).at[0, 0].set(NAN)),
        "nan",
    ),
    Case(
        "causal.d_separation_oracle",
        "dag",
        lambda: causal.d_separation_oracle(np.array([[0, 1], [1, 0]])),
    ),
    Case("causal.dag_edges", "adj", lambda: causal.dag_edges(np.ones(3))),
    Case(
        "causal.fisher_z_pvalue",
        "num_samples",
        lambda: causal.fisher_z_pvalue(CORR, jnp.array([0, 1, 2]), 3),
    ),
    Case(
        "causal.fisher_z_pvalue",
        "idx",
        lambda: causal.fisher_z_pvalue(CORR, jnp.array([0.0, 1.0]), 30),
    ),
    Case(
        "causal.fisher_z_test",
        "data",
        lambda: causal.fisher_z_test(np.where(np.arange(120).reshape(40, 3) == 5, NAN, DATA)),
    ),
    Case("causal.fisher_z_test", "alpha", lambda: causal.fisher_z_test(DATA, alpha=1.0)),
    Case("causal.is_topological", "order", lambda: causal.is_topological(ADJ3, [0, 1])),
    Case(
        "causal.partial_correlation",
        "corr",
        lambda: causal.partial_correlation(jnp.ones((3, 2)), jnp.array([0, 1])),
    ),
    Case("causal.prefix_set", "ci_test", lambda: causal.prefix_set(range(3), None, [0])),
    Case("causal.prefix_set", "prefix", lambda: causal.prefix_set(range(3), ORACLE, [7])),
    Case("causal.random_vstructure_dag", "key", lambda: causal.random_vstructure_dag(5, 3)),
    Case(
        "causal.random_vstructure_dag",
        "max_parents",
        lambda: causal.random_vstructure_dag(5, KEY, max_parents=1),
    ),
    Case(
        "causal.random_vstructure_dag",
        "p_root",
        lambda: causal.random_vstructure_dag(5, KEY, p_root=1.5),
    ),
    Case("causal.random_weights", "high", lambda: causal.random_weights(KEY, ADJ3, low=2.0)),
    Case("causal.random_weights", "low", lambda: causal.random_weights(KEY, ADJ3, low=-1.0)),
    Case("causal.random_weights", "adj", lambda: causal.random_weights(KEY, np.ones((2, 3)))),
    Case(
        "causal.sample_linear_gaussian",
        "num_samples",
        lambda: causal.sample_linear_gaussian(KEY, ADJ3 * 0.5, 0),
    ),
    Case(
        "causal.sample_linear_gaussian",
        "weights",
        lambda: causal.sample_linear_gaussian(KEY, np.ones((2, 3)), 5),
    ),
    Case("causal.star_dag", "n", lambda: causal.star_dag(1)),
    Case("causal.vstructure_chain_dag", "depth", lambda: causal.vstructure_chain_dag(0)),
    Case("causal.cell_table", "d", lambda: causal.cell_table(Y01, T01, T01 + 2)),
    Case(
        "causal.check_instrument_strata",
        "d",
        lambda: causal.check_instrument_strata(T01, T01[:3], 2),
    ),
    Case("causal.fill_cells", "v1", lambda: causal.fill_cells(jnp.ones(3), E4[:2], E4, E4)),
    Case(
        "causal.fill_cells",
        "b",
        lambda: causal.fill_cells(jnp.ones((2, 2)) / 4, E4[:2], E4[:2], E4[:1]),
    ),
    Case("causal.identified_cells", "t", lambda: causal.identified_cells(T01 + 3, E4, E4)),
    Case(
        "causal.mu0_bounds_iv",
        "mu1",
        lambda: causal.mu0_bounds_iv(jnp.full((2, 4), 0.5), jnp.full((2, 4), 0.5), E4 + 1, E4),
    ),
    Case(
        "causal.mu0_bounds_iv",
        "mu1_z",
        lambda: causal.mu0_bounds_iv(jnp.full((2, 4), 2.0), jnp.full((2, 4), 0.5), E4, E4),
    ),
    Case(
        "causal.outcome_bounds_iv",
        "mu1_z",
        lambda: causal.outcome_bounds_iv(jnp.full((2, 4), NAN), jnp.full((2, 4), 0.5)),
    ),
    Case(
        "causal.regret_interval",
        "metric",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)), jnp.ones(2), jnp.zeros(2), jnp.ones(2), "bogus"
        ),
    ),
    Case(
        "causal.regret_interval",
        "upper",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)), jnp.ones(2), jnp.zeros(2), jnp.ones(3), "tpr"
        ),
    ),
    Case(
        "causal.simulate_policy_data",
        "num_z",
        lambda: causal.simulate_policy_data(KEY, 10, "iv", num_z=1),
    ),
    Case(
        "causal.simulate_policy_data",
        "beta_zd",
        lambda: causal.simulate_policy_data(KEY, 10, "iv", beta_zd=NAN),
    ),
    Case(
        "causal.unobserved_cell_bounds",
        "t",
        lambda: causal.unobserved_cell_bounds(T01 * 0.5, E4, E4, E4),
    ),
    Case(
        "causal.unobserved_cell_bounds",
        "e",
        lambda: causal.unobserved_cell_bounds(T01, E4 * 3, E4, E4),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "y",
        lambda: causal.unobserved_cell_bounds_dr(T01, T01, Y01 + 2, E4, E4, 1.0),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "e",
        lambda: causal.unobserved_cell_bounds_dr(T01, T01, Y01, E4 - 1, E4, 1.0),
    ),
    Case("causal.ccpg", "nodes", lambda: causal.ccpg([], ORACLE)),
    Case(
        "causal.fisher_z_pvalue",
        "corr",
        lambda: causal.fisher_z_pvalue(jnp.ones((3, 2)), jnp.array([0, 1]), 30),
    ),
    Case(
        "causal.partial_correlation",
        "idx",
        lambda: causal.partial_correlation(CORR, jnp.array([[0, 1]])),
    ),
    Case("causal.is_topological", "adj", lambda: causal.is_topological(np.ones(3), [0, 1, 2])),
    Case("causal.random_vstructure_dag", "n", lambda: causal.random_vstructure_dag(2, KEY)),
    Case("causal.random_weights", "key", lambda: causal.random_weights(0, ADJ3)),
    Case(
        "causal.sample_linear_gaussian",
        "key",
        lambda: causal.sample_linear_gaussian(0, ADJ3 * 0.5, 5),
    ),
    Case(
        "causal.fill_cells",
        "a",
        lambda: causal.fill_cells(jnp.ones((2, 2)) / 4, E4[:2], E4[:1], E4[:2]),
    ),
    Case(
        "causal.mu0_bounds_iv",
        "e",
        lambda: causal.mu0_bounds_iv(jnp.full((2, 4), 0.5), jnp.full((2, 4), 0.5), E4, E4 + 1),
    ),
    Case(
        "causal.regret",
        "utility",
        lambda: causal.regret(jnp.ones((2, 2, 2)) / 8, "utility", jnp.ones(3)),
    ),
    Case(
        "causal.regret_interval",
        "v1",
        lambda: causal.regret_interval(jnp.ones(3), jnp.ones(2), jnp.zeros(2), jnp.ones(2), "tpr"),
    ),
    Case(
        "causal.regret_interval",
        "p_t_d0",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)) / 4, jnp.full(2, 2.0), jnp.zeros(2), jnp.ones(2), "tpr"
        ),
    ),
    Case(
        "causal.regret_interval",
        "utility",
        lambda: causal.regret_interval(
            jnp.ones((2, 2)) / 4,
            jnp.ones(2) / 2,
            jnp.zeros(2),
            jnp.ones(2),
            "utility",
            utility=jnp.ones(2),
        ),
    ),
    Case(
        "causal.unobserved_cell_bounds",
        "mu0_lower",
        lambda: causal.unobserved_cell_bounds(T01, E4, E4[:2], E4),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "t",
        lambda: causal.unobserved_cell_bounds_dr(T01 + 2, T01, Y01, E4, E4, 1.0),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "d",
        lambda: causal.unobserved_cell_bounds_dr(T01, T01 - 2, Y01, E4, E4, 1.0),
    ),
    Case(
        "causal.unobserved_cell_bounds_dr",
        "mu1",
        lambda: causal.unobserved_cell_bounds_dr(T01, T01, Y01, E4, E4 + 2, 1.0),
    ),
    Case("causal.prefix_set", "nodes", lambda: causal.prefix_set([], ORACLE, [0])),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
