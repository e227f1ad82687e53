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

import numpy as np
import scipy.sparse as sp


def csbm(
    seed: int,
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
      seed: numpy seed.
      num_nodes: ``n``.
      num_edges: number of undirected edges drawn (duplicates and self-pairs removed).
      num_classes: ``c ≥ 2``.
      num_features: ``d``.
      homophily: probability that an edge joins two nodes of the same class.
      signal: norm of each class mean (feature signal-to-noise with unit noise).

    Returns:
      ``(adj [n, n] symmetric CSR 0/1, features [n, d] float32, labels [n] int32)``.
    """
    if not 0.0 <= homophily <= 1.0:
        raise ValueError(f"homophily must lie in [0, 1], got {homophily}")
    if num_classes < 2 or num_nodes < num_classes:
        raise ValueError(f"need 2 <= num_classes <= num_nodes, got {num_classes}, {num_nodes}")
    rng = np.random.default_rng(seed)
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
    adj = sp.coo_matrix((np.ones(num_edges, np.float32), (senders, receivers)),
                        shape=(num_nodes, num_nodes)).tocsr()
    adj = adj + adj.T
    adj.setdiag(0)
    adj.eliminate_zeros()
    adj.data[:] = 1.0
    return adj.tocsr(), features, labels


def edge_homophily(adj: sp.spmatrix, labels: np.ndarray) -> float:
    """Fraction of edges whose endpoints share a label."""
    coo = sp.coo_matrix(adj)
    return float(np.mean(labels[coo.row] == labels[coo.col]))
