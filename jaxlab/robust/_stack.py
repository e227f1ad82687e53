"""Helpers shared by the aggregators: stacked pytrees <-> one ``[m, d]`` matrix, checks.

Every aggregator accepts the worker vectors stacked on the leading axis, either as one
array ``[m, ...]`` or as a pytree whose leaves are all ``[m, ...]``. Internally each worker
is one flat row of a ``[m, d]`` matrix; the result row ``[d]`` is reshaped back to the
input's structure without the leading axis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Unflatten = Callable[[jax.Array], Any]


def stack_to_matrix(x: Any, name: str = "x") -> tuple[jax.Array, Unflatten]:
    """Flattens a stacked pytree ``[m, ...]`` into ``[m, d]``; returns it and the inverse.

    The inverse maps a flat vector ``[d]`` to the pytree structure of one worker.
    Integer inputs are promoted to the default float dtype.
    """
    leaves, treedef = jax.tree_util.tree_flatten(x)
    if not leaves:
        raise ValueError(f"{name} must contain at least one array, got an empty pytree")
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    for leaf in leaves:
        if leaf.ndim < 1:
            raise ValueError(
                f"{name} must be stacked on a leading worker axis ([m, ...]), got a leaf of "
                f"shape {leaf.shape}"
            )
    m = leaves[0].shape[0]
    if m < 1:
        raise ValueError(f"{name} needs at least one worker row, got shape {leaves[0].shape}")
    if any(leaf.shape[0] != m for leaf in leaves):
        raise ValueError(
            f"{name}: all leaves need the same leading (worker) size, got "
            f"{[leaf.shape for leaf in leaves]}"
        )
    dtype = jnp.result_type(*leaves, float)
    shapes = [leaf.shape[1:] for leaf in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    matrix = jnp.concatenate([leaf.reshape(m, -1).astype(dtype) for leaf in leaves], axis=1)

    def unflatten(vector: jax.Array) -> Any:
        parts = jnp.split(vector, np.cumsum(sizes)[:-1].tolist()) if len(sizes) > 1 else [vector]
        return jax.tree_util.tree_unflatten(
            treedef, [p.reshape(s) for p, s in zip(parts, shapes, strict=True)]
        )

    return matrix, unflatten


def vector_like(center: Any, unflatten_dim: int, name: str = "center") -> jax.Array:
    """Flattens one worker-shaped pytree (no leading axis) into ``[d]``."""
    leaves = [jnp.asarray(leaf) for leaf in jax.tree_util.tree_leaves(center)]
    vector = jnp.concatenate([leaf.reshape(-1) for leaf in leaves]) if leaves else jnp.zeros(0)
    if vector.shape != (unflatten_dim,):
        raise ValueError(
            f"{name} must have the shape of one worker vector ({unflatten_dim} values), got "
            f"{vector.shape[0]} values"
        )
    return vector


def check_num_byzantine(num_byzantine: int, m: int, name: str = "num_byzantine") -> int:
    """Checks ``0 <= f < m / 2`` (a Byzantine majority cannot be tolerated)."""
    if isinstance(num_byzantine, bool) or not isinstance(num_byzantine, int | np.integer):
        raise ValueError(f"{name} must be a Python int, got {num_byzantine!r}")
    f = int(num_byzantine)
    if f < 0:
        raise ValueError(f"{name} must be >= 0, got {f}")
    if 2 * f >= m:
        raise ValueError(
            f"{name}={f} is impossible with m={m} workers: robust aggregation needs f < m/2"
        )
    return f


def finite_rows(x: jax.Array) -> jax.Array:
    """``[m]`` bool: the rows of ``x: [m, d]`` whose entries are all finite."""
    # x * 0 is 0 for finite entries and NaN for ±inf / NaN; a row sum is a fast reduction.
    return jnp.isfinite(jnp.sum(x * jnp.zeros((), x.dtype), axis=1))


def zero_bad_rows(x: jax.Array, good: jax.Array) -> jax.Array:
    """Replaces non-finite rows by zeros so they cannot leak NaN into sums (0 * inf)."""
    return jnp.where(good[:, None], x, jnp.zeros((), x.dtype))


def squared_distances_to(x: jax.Array, point: jax.Array, good: jax.Array) -> jax.Array:
    """``[m]``: ‖x_i − point‖², +inf for non-finite rows."""
    diff = zero_bad_rows(x, good) - point[None, :]
    return jnp.where(good, jnp.sum(diff * diff, axis=1), jnp.inf)


def squared_distances_to_computed_point(x: jax.Array, point: jax.Array) -> jax.Array:
    """``[m]``: ‖x_i − point‖² for ``x: [m, d]`` and a ``point: [d]`` computed from ``x``.

    Same value as ``jnp.sum((x - point) ** 2, axis=1)``, except that every entry is +inf
    (not NaN) when ``point[0]`` is NaN. Why not that one-liner: when ``point`` is a long
    elementwise expression of ``x`` such as the sorting network of CWMed / CWTM, XLA:CPU
    fuses it into the row reduction and emits it very badly: at m = 64, d = 1e5 the fused
    program is an order of magnitude slower than the network and the distances run apart
    (even ``jnp.sum(point)`` is). ``optimization_barrier`` does not prevent it on CPU, nor
    does materialising ``point`` through ``max(stack(...))`` (fused as well).

    XLA does not fuse across a loop boundary, so the reduction runs as the body of a
    ``while_loop`` whose trip count XLA cannot know: it starts at ``isnan(point[0])``, so it
    runs once — or not at all when ``point[0]`` is NaN, where every distance would be NaN
    anyway, leaving the initial +inf. ``point`` enters the loop as an operand and is computed
    once into a buffer. (A ``lax.cond`` would do as well but becomes a ``select`` — fused
    again — under ``vmap``; a loop over column blocks with a static trip count also works
    but its per-block copies cost ≈ 1.5x more at m = 17, d = 1e5.)

    The inputs are wrapped in ``stop_gradient`` (a ``while_loop`` cannot be reverse-mode
    differentiated): use it for distances that only select rows, like CTMA's.
    """
    x = jax.lax.stop_gradient(x)
    point = jax.lax.stop_gradient(point)
    m, d = x.shape
    if d == 0:
        return jnp.zeros(m, x.dtype)

    def reduce_once(carry):
        diff = x - point[None, :]
        return jnp.ones((), jnp.int32), jnp.sum(diff * diff, axis=1)

    first = jnp.isnan(point[0]).astype(jnp.int32)  # 0 in practice, but not a constant
    initial = (first, jnp.full(m, jnp.inf, x.dtype))
    return jax.lax.while_loop(lambda carry: carry[0] < 1, reduce_once, initial)[1]


def gram_matrix(x: jax.Array) -> jax.Array:
    """``[m, m]`` Gram matrix ``x xᵀ`` of ``x: [m, d]``, summed over column blocks of ≈ 2 MB.

    XLA:CPU runs one ``[m, d] × [d, m]`` product with a long contraction 1.5–2.5× slower
    than the sum of the blocks' products (at m ∈ {17, 64}, d ∈ {1e5, 1e6}); at most 64
    blocks keep the program small.
    """
    m, d = x.shape
    block = max((2 << 20) // (4 * m), -(-d // 64))
    dot = lambda a: jnp.matmul(a, a.T, precision=jax.lax.Precision.HIGHEST)
    return sum((dot(x[:, i : i + block]) for i in range(block, d, block)), start=dot(x[:, :block]))


def pairwise_squared_distances(x: jax.Array, good: jax.Array) -> jax.Array:
    """``[m, m]``: ‖x_i − x_j‖² through the Gram matrix (O(m² d) flops, O(m²) memory).

    Entries involving a non-finite row are +inf; the diagonal is 0 for finite rows.
    """
    gram = gram_matrix(zero_bad_rows(x, good))
    sq = jnp.diagonal(gram)  # ‖x_i‖², from the same product
    dist = jnp.maximum(sq[:, None] + sq[None, :] - 2.0 * gram, 0.0)
    m = x.shape[0]
    dist = jnp.where(jnp.eye(m, dtype=bool), 0.0, dist)
    both = good[:, None] & good[None, :]
    return jnp.where(both, dist, jnp.inf)


def weighted_row_sum(weights: jax.Array, x: jax.Array) -> jax.Array:
    """``Σ_i w_i x_i`` as a matrix–vector product.

    XLA:CPU reduces over the leading axis of a ``[m, d]`` array very slowly (``jnp.mean(x,
    axis=0)`` at m = 17, d = 1e6); a ``[m] @ [m, d]`` product is over an order of magnitude
    faster.
    """
    return jnp.matmul(weights.astype(x.dtype), x, precision=jax.lax.Precision.HIGHEST)


def masked_weighted_row_sum(weights: jax.Array, x: jax.Array, keep: jax.Array) -> jax.Array:
    """``Σ_{i: keep_i} w_i x_i`` for ``x: [m, d]``; rows with ``keep_i = False`` may be NaN.

    For ``m <= 64`` one fused elementwise sum over the rows (a single read of ``x``, no
    ``[m, d]`` temporary: ``x`` may itself be an unmaterialised expression such as
    ``matrix - v``); above that a copy with the dropped rows zeroed and a matrix–vector
    product (see weighted_row_sum).
    """
    zero = jnp.zeros((), x.dtype)
    weights = weights.astype(x.dtype)
    if x.shape[0] > 64:
        return weighted_row_sum(weights, jnp.where(keep[:, None], x, zero))
    terms = [jnp.where(keep[i], weights[i] * x[i], zero) for i in range(x.shape[0])]
    return sum(terms[1:], start=terms[0])


def sum_rows(rows: jax.Array) -> jax.Array:
    """``Σ_i rows[i]``: one fused elementwise sum for a few rows, a matrix–vector product
    from 48 rows on (measured on XLA:CPU: at m = 64 the product is ≈ 2× faster, at m ≤ 32 the
    fused sum; see weighted_row_sum)."""
    if rows.shape[0] >= 48:
        return weighted_row_sum(jnp.ones(rows.shape[0], rows.dtype), rows)
    return sum([rows[i] for i in range(1, rows.shape[0])], start=rows[0])


def mean_of_rows(x: jax.Array, indices: jax.Array) -> jax.Array:
    """Mean of the rows ``x[indices]`` (a gather: no 0 * inf from unselected rows)."""
    return sum_rows(jnp.take(x, indices, axis=0)) / indices.shape[0]
