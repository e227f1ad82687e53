"""Contextual stochastic block model (CSBM): graphs with known homophily.

Nodes get one of ``c`` balanced classes; features are ``μ_y + N(0, σ²I)`` with random
class means of norm ``signal``; each of ``num_edges`` undirected edges picks a random
sender and, with probability ``homophily``, a receiver of the same class (otherwise of a
different class) — equivalently intra/inter-class edge probabilities
``p ∝ h`` and ``q ∝ (1 − h)/(c − 1)``. The edge homophily of the result is ≈ ``h``.

References:
  Deshpande, Sen, Montanari, Mossel. "Contextual Stochastic Block Models". NeurIPS 2018.
"""

from __future__ import annotations

import jax
import numpy as np
import scipy.sparse as sp

from jaxlab._checks import check_integer, check_key, check_range


def csbm(
    key: jax.Array,
    num_nodes: int,
    num_edges: int,
    *,
    num_classes: int = 2,
    num_features: int = 16,
    homophily: float = 0.8,
    signal: float = 1.0,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Samples a CSBM graph.

    Args:
      key: JAX PRNG key; the graph is drawn in numpy from a generator seeded with the
        key's bits (one draw per key, on the host).
      num_nodes: ``n``.
      num_edges: number of undirected edges drawn, ``≥ 0`` (duplicates and self-pairs
        removed).
      num_classes: ``c``, ``2 ≤ c ≤ n``.
      num_features: ``d ≥ 1``.
      homophily: probability in ``[0, 1]`` that an edge joins two nodes of one class.
      signal: norm ``≥ 0`` of each class mean (feature signal-to-noise with unit noise).

    Returns:
      ``(adj [n, n] symmetric CSR 0/1, features [n, d] float32, labels [n] int32)``.
    """
    check_key("key", key)
    check_integer("num_nodes", num_nodes, low=2)
    check_integer("num_edges", num_edges, low=0)
    check_integer("num_classes", num_classes, low=2)
    check_integer("num_features", num_features, low=1)
    check_range("homophily", homophily, 0.0, 1.0)
    check_range("signal", signal, 0.0, None)
    if num_nodes < num_classes:
        raise ValueError(f"num_classes must be <= num_nodes, got {num_classes} > {num_nodes}")
    bits = (
        jax.random.key_data(key) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    )
    rng = np.random.default_rng(np.asarray(bits).ravel())
    labels = (np.arange(num_nodes) % num_classes).astype(np.int32)
    rng.shuffle(labels)
    means = rng.normal(size=(num_classes, num_features))
    means *= signal / np.linalg.norm(means, axis=1, keepdims=True)
    features = (means[labels] + rng.normal(size=(num_nodes, num_features))).astype(np.float32)
    by_class = [np.flatnonzero(labels == k) for k in range(num_classes)]
    senders = rng.integers(0, num_nodes, num_edges)
    same = rng.random(num_edges) < homophily
    shift = rng.integers(1, num_classes, num_edges)
    target_class = np.where(same, labels[senders], (labels[senders] + shift) % num_classes)
    receivers = np.empty(num_edges, np.int64)
    for k in range(num_classes):
        pick = target_class == k
        receivers[pick] = rng.choice(by_class[k], pick.sum())
    adj = sp.coo_matrix(
        (np.ones(num_edges, np.float32), (senders, receivers)), shape=(num_nodes, num_nodes)
    ).tocsr()
    adj = adj + adj.T
    adj.setdiag(0)
    adj.eliminate_zeros()
    adj.data[:] = 1.0
    return adj.tocsr(), features, labels


def edge_homophily(adj: sp.spmatrix, labels: np.ndarray) -> float:
    """Fraction of the stored edges of ``adj: [n, n]`` whose endpoints share a label.

    NaN for a graph without edges (the fraction is undefined).
    """
    coo = sp.coo_matrix(adj)
    labels = np.asarray(labels)
    if coo.shape[0] != coo.shape[1] or labels.shape != (coo.shape[0],):
        raise ValueError(f"adj must be [n, n] and labels [n], got {coo.shape} and {labels.shape}")
    if coo.nnz == 0:
        return float("nan")
    return float(np.mean(labels[coo.row] == labels[coo.col]))
