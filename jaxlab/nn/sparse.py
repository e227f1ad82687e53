"""Sparse normalizers that MultiMax is compared against: sparsemax and entmax-1.5.

Both are exact sort-based algorithms with hand-written JVPs (the derivative of the
thresholding is piecewise linear in the scores; differentiating through ``sort`` and
``cumsum`` would be correct almost everywhere but slow and numerically noisy).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import as_float


def _prepare(x: ArrayLike, axis: int, name: str) -> tuple[jax.Array, int]:
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = as_float("x", x)  # ints promoted, complex refused
    if x.ndim == 0:
        raise ValueError(f"{name}: x must have at least one dimension, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for x of shape {x.shape}")
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: x must be non-empty along axis {axis}, got {x.shape}")
    return x, axis % x.ndim


def _compute_dtype(x: jax.Array) -> jnp.dtype:
    return jnp.promote_types(x.dtype, jnp.float32)


# ----------------------------------------------------------------------------- sparsemax


def sparsemax(x: ArrayLike, axis: int = -1) -> jax.Array:
    """Sparsemax: the Euclidean projection of the scores onto the probability simplex.

    sparsemax(z) = argmin_{p ∈ Δ} ‖p − z‖² = [z − τ(z)]₊, where τ is chosen so the
    result sums to 1 (Martins & Astudillo 2016, Eq. (2)–(4)).

    Args:
      x: scores ``[..., n, ...]``, normalized along ``axis``.
      axis: the axis to normalize over.

    Returns:
      Sparse probabilities, same shape and floating dtype as ``x``.

    Example:
      >>> sparsemax(jnp.array([1.0, 0.5, -2.0]))
      Array([0.75, 0.25, 0.  ], dtype=float32)

    References:
      Martins, Astudillo. From Softmax to Sparsemax: A Sparse Model of Attention and
      Multi-Label Classification. ICML 2016.
    """
    x, axis = _prepare(x, axis, "sparsemax")
    z = jnp.moveaxis(x, axis, -1).astype(_compute_dtype(x))
    p = _sparsemax_last(z)
    return jnp.moveaxis(p, -1, axis).astype(x.dtype)


@jax.custom_jvp
def _sparsemax_last(z: jax.Array) -> jax.Array:
    z = z - jnp.max(z, -1, keepdims=True)
    z_sorted = -jnp.sort(-z, axis=-1)
    k = jnp.broadcast_to(jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype), z.shape)
    cumsum = jnp.cumsum(z_sorted, -1)
    in_support = 1.0 + k * z_sorted > cumsum  # Martins & Astudillo Eq. (3)
    support_size = jnp.sum(in_support, -1, keepdims=True)
    tau = (jnp.take_along_axis(cumsum, support_size - 1, -1) - 1.0) / support_size  # Eq. (4)
    return jnp.maximum(z - tau.astype(z.dtype), 0.0)


@_sparsemax_last.defjvp
def _sparsemax_last_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    p = _sparsemax_last(z)
    support = (p > 0).astype(p.dtype)
    # J = diag(s) − s sᵀ / |S|   (Martins & Astudillo Eq. (9)).
    mean_on_support = jnp.sum(dz * support, -1, keepdims=True) / jnp.sum(support, -1, keepdims=True)
    return p, support * (dz - mean_on_support)


# ----------------------------------------------------------------------------- entmax-1.5


def entmax15(x: ArrayLike, axis: int = -1) -> jax.Array:
    """1.5-entmax: the α = 1.5 member of the entmax family, exact (sort-based).

    entmax15(z) = [z/2 − τ(z)]₊², with τ chosen so the result sums to 1 (Peters et al.
    2019, Eq. (10) with α = 1.5; sort-based algorithm of their Algorithm 2).

    Args:
      x: scores ``[..., n, ...]``, normalized along ``axis``.
      axis: the axis to normalize over.

    Returns:
      Sparse probabilities, same shape and floating dtype as ``x``.

    Example:
      >>> entmax15(jnp.array([1.0, 0.5, -2.0])).round(3)
      Array([0.674, 0.326, 0.   ], dtype=float32)

    References:
      Peters, Niculae, Martins. Sparse Sequence-to-Sequence Models. ACL 2019.
    """
    x, axis = _prepare(x, axis, "entmax15")
    z = jnp.moveaxis(x, axis, -1).astype(_compute_dtype(x))
    p = _entmax15_last(z)
    return jnp.moveaxis(p, -1, axis).astype(x.dtype)


@jax.custom_jvp
def _entmax15_last(z: jax.Array) -> jax.Array:
    z = (z - jnp.max(z, -1, keepdims=True)) / 2.0
    z_sorted = -jnp.sort(-z, axis=-1)
    k = jnp.broadcast_to(jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype), z.shape)
    mean = jnp.cumsum(z_sorted, -1) / k
    mean_sq = jnp.cumsum(z_sorted**2, -1) / k
    # τ_k solves Σ_{j≤k} (z_j − τ)² = 1 for the k largest entries.
    delta = (1.0 - k * (mean_sq - mean**2)) / k
    tau = mean - jnp.sqrt(jnp.maximum(delta, 0.0))
    support_size = jnp.sum(tau <= z_sorted, -1, keepdims=True)
    tau_star = jnp.take_along_axis(tau, support_size - 1, -1)
    return jnp.maximum(z - tau_star, 0.0) ** 2  # Peters et al. Eq. (10), α = 1.5


@_entmax15_last.defjvp
def _entmax15_last_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    p = _entmax15_last(z)
    root = jnp.sqrt(p)
    # dp = √p ⊙ (dz − ⟨√p, dz⟩ / Σ√p)   (Peters et al., Prop. 1 with α = 1.5).
    mean = jnp.sum(root * dz, -1, keepdims=True) / jnp.sum(root, -1, keepdims=True)
    return p, root * (dz - mean)
