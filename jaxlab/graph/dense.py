"""Dense-adjacency forms of the graph operators, differentiable in the adjacency.

Gradient-based structure attacks differentiate through a relaxed ``[n, n]`` adjacency;
these helpers give the same operators as the sparse kernels for a dense ``A``
(``A[i, j]``: edge i -> j, symmetric in the attacks).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


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
