"""Dense-adjacency forms of the graph operators, differentiable in the adjacency.

Gradient-based structure attacks differentiate through a relaxed ``[n, n]`` adjacency;
these helpers give the same operators as the sparse kernels for a dense ``A``
(``A[i, j]``: edge i -> j, symmetric in the attacks).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def row_normalize(x: jax.Array) -> jax.Array:
    """Divides each row of ``[n, d]`` features by its sum (zero-sum rows stay unchanged).

    As the GADC and Pro-GNN reference code's feature preprocessing.

    Example:
      >>> row_normalize(jnp.array([[1.0, 3.0], [0.0, 0.0]])).tolist()
      [[0.25, 0.75], [0.0, 0.0]]
    """
    s = jnp.sum(x, axis=-1, keepdims=True)
    return x * jnp.where(s != 0, 1.0 / jnp.where(s != 0, s, 1.0), 0.0)


def dense_gcn_normalize(adj: jax.Array) -> jax.Array:
    """``D̃^{-1/2}(A + I)D̃^{-1/2}`` for a dense symmetric ``[n, n]`` adjacency (degree ≥ 1)."""
    a = adj + jnp.eye(adj.shape[0], dtype=adj.dtype)
    inv_sqrt = jax.lax.rsqrt(jnp.sum(a, axis=1))
    return inv_sqrt[:, None] * a * inv_sqrt[None, :]


def cosine_matrix(features: jax.Array) -> jax.Array:
    """``[n, n]`` cosine similarities of the rows of ``features`` (0 for zero rows)."""
    norms = jnp.linalg.norm(features, axis=1)
    unit = features * jnp.where(norms > 0, 1.0 / jnp.where(norms > 0, norms, 1.0), 0.0)[:, None]
    return unit @ unit.T


def dense_limit_transition(adj: jax.Array, cosine: jax.Array) -> jax.Array:
    """GADC option IV's ``T = cos ⊙ A + I`` for a dense (relaxed) adjacency."""
    return cosine * adj + jnp.eye(adj.shape[0], dtype=adj.dtype)
