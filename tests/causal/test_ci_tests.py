"""CI tests against independent references: networkx d-separation, causal-learn, scipy."""

import itertools

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
import scipy.stats
from jax.test_util import check_grads

from jaxlab.causal import (
    CountingCITest,
    correlation_matrix,
    d_separation_oracle,
    fisher_z_pvalue,
    fisher_z_test,
    partial_correlation,
    random_weights,
    sample_linear_gaussian,
)
from tests.precision import assert_takes_precision


def _random_dag(n, p, rng):
    adj = np.triu(rng.random((n, n)) < p, k=1).astype(int)
    perm = rng.permutation(n)
    return adj[np.ix_(perm, perm)]


@pytest.mark.parametrize("seed", range(4))
def test_oracle_matches_networkx_d_separation(seed):
    rng = np.random.default_rng(seed)
    adj = _random_dag(9, 0.3, rng)
    graph = nx.DiGraph(adj)
    oracle = d_separation_oracle(adj)
    for _ in range(150):
        u, v = rng.choice(9, size=2, replace=False)
        rest = [x for x in range(9) if x not in (u, v)]
        cond = set(rng.choice(rest, size=rng.integers(0, 5), replace=False).tolist())
        expected = nx.is_d_separator(graph, {int(u)}, {int(v)}, cond)
        assert oracle(int(u), int(v), cond) == expected


def test_oracle_accepts_digraph_with_names():
    g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d")])
    ci = d_separation_oracle(g)
    assert ci("a", "b") and not ci("a", "b", {"d"}) and ci("a", "d", {"c"})


def _scipy_partial_corr_pvalue(x, u, v, cond):
    """Reference: residuals of least-squares regressions on the conditioning set."""
    n = x.shape[0]
    z = np.column_stack([np.ones(n), x[:, list(cond)]])
    ru = x[:, u] - z @ np.linalg.lstsq(z, x[:, u], rcond=None)[0]
    rv = x[:, v] - z @ np.linalg.lstsq(z, x[:, v], rcond=None)[0]
    r = scipy.stats.pearsonr(ru, rv)[0]
    stat = np.sqrt(n - len(cond) - 3) * abs(np.arctanh(r))
    return 2 * scipy.stats.norm.sf(stat)


@pytest.fixture(scope="module")
def gaussian_data():
    adj = np.zeros((6, 6), int)
    adj[0, 2] = adj[1, 2] = adj[2, 3] = adj[4, 3] = adj[3, 5] = 1
    key = jax.random.key(0)
    w = random_weights(key, adj)
    return np.asarray(sample_linear_gaussian(jax.random.key(1), w, 400), dtype=np.float64)


def test_fisher_z_pvalues_match_scipy_and_causal_learn(gaussian_data):
    from causallearn.utils.cit import CIT

    x = gaussian_data
    ours = fisher_z_test(x)
    theirs = CIT(x, "fisherz")
    for u, v in itertools.combinations(range(6), 2):
        rest = [c for c in range(6) if c not in (u, v)]
        for cond in [(), tuple(rest[:1]), tuple(rest[:3])]:
            p = ours.p_value(u, v, cond)
            # float32 numerics: compare p-values on an absolute scale and log scale
            np.testing.assert_allclose(p, theirs(u, v, list(cond)), atol=2e-3, rtol=2e-2)
            np.testing.assert_allclose(
                p, _scipy_partial_corr_pvalue(x, u, v, cond), atol=2e-3, rtol=2e-2
            )


def test_fisher_z_decisions_and_memo(gaussian_data):
    ci = fisher_z_test(gaussian_data, alpha=1e-3)
    assert ci(0, 1) and not ci(0, 1, [2]) and not ci(0, 2)
    ci(0, 1, [2])
    assert len(ci._cache) == 3


def test_batched_pvalues_equal_single_queries_under_jit_and_vmap(gaussian_data):
    ci = fisher_z_test(gaussian_data)
    queries = np.array([[0, 1, 2], [0, 3, 2], [4, 5, 3], [1, 4, 0]])
    batched = np.asarray(ci.p_values(queries))
    single = [ci.p_value(int(q[0]), int(q[1]), [int(q[2])]) for q in queries]
    np.testing.assert_allclose(batched, single, rtol=1e-5, atol=1e-7)
    jitted = jax.jit(fisher_z_pvalue, static_argnums=2)(ci.corr, jnp.array([0, 1, 2]), 400)
    np.testing.assert_allclose(float(jitted), single[0], rtol=1e-5, atol=1e-7)


def test_partial_correlation_closed_form_and_grads():
    c = jnp.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.4], [0.3, 0.4, 1.0]])
    expected = (0.5 - 0.3 * 0.4) / np.sqrt((1 - 0.3**2) * (1 - 0.4**2))
    np.testing.assert_allclose(partial_correlation(c, jnp.array([0, 1, 2])), expected, rtol=1e-5)
    check_grads(
        lambda m: partial_correlation(m, jnp.array([0, 1, 2])),
        (c,),
        order=1,
        modes=("rev",),
        atol=1e-2,
        rtol=1e-2,
    )


def test_correlation_matrix_matches_numpy(gaussian_data):
    # Compared at float32 precision: a GPU's default TF32 moves correlations by ~1e-3.
    corr = correlation_matrix(gaussian_data, precision="highest")
    np.testing.assert_allclose(corr, np.corrcoef(gaussian_data.T), atol=1e-5)


def test_correlation_matrix_multiplies_at_the_precision_it_is_given():
    assert_takes_precision(correlation_matrix, jnp.ones((4, 3)), count=1)


def test_counting_wrapper_counts_distinct_and_total():
    base = d_separation_oracle(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    ci = CountingCITest(base)
    assert not ci(0, 2) and ci(0, 2, {1}) and ci(2, 0, [1])
    assert (ci.num_distinct, ci.num_total) == (2, 3)


def test_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="rows"):
        fisher_z_test(rng.normal(size=(6, 4)))
    x = rng.normal(size=(50, 3))
    x[:, 1] = 2.0
    with pytest.raises(ValueError, match="constant"):
        fisher_z_test(x)
    with pytest.raises(ValueError, match="data must be"):
        fisher_z_test(np.zeros(10))
    ci = fisher_z_test(rng.normal(size=(50, 3)))
    with pytest.raises(ValueError, match="unknown node"):
        ci(0, 7)
    with pytest.raises(ValueError, match="disjoint"):
        ci(0, 1, [1])
    with pytest.raises(ValueError, match="cycle"):
        d_separation_oracle(np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="unknown node"):
        d_separation_oracle(np.array([[0, 1], [0, 0]]))(0, 5)
    with pytest.raises(ValueError, match=r"\[n, n\]"):
        d_separation_oracle(np.zeros((2, 3)))
