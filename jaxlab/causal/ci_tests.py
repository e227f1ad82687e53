"""Conditional-independence (CI) tests behind one interface.

Every test here is a callable ``ci_test(u, v, cond) -> bool`` that returns ``True`` when it
accepts ``u ⟂ v | cond`` (independence) and ``False`` otherwise. Three are provided:

* :func:`fisher_z_test` — Fisher's z-test of a zero partial correlation (Gaussian data); the
  correlation matrix is computed in JAX, batches of queries go through the ``vmap``-ed JAX
  kernel, single queries of a host-side search through the same formula in NumPy (cheaper
  than a device dispatch); answers are memoised on ``(frozenset({u, v}), frozenset(cond))``.
* :func:`d_separation_oracle` — exact answers from d-separation in a known DAG, so that
  structure-learning tests carry no statistical error.
* :class:`CountingCITest` — wraps any of them and counts the distinct and the total queries,
  the cost measure of constraint-based causal discovery.

The graph search that calls these tests (``jaxlab.causal.ccpg``) runs on the host in plain
Python; only the numerics of the Fisher-z test are JAX kernels
(:func:`partial_correlation`, :func:`fisher_z_pvalue`), batched with ``vmap`` over queries.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Protocol

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_range, check_rank
from jaxlab._optional import lazy_import

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_import("networkx", extra="causal")


class CITest(Protocol):
    """``ci_test(u, v, cond) -> bool``: True when ``u ⟂ v | cond`` is accepted."""

    def __call__(self, u: Hashable, v: Hashable, cond: Iterable[Hashable] = ()) -> bool: ...


# ----------------------------------------------------------------------------------------
# Fisher-z: JAX kernels
# ----------------------------------------------------------------------------------------


def correlation_matrix(data: ArrayLike, *, precision: jax.lax.PrecisionLike = None) -> jax.Array:
    """Pearson correlation matrix of the columns of ``data``.

    Args:
      data: ``[N, n]`` samples (rows) of ``n`` variables (columns).
      precision: the precision of the covariance product (``jax.lax.PrecisionLike``);
        ``None`` multiplies at the ambient ``jax.default_matmul_precision``. TF32 (a GPU's
        default) moves correlations by ~1e-3, which partial correlations amplify;
        ``"highest"`` gives float32 correlations (``docs/precision.md``).

    Returns:
      ``[n, n]`` correlation matrix (NaN entries where ``data`` holds NaN; also under
      ``jit``).

    Example:
      >>> from jaxlab.causal import correlation_matrix
      >>> x = jnp.array([[0.0, 1.0], [1.0, 3.0], [2.0, 5.0]])
      >>> correlation_matrix(x).round(3).tolist()
      [[1.0, 1.0], [1.0, 1.0]]
    """
    x = as_float("data", data, ndim=2).astype(jnp.float32)
    if x.shape[0] < 2:
        raise ValueError(f"data needs at least 2 rows, got shape {x.shape}")
    x = x - x.mean(axis=0, keepdims=True)
    cov = jnp.matmul(x.T, x, precision=precision)
    scale = jnp.sqrt(jnp.diag(cov))
    return cov / (scale[:, None] * scale[None, :])


def partial_correlation(corr: ArrayLike, idx: ArrayLike) -> jax.Array:
    """Partial correlation of ``idx[0]`` and ``idx[1]`` given ``idx[2:]``.

    With ``P = (C[idx, idx])⁻¹`` the precision matrix of the selected block of the
    correlation matrix ``C`` (argument ``corr``),

        ρ(u, v | S) = −P₀₁ / √(P₀₀ P₁₁).

    Args:
      corr: ``[n, n]`` correlation matrix.
      idx: ``[2 + k]`` integer indices ``(u, v, s₁, …, s_k)``; batch with ``jax.vmap``.

    Returns:
      scalar partial correlation.

    Example:
      >>> from jaxlab.causal import partial_correlation
      >>> c = jnp.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.4], [0.3, 0.4, 1.0]])
      >>> round(float(partial_correlation(c, jnp.array([0, 1, 2]))), 3)  # (.5-.12)/√(.91·.84)
      0.435
    """
    corr, idx = _check_query(corr, idx)
    sub = corr[idx[:, None], idx[None, :]]
    prec = jnp.linalg.inv(sub)
    return -prec[0, 1] / jnp.sqrt(prec[0, 0] * prec[1, 1])


def fisher_z_pvalue(corr: ArrayLike, idx: ArrayLike, num_samples: int) -> jax.Array:
    """Two-sided p-value of Fisher's z-test of ``ρ(u, v | S) = 0``.

        z = ½ log((1 + ρ) / (1 − ρ)),   T = √(N − |S| − 3) · |z|,   p = 2 (1 − Φ(T)),

    with ``N`` (argument ``num_samples``) the number of samples and ``|S| = len(idx) − 2``.

    Args:
      corr: ``[n, n]`` correlation matrix.
      idx: ``[2 + k]`` integer indices ``(u, v, s₁, …, s_k)``; batch with ``jax.vmap``.
      num_samples: the number of rows the correlation matrix was computed from, an int
        ``≥ len(idx) + 2`` (unchecked when traced).

    Returns:
      scalar p-value.

    Example:
      >>> from jaxlab.causal import fisher_z_pvalue
      >>> c = jnp.eye(3)
      >>> float(fisher_z_pvalue(c, jnp.array([0, 1, 2]), 100))
      1.0
    """
    idx = jnp.asarray(idx)
    k = idx.shape[-1] - 2
    if not isinstance(num_samples, jax.core.Tracer):
        check_integer("num_samples", num_samples, low=k + 4)
    rho = partial_correlation(corr, idx)
    rho = jnp.clip(rho, -1.0 + 1e-7, 1.0 - 1e-7)
    z = 0.5 * jnp.log1p(2.0 * rho / (1.0 - rho))  # atanh, stable near 0
    stat = jnp.sqrt(num_samples - k - 3.0) * jnp.abs(z)
    return 2.0 * jax.scipy.special.ndtr(-stat)


def _check_query(corr: ArrayLike, idx: ArrayLike) -> tuple[jax.Array, jax.Array]:
    corr = as_float("corr", corr, ndim=2)
    if corr.shape[0] != corr.shape[1]:
        raise ValueError(f"corr must be square [n, n], got shape {corr.shape}")
    idx = jnp.asarray(idx)
    check_rank("idx", idx, 1)
    if not jnp.issubdtype(idx.dtype, jnp.integer) or idx.shape[0] < 2:
        raise ValueError(f"idx must be [2 + k] integer indices, got {idx.dtype} {idx.shape}")
    return corr, idx


@jax.jit
def _batched_pvalues(corr: jax.Array, idx: jax.Array, num_samples: int) -> jax.Array:
    return jax.vmap(fisher_z_pvalue, in_axes=(None, 0, None))(corr, idx, num_samples)


def _host_pvalue(corr: np.ndarray, idx: tuple[int, ...], num_samples: int) -> float:
    """:func:`fisher_z_pvalue` for one query on the host.

    The graph searches ask one query at a time; a device dispatch per query costs more than
    the ``(2 + k)²`` inverse, so single queries run the same formula in NumPy on the
    JAX-computed correlation matrix. The tests check both paths agree.
    """
    sub = corr[np.ix_(idx, idx)]
    prec = np.linalg.inv(sub)
    rho = -prec[0, 1] / np.sqrt(prec[0, 0] * prec[1, 1])
    rho = min(max(rho, -1.0 + 1e-7), 1.0 - 1e-7)
    stat = np.sqrt(num_samples - len(idx) + 2 - 3) * abs(np.arctanh(rho))
    return float(2.0 * scipy.special.ndtr(-stat))


# ----------------------------------------------------------------------------------------
# Fisher-z: the CI-test object
# ----------------------------------------------------------------------------------------


class FisherZTest:
    """Fisher-z CI test on Gaussian data; build it with :func:`fisher_z_test`."""

    def __init__(self, data: ArrayLike, alpha: float = 1e-3):
        x = np.asarray(data, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"data must be [N, n], got shape {x.shape}")
        num_samples, num_vars = x.shape
        if num_samples < num_vars + 3:
            raise ValueError(
                f"data has {num_samples} rows for {num_vars} variables; Fisher-z needs at "
                f"least n + 3 = {num_vars + 3} rows"
            )
        constant = np.flatnonzero(x.std(axis=0) == 0)
        if constant.size:
            raise ValueError(f"data has constant columns {constant.tolist()}")
        if not np.all(np.isfinite(x)):
            raise ValueError("data holds NaN or inf values: Fisher-z has no answer for them")
        check_range("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        self.alpha = float(alpha)
        self.num_samples = num_samples
        self.num_vars = num_vars
        self.corr = jax.jit(correlation_matrix)(x)  # computed once, in JAX
        self._corr_host = np.asarray(self.corr, dtype=np.float64)
        self._cache: dict[tuple[frozenset, frozenset], float] = {}

    def _index(self, u: Hashable, v: Hashable, cond: Iterable[Hashable]) -> tuple[int, ...]:
        nodes: list[int | np.integer] = []
        for node in (u, v, *set(cond)):
            if not isinstance(node, int | np.integer) or not 0 <= node < self.num_vars:
                raise ValueError(f"unknown node {node!r}; nodes are 0..{self.num_vars - 1}")
            nodes.append(node)
        node_u, node_v, *rest = nodes
        given = tuple(sorted(rest))
        if node_u == node_v or node_u in given or node_v in given:
            raise ValueError(f"u, v and cond must be disjoint, got u={u}, v={v}, cond={given}")
        return (int(node_u), int(node_v), *map(int, given))

    def p_value(self, u: int, v: int, cond: Iterable[int] = ()) -> float:
        """The Fisher-z p-value of ``u ⟂ v | cond`` (memoised)."""
        idx = self._index(u, v, cond)
        key = (frozenset(idx[:2]), frozenset(idx[2:]))
        if key not in self._cache:
            self._cache[key] = _host_pvalue(self._corr_host, idx, self.num_samples)
        return self._cache[key]

    def p_values(self, queries: ArrayLike) -> jax.Array:
        """p-values of a batch ``[q, 2 + k]`` of queries with one conditioning size (no memo)."""
        idx = jnp.asarray(queries, dtype=jnp.int32)
        if idx.ndim != 2 or idx.shape[1] < 2:
            raise ValueError(f"queries must be [q, 2 + k], got shape {idx.shape}")
        return _batched_pvalues(self.corr, idx, self.num_samples)

    def __call__(self, u: int, v: int, cond: Iterable[int] = ()) -> bool:
        return self.p_value(u, v, cond) > self.alpha


def fisher_z_test(data: ArrayLike, alpha: float = 1e-3) -> FisherZTest:
    """Fisher's z CI test for linear-Gaussian data, as ``ci_test(u, v, cond) -> bool``.

    Accepts ``u ⟂ v | S`` when the p-value of :func:`fisher_z_pvalue` exceeds ``alpha``.
    The correlation matrix is computed once (in JAX); answers are memoised on the unordered
    pair and the conditioning set. ``.p_value(u, v, cond)`` gives the p-value and
    ``.p_values(queries)`` a batch of them in one ``vmap``-ed call.

    Args:
      data: ``[N, n]`` samples; needs ``N ≥ n + 3``, no constant column and no NaN or inf
        (refused with a ``ValueError``: a NaN p-value would read as "dependent").
      alpha: significance level (the reference code uses 1e-3).

    Returns:
      the test, a callable ``(u, v, cond) -> bool`` on column indices.

    Example:
      >>> from jaxlab.causal import fisher_z_test
      >>> x = np.random.default_rng(0).normal(size=(500, 3))
      >>> x[:, 2] += x[:, 0] + x[:, 1]          # 0 → 2 ← 1
      >>> ci = fisher_z_test(x, alpha=1e-3)
      >>> ci(0, 1), ci(0, 1, [2])
      (True, False)

    References:
      Fisher, "The distribution of the partial correlation coefficient", Metron, 1924;
      Kalisch & Bühlmann, "Estimating high-dimensional DAGs with the PC-algorithm", JMLR 2007.
    """
    return FisherZTest(data, alpha)


# ----------------------------------------------------------------------------------------
# d-separation oracle
# ----------------------------------------------------------------------------------------


def as_digraph(dag: nx.DiGraph | ArrayLike) -> nx.DiGraph:
    """A networkx DAG from a ``DiGraph`` or a 0/1 adjacency ``[n, n]`` (``adj[i, j]`` = i → j).

    Raises:
      ValueError: a non-square adjacency matrix or a graph with a directed cycle.
    """
    if isinstance(dag, nx.DiGraph):
        graph = dag.copy()
    else:
        adj = np.asarray(dag)
        if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
            raise ValueError(f"adjacency must be [n, n], got shape {adj.shape}")
        graph = nx.DiGraph()
        graph.add_nodes_from(range(adj.shape[0]))
        graph.add_edges_from(zip(*np.nonzero(adj), strict=True))
        graph = nx.relabel_nodes(graph, int)
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError(f"dag has a directed cycle: {nx.find_cycle(graph)}")
    return graph


class DSeparationOracle:
    """Exact CI answers from d-separation; build it with :func:`d_separation_oracle`."""

    def __init__(self, dag: nx.DiGraph | ArrayLike):
        self.graph = as_digraph(dag)
        self.nodes = frozenset(self.graph.nodes)
        self._parents = {v: tuple(self.graph.predecessors(v)) for v in self.graph}
        self._children = {v: tuple(self.graph.successors(v)) for v in self.graph}

    def _reachable(self, source: Hashable, cond: frozenset) -> set:
        """Nodes d-connected to ``source`` given ``cond`` (Koller & Friedman, Alg. 3.1)."""
        # Ancestors of the conditioning set (inclusive): where colliders are open.
        ancestors, stack = set(), list(cond)
        while stack:
            node = stack.pop()
            if node not in ancestors:
                ancestors.add(node)
                stack.extend(self._parents[node])
        # Breadth-first search over (node, direction) trails; "up" = reached from a child.
        reached, visited = set(), set()
        frontier = [(source, "up")]
        while frontier:
            node, direction = frontier.pop()
            if (node, direction) in visited:
                continue
            visited.add((node, direction))
            if node not in cond:
                reached.add(node)
            if direction == "up" and node not in cond:
                frontier.extend((p, "up") for p in self._parents[node])
                frontier.extend((c, "down") for c in self._children[node])
            elif direction == "down":
                if node not in cond:  # chain/fork through an unobserved node
                    frontier.extend((c, "down") for c in self._children[node])
                if node in ancestors:  # collider with an observed descendant: open
                    frontier.extend((p, "up") for p in self._parents[node])
        return reached

    def __call__(self, u: Hashable, v: Hashable, cond: Iterable[Hashable] = ()) -> bool:
        cond = frozenset(cond)
        for node in (u, v, *cond):
            if node not in self.nodes:
                raise ValueError(f"unknown node {node!r}; the DAG has nodes {sorted(self.nodes)}")
        if u == v or u in cond or v in cond:
            raise ValueError(f"u, v and cond must be disjoint, got u={u}, v={v}, cond={cond}")
        return v not in self._reachable(u, cond)


def d_separation_oracle(dag: nx.DiGraph | ArrayLike) -> DSeparationOracle:
    """The perfect CI test of a known DAG: ``ci_test(u, v, cond)`` is ``u ⊥_d v | cond``.

    Hand-written reachability ("Bayes ball", Koller & Friedman 2009, Algorithm 3.1) over
    the DAG; the tests check it against ``networkx.is_d_separator``.

    Args:
      dag: a networkx ``DiGraph`` or a 0/1 adjacency matrix ``[n, n]`` with ``adj[i, j] = 1``
        for the edge i → j.

    Returns:
      the oracle, a callable ``(u, v, cond) -> bool``.

    Raises:
      ValueError: a cyclic graph; later, queries on unknown nodes.

    Example:
      >>> from jaxlab.causal import d_separation_oracle
      >>> ci = d_separation_oracle(np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]]))
      >>> ci(0, 1), ci(0, 1, [2])   # collider 0 → 2 ← 1
      (True, False)

    References:
      Pearl, "Probabilistic Reasoning in Intelligent Systems", 1988; Koller & Friedman,
      "Probabilistic Graphical Models", MIT Press, 2009.
    """
    return DSeparationOracle(dag)


# ----------------------------------------------------------------------------------------
# Counting wrapper
# ----------------------------------------------------------------------------------------


class CountingCITest:
    """Counts the queries made to a CI test; memoises its answers.

    ``num_distinct`` counts distinct queries (the unordered pair and the conditioning set),
    ``num_total`` every call, so algorithms are compared on one cost measure whatever their
    own caching does.

    Example:
      >>> from jaxlab.causal import CountingCITest, d_separation_oracle
      >>> ci = CountingCITest(d_separation_oracle(np.array([[0, 1], [0, 0]])))
      >>> ci(0, 1), ci(1, 0), (ci.num_distinct, ci.num_total)
      (False, False, (1, 2))
    """

    def __init__(self, ci_test: Callable[..., bool]):
        self.ci_test = ci_test
        self.num_total = 0
        self._answers: dict[tuple[frozenset, frozenset], bool] = {}

    @property
    def num_distinct(self) -> int:
        return len(self._answers)

    def __call__(self, u: Hashable, v: Hashable, cond: Iterable[Hashable] = ()) -> bool:
        cond = frozenset(cond)
        key = (frozenset((u, v)), cond)
        self.num_total += 1
        if key not in self._answers:
            self._answers[key] = bool(self.ci_test(u, v, cond))
        return self._answers[key]
