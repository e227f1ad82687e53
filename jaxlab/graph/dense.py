"""Dense-adjacency forms of the graph operators, differentiable in the adjacency.

Gradient-based structure attacks differentiate through a relaxed ``[n, n]`` adjacency;
these helpers give the same operators as the sparse kernels for a dense ``A``
(``A[i, j]``: edge i -> j, symmetric in the attacks).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_square


def row_normalize(x: ArrayLike) -> jax.Array:
    """Divides each row of ``[..., n, d]`` features by its sum (zero-sum rows stay unchanged).

    As the GADC and Pro-GNN reference code's feature preprocessing. Integer features are
    promoted to float32.

    Example:
      >>> row_normalize(jnp.array([[1.0, 3.0], [0.0, 0.0]])).tolist()
      [[0.25, 0.75], [0.0, 0.0]]
    """
    x = as_float("x", x)
    if x.ndim < 1:
        raise ValueError(f"x must have rank >= 1 ([..., d]), got shape {x.shape}")
    s = jnp.sum(x, axis=-1, keepdims=True)
    return x * jnp.where(s != 0, 1.0 / jnp.where(s != 0, s, 1.0), 0.0)


def dense_gcn_propagate(adj: ArrayLike) -> Callable[[jax.Array], jax.Array]:
    """The operator ``v ↦ Â v``, ``Â = D̃^{-1/2}(A + I)D̃^{-1/2}`` (Kipf & Welling Eq. (2)).

    For a dense, possibly relaxed or weighted, non-negative ``[n, n]`` adjacency; ``Â`` is
    applied to the (narrow) ``[n, k]`` operand without being formed: one pass over ``A``
    per product, also in the backward pass. Differentiable in ``adj``. A node of degree 0
    (isolated, before the self-loop) has ``D̃_ii = 1``; the degree is clamped at ``1e-5``
    so a relaxed adjacency with negative row sums gives no NaN.

    Example:
      >>> prop = dense_gcn_propagate(jnp.array([[0.0, 1.0], [1.0, 0.0]]))
      >>> prop(jnp.array([[1.0], [0.0]])).tolist()
      [[0.5], [0.5]]
    """
    adj = as_float("adj", adj)
    check_square("adj", adj)
    inv_sqrt = jax.lax.rsqrt(jnp.maximum(jnp.sum(adj, axis=1) + 1.0, 1e-5))[:, None]

    def propagate(v: jax.Array) -> jax.Array:
        if v.shape[0] != adj.shape[0]:
            raise ValueError(f"v has {v.shape[0]} rows, adj has {adj.shape[0]} nodes")
        u = inv_sqrt * v
        return inv_sqrt * (adj @ u + u)  # D̃^{-1/2}(A + I)D̃^{-1/2} v

    return propagate


def cosine_matrix(features: ArrayLike) -> jax.Array:
    """``[n, n]`` cosine similarities of the rows of ``features: [n, d]`` (0 for zero rows)."""
    features = as_float("features", features, ndim=2)
    norms = jnp.linalg.norm(features, axis=1)
    unit = features * jnp.where(norms > 0, 1.0 / jnp.where(norms > 0, norms, 1.0), 0.0)[:, None]
    return unit @ unit.T


def dense_limit_transition(adj: ArrayLike, cosine: ArrayLike) -> jax.Array:
    """GADC option IV's ``T = cos ⊙ A + I`` for a dense (relaxed) ``[n, n]`` adjacency."""
    adj, cosine = as_float("adj", adj), as_float("cosine", cosine)
    check_square("adj", adj)
    if cosine.shape != adj.shape:
        raise ValueError(f"cosine must have adj's shape {adj.shape}, got {cosine.shape}")
    return cosine * adj + jnp.eye(adj.shape[0], dtype=adj.dtype)
