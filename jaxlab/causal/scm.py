"""Linear-Gaussian structural causal models and the DAG families of the CCPG experiments.

Graphs are 0/1 adjacency matrices ``adj: [n, n]`` with ``adj[i, j] = 1`` for i → j, nodes
topologically ordered by index. Sampling is a JAX kernel (``X = E (I − W)⁻¹``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range, numpy_seed


def _square(adj: ArrayLike) -> np.ndarray:
    adj = np.asarray(adj)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be a square [n, n] adjacency matrix, got shape {adj.shape}")
    if np.issubdtype(adj.dtype, np.floating) and np.isnan(adj).any():
        raise ValueError("adj holds NaN")
    return adj


def star_dag(n: int) -> np.ndarray:
    """The star/collider DAG: nodes ``0 … n-2`` all point into the sink ``n-1``.

    Every edge sits in a v-structure, so the DAG is identifiable from observational data,
    and PC must test each edge against all subsets of the sink's other parents.
    """
    if n < 3:
        raise ValueError(f"n must be ≥ 3 for a star DAG with a v-structure, got {n}")
    adj = np.zeros((n, n), dtype=np.int8)
    adj[:-1, -1] = 1
    return adj


def vstructure_chain_dag(depth: int) -> np.ndarray:
    """A chain of v-structures ``0 → 2 ← 1``, ``2 → 4 ← 3``, ``4 → 6 ← 5``, …

    ``depth`` colliders, ``2 · depth + 1`` nodes; identifiable and deeper than a star (a
    directed path of length ``depth`` runs through it).
    """
    if depth < 1:
        raise ValueError(f"depth must be ≥ 1, got {depth}")
    n = 2 * depth + 1
    adj = np.zeros((n, n), dtype=np.int8)
    adj[0, 2] = adj[1, 2] = 1
    for k in range(1, depth):
        collider, spine, extra = 2 * k + 2, 2 * k, 2 * k + 1
        adj[spine, collider] = adj[extra, collider] = 1
    return adj


def random_vstructure_dag(
    n: int, key: jax.Array, max_parents: int = 3, p_root: float = 0.25
) -> np.ndarray:
    """A random DAG in which every edge sits in a v-structure (hence identifiable).

    Nodes are added in order; each node after the first two is a root with probability
    ``p_root`` and otherwise gets 2 … ``max_parents`` pairwise non-adjacent earlier nodes
    as parents (so each of its edges is in a v-structure with another).
    """
    check_integer("n", n, low=3)
    check_integer("max_parents", max_parents, low=2)
    check_range("p_root", p_root, 0.0, 1.0)
    rng = np.random.default_rng(numpy_seed("key", key))
    adj = np.zeros((n, n), dtype=np.int8)
    for v in range(2, n):
        if rng.random() < p_root and v < n - 1:
            continue
        k = int(rng.integers(2, max_parents + 1))
        chosen: list[int] = []
        for c in rng.permutation(v):
            if all(adj[c, d] == 0 and adj[d, c] == 0 for d in chosen):
                chosen.append(int(c))
            if len(chosen) == k:
                break
        if len(chosen) >= 2:
            adj[chosen, v] = 1
    return adj


def all_edges_in_vstructures(adj: ArrayLike) -> bool:
    """True when each edge u → v has another parent w of v not adjacent to u."""
    edge: np.ndarray = _square(adj) != 0
    skeleton = edge | edge.T
    for u, v in zip(*np.nonzero(edge), strict=True):
        if not any(w != u and not skeleton[u, w] for w in np.flatnonzero(edge[:, v])):
            return False
    return True


def random_weights(key: jax.Array, adj: ArrayLike, low: float = 0.25, high: float = 1.0):
    """Edge weights ``±U(low, high)`` on the edges of ``adj`` (zero elsewhere): ``[n, n]``."""
    adj = jnp.asarray(_square(adj), dtype=jnp.float32)
    check_key("key", key)
    check_range("low", low, 0.0)
    check_range("high", high, low)
    k_mag, k_sign = jax.random.split(key)
    mag = jax.random.uniform(k_mag, adj.shape, minval=low, maxval=high)
    sign = jnp.where(jax.random.bernoulli(k_sign, 0.5, adj.shape), 1.0, -1.0)
    return adj * mag * sign


def sample_linear_gaussian(
    key: jax.Array, weights: ArrayLike, num_samples: int, standardize: bool = True
) -> jax.Array:
    """Samples a linear-Gaussian SCM ``x_j = Σ_i W_ij x_i + ε_j``, ``ε ~ N(0, 1)``.

    In matrix form ``X = E (I − W)⁻¹`` for noise rows ``E: [N, n]``.

    Args:
      key: PRNG key.
      weights: ``[n, n]`` weighted adjacency (``W_ij`` on i → j) of a DAG.
      num_samples: N.
      standardize: scale each column to zero mean and unit variance (the reference does).

    Returns:
      ``[N, n]`` samples.

    Example:
      >>> from jaxlab.causal import sample_linear_gaussian
      >>> w = jnp.array([[0.0, 2.0], [0.0, 0.0]])
      >>> x = sample_linear_gaussian(jax.random.key(0), w, 20000, standardize=False)
      >>> round(float(jnp.var(x[:, 1])), 1)   # 2² · 1 + 1
      5.0
    """
    w = jnp.asarray(weights, dtype=jnp.float32)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be [n, n], got shape {w.shape}")
    check_integer("num_samples", num_samples, low=2 if standardize else 1)
    check_key("key", key)
    n = w.shape[0]
    noise = jax.random.normal(key, (num_samples, n))
    x = jnp.linalg.solve((jnp.eye(n) - w).T, noise.T).T  # X (I − W) = E
    if standardize:
        x = (x - x.mean(0, keepdims=True)) / x.std(0, keepdims=True)
    return x


def dag_edges(adj: ArrayLike) -> set[tuple[int, int]]:
    """The edge set ``{(i, j): adj[i, j] ≠ 0}``."""
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(_square(adj)), strict=True)}


def is_topological(adj: ArrayLike, order) -> bool:
    """True when no edge of ``adj`` points from a later to an earlier element of ``order``."""
    rank = {v: r for r, v in enumerate(order)}
    n = _square(adj).shape[0]
    if sorted(rank) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}, got {list(order)}")
    return all(rank[i] <= rank[j] for i, j in dag_edges(adj))


__all__ = [
    "all_edges_in_vstructures",
    "dag_edges",
    "is_topological",
    "random_vstructure_dag",
    "random_weights",
    "sample_linear_gaussian",
    "star_dag",
    "vstructure_chain_dag",
]
