"""MultiMax: softmax of a learned piecewise-polynomial modulation of the scores.

MultiMax(x) = softmax(σ(x)) with the element-wise modulator (Zhou et al., 2024, Eq. (6))

    σ(x) = x + Σ_{k=1..n} [ t_b,k · relu(b_k − x)^k  +  t_d,k · relu(x − d_k)^k ].

σ is the identity between the thresholds b_k and d_k; below b_k it changes slope and
curvature (learned t_b,k < 0 pushes small scores down: sparsity), above d_k it does too
(learned t_d,k bends large scores so several of them keep mass: multi-modality).

``multimax`` has a hand-written VJP (Eq. (6)–(7) differentiated in closed form): the
forward pass saves only the scores, in their own dtype, and one log-normaliser per row; the
backward pass recomputes σ(x) and the probabilities from them and computes the softmax
cotangent, σ'(x) and the 4·order parameter cotangents in one pass over the scores, all
parameter sums in one variadic reduction. Automatic differentiation of ``softmax(σ(x))``
(``multimax(..., fused=False)``) instead saves several score-sized intermediates and
compiles one reduction per parameter (see ``benchmarks/multimax.py`` and
``docs/multimax.md``). The fused path is reverse mode only: ``jax.grad``/``jax.vjp`` (also
nested) work, ``jax.jvp``/``jax.jacfwd`` raise; ``fused=False`` supports both modes.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_key


class MultiMaxParams(NamedTuple):
    """The learnable scalars of one MultiMax layer, each of shape ``[order]``.

    Entry ``k - 1`` of each field belongs to the order-``k`` term of Eq. (6).

    Attributes:
      b: low thresholds b_k.
      d: high thresholds d_k.
      t_b: slopes t_b,k of the terms below b_k.
      t_d: slopes t_d,k of the terms above d_k.
    """

    b: jax.Array
    d: jax.Array
    t_b: jax.Array
    t_d: jax.Array


def init_multimax_params(
    key: jax.Array, order: int = 2, std: float = 0.02, dtype: jnp.dtype = jnp.float32
) -> MultiMaxParams:
    """Draws MultiMax parameters as the reference code does.

    Every scalar is drawn from a normal with standard deviation ``std`` truncated to
    [−2, 2] (timm's ``trunc_normal_(std=0.02)``, whose bounds are absolute), so σ ≈ identity
    and MultiMax ≈ softmax at initialization.

    Args:
      key: a PRNG key.
      order: the polynomial order n (the paper uses 2).
      std: standard deviation of the truncated normal.
      dtype: parameter dtype.

    Returns:
      ``MultiMaxParams`` whose four fields have shape ``[order]``.

    Example:
      >>> params = init_multimax_params(jax.random.key(0))
      >>> params.b.shape
      (2,)
    """
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"order must be a positive int, got {order!r}")
    if not std >= 0:
        raise ValueError(f"std must be non-negative, got {std!r}")
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype!r}")
    key = check_key("key", key)
    if std == 0:
        return MultiMaxParams(*jnp.zeros((4, order), dtype))
    draws = std * jax.random.truncated_normal(key, -2.0 / std, 2.0 / std, (4, order), dtype)
    return MultiMaxParams(*draws)


def _check_params(params: MultiMaxParams) -> int:
    if not isinstance(params, MultiMaxParams):
        raise ValueError(f"params must be MultiMaxParams, got {type(params).__name__}")
    shapes = {name: jnp.shape(value) for name, value in params._asdict().items()}
    first = shapes["b"]
    if len(first) != 1 or first[0] < 1 or any(s != first for s in shapes.values()):
        raise ValueError(f"params fields must all have the same shape [order], got {shapes}")
    return first[0]


def _input_limit(order: int) -> float:
    # |x| beyond this would overflow float32 in relu(·)^order; inputs are clipped to it.
    return 0.1 * float(jnp.finfo(jnp.float32).max) ** (1.0 / order)


def _terms(x: jax.Array, params: MultiMaxParams):
    """Yields (k, below_k, above_k) = (k, relu(b_k − x), relu(x − d_k)) per order."""
    for i in range(params.b.shape[0]):
        yield i + 1, jnp.maximum(params.b[i] - x, 0.0), jnp.maximum(x - params.d[i], 0.0)


def _modulate(x: jax.Array, params: MultiMaxParams) -> jax.Array:
    sigma = x
    for k, below, above in _terms(x, params):
        sigma = sigma + params.t_b[k - 1] * below**k + params.t_d[k - 1] * above**k  # Eq. (6)
    return sigma


def multimax_modulate(x: ArrayLike, params: MultiMaxParams) -> jax.Array:
    """The MultiMax modulator σ, element-wise.

    σ(x) = x + Σ_k [t_b,k · relu(b_k − x)^k + t_d,k · relu(x − d_k)^k]   (Eq. (6)),
    with ``params.b``, ``params.d``, ``params.t_b``, ``params.t_d`` carrying b_k, d_k,
    t_b,k, t_d,k.

    Args:
      x: scores of any shape.
      params: ``MultiMaxParams`` with fields of shape ``[order]``.

    Returns:
      σ(x), same shape as ``x``, in ``x``'s floating dtype (float32 for integer input).

    Example:
      >>> p = MultiMaxParams(*jnp.array([[-1.0], [1.0], [1.0], [0.5]]))
      >>> multimax_modulate(jnp.array([-2.0, 0.0, 3.0]), p)
      Array([-1.,  0.,  4.], dtype=float32)

    References:
      Zhou, Fritz, Keuper. MultiMax: Sparse and Multi-Modal Attention Learning. ICML 2024.
    """
    _check_params(params)
    x = as_float("x", x)  # ints promoted, complex refused
    params = jax.tree.map(lambda p: jnp.asarray(p, x.dtype), params)
    return _modulate(x, params)


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for x with {ndim} dimensions")
    return axis % ndim


def multimax(
    x: ArrayLike,
    params: MultiMaxParams,
    axis: int = -1,
    where: ArrayLike | None = None,
    *,
    fused: bool = True,
) -> jax.Array:
    """MultiMax: softmax of the modulated scores along ``axis``.

    MultiMax(x)_i = exp(σ(x_i)) / Σ_j exp(σ(x_j))   (Eq. (7)), σ from Eq. (6) with
    ``params`` carrying b_k, d_k, t_b,k, t_d,k.

    ``where`` removes entries after σ and before the softmax, as the paper requires (the
    modulator must never see an additive −inf mask): masked entries get exactly 0 and no
    gradient. A row whose entries are all masked is all zeros (not NaN, not uniform).
    The computation runs in float32 for float32 and lower-precision inputs; the result has
    the input's floating dtype. Inputs are clipped to ±0.1·float32_max^(1/order) (±1.8e18
    for order 2) so σ never overflows; any finite input gives a finite output.

    Args:
      x: scores ``[..., n, ...]``, normalized along ``axis``.
      params: ``MultiMaxParams``, fields of shape ``[order]``.
      axis: the axis to normalize over.
      where: optional boolean mask broadcastable to ``x``'s shape; False removes an entry.
      fused: ``True`` (default): the hand-written VJP (module docstring; reverse mode
        only). ``False``: automatic differentiation of the same forward formula (forward
        and reverse mode; the slower baseline of ``benchmarks/multimax.py``).

    Returns:
      Probabilities of ``x``'s shape that sum to 1 along ``axis`` (0 for all-masked rows).

    Example:
      >>> params = init_multimax_params(jax.random.key(0))
      >>> multimax(jnp.array([1.0, 2.0, 3.0]), params).sum()
      Array(1., dtype=float32)

    References:
      Zhou, Fritz, Keuper. MultiMax: Sparse and Multi-Modal Attention Learning. ICML 2024.
    """
    order = _check_params(params)
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension, got a scalar")
    if x.shape[axis if -x.ndim <= axis < x.ndim else 0] == 0:
        raise ValueError(f"x must be non-empty along axis {axis}, got shape {x.shape}")
    axis = _normalize_axis(axis, x.ndim)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float32)
    # The statistics dtype; x itself keeps its dtype into the VJP, so a bfloat16 score
    # tensor is saved for the backward pass as bfloat16, not as a float32 copy.
    compute_dtype = jnp.promote_types(x.dtype, jnp.float32)
    params = jax.tree.map(lambda p: jnp.asarray(p, compute_dtype), params)
    if where is None:
        mask = None
    else:
        mask = jnp.asarray(where)
        if mask.dtype != jnp.bool_:
            raise ValueError(f"where must be boolean, got dtype {mask.dtype}")
        try:
            mask = jnp.broadcast_to(mask, x.shape)
        except ValueError as err:
            raise ValueError(
                f"where of shape {mask.shape} does not broadcast to x of shape {x.shape}"
            ) from err
    limit = _input_limit(order)
    if fused:
        return _multimax(x, params, mask, axis, limit)
    s = _modulated(x, params, limit)
    return _probabilities(s, mask, *_row_stats(s, mask, axis)).astype(x.dtype)


def _modulated(x: jax.Array, params: MultiMaxParams, limit: float) -> jax.Array:
    """σ(x) in the params' (compute) dtype, input clipped, overflow to ±inf removed."""
    x = jnp.clip(x.astype(params.b.dtype), -limit, limit)
    big = jnp.finfo(x.dtype).max
    return jnp.clip(_modulate(x, params), -big, big)  # Eq. (6)


def _row_stats(s: jax.Array, mask: jax.Array | None, axis: int) -> tuple[jax.Array, jax.Array]:
    """The row maximum m (held constant: the result does not depend on it) and the
    softmax denominator Σ_j exp(s_j − m) over the unmasked entries, both ``keepdims``.
    An all-masked row gets m = 0 and denominator 1."""
    if mask is None:
        m = jax.lax.stop_gradient(jnp.max(s, axis, keepdims=True))
        return m, jnp.sum(jnp.exp(s - m), axis, keepdims=True)
    m = jnp.max(jnp.where(mask, s, -jnp.inf), axis, keepdims=True)
    m = jax.lax.stop_gradient(jnp.where(jnp.isfinite(m), m, 0.0))
    denom = jnp.sum(_masked_exp(s - m, mask), axis, keepdims=True)
    return m, jnp.where(denom > 0, denom, 1.0)


def _masked_exp(z: jax.Array, mask: jax.Array | None) -> jax.Array:
    """exp(z), exactly 0 on masked entries; the mask is applied before exp, so a masked
    entry's overflow never reaches a gradient (no 0·inf)."""
    return jnp.exp(z if mask is None else jnp.where(mask, z, -jnp.inf))


def _probabilities(s, mask, m, denom):
    """exp(s − m) / denom, 0 on masked entries (Eq. (7))."""
    return _masked_exp(s - m, mask) / denom


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _multimax(x, params, mask, axis, limit):
    return _multimax_fwd(x, params, mask, axis, limit)[0]


def _multimax_fwd(x, params, mask, axis, limit):
    s = _modulated(x, params, limit)
    m, denom = _row_stats(s, mask, axis)
    # Saved: x in its own dtype and the row log-normaliser log Σ exp(σ) (one scalar a row);
    # the backward pass recomputes σ(x) and the probabilities from them, as flash
    # attention does, instead of reading a saved float32 copy of each.
    return _probabilities(s, mask, m, denom).astype(x.dtype), (x, params, mask, m + jnp.log(denom))


def _sum_products(weights: jax.Array, features: list[jax.Array], axis: int) -> jax.Array:
    """``[len(features)]``: Σ weights·feature for each feature, as ONE variadic reduction
    over ``axis`` and one reduction of the stacked row sums.

    Separate ``jnp.sum`` calls compile to one reduction loop per parameter on XLA:CPU,
    each re-reading the inputs and recomputing the feature; a variadic ``lax.reduce`` is a
    single loop that carries all the partial sums (about 3x faster on CPU).
    """
    products = [weights * f for f in features]
    zeros = [jnp.zeros((), weights.dtype)] * len(products)
    add = lambda a, b: [u + v for u, v in zip(a, b, strict=True)]
    rows = jnp.stack(jax.lax.reduce(products, zeros, add, (axis,)))
    return jnp.sum(rows, axis=tuple(range(1, rows.ndim)))  # the row sums, one reduction


def _multimax_bwd(axis, limit, residuals, g):
    x_in, params, mask, log_normaliser = residuals
    dtype = params.b.dtype
    s = _modulated(x_in, params, limit)
    y = _masked_exp(s - log_normaliser, mask)  # Eq. (7), recomputed
    g = g.astype(dtype)
    # Softmax VJP (Eq. (7)); y = 0 on masked entries, so they get no cotangent.
    g_sigma = y * (g - jnp.sum(g * y, axis, keepdims=True))
    x = x_in.astype(dtype)
    inside = jnp.abs(x) <= limit
    x = jnp.clip(x, -limit, limit)
    # σ'(x) and ∂σ/∂(t_b,k, t_d,k, b_k, d_k), differentiating Eq. (6) term by term.
    dsigma = jnp.ones_like(x)
    features = []
    for k, below, above in _terms(x, params):
        # d relu(b − x)^k / d(b − x) = k·relu(b − x)^(k−1) on x < b (likewise above d).
        below_slope = (x < params.b[k - 1]).astype(dtype) if k == 1 else k * below ** (k - 1)
        above_slope = (x > params.d[k - 1]).astype(dtype) if k == 1 else k * above ** (k - 1)
        dsigma = dsigma - params.t_b[k - 1] * below_slope + params.t_d[k - 1] * above_slope
        features += [below**k, above**k, below_slope, above_slope]
    sums = _sum_products(g_sigma, features, axis).reshape(-1, 4)
    g_params = MultiMaxParams(
        b=params.t_b * sums[:, 2],
        d=-params.t_d * sums[:, 3],
        t_b=sums[:, 0],
        t_d=sums[:, 1],
    )
    g_x = jnp.where(inside, g_sigma * dsigma, 0.0).astype(x_in.dtype)
    return g_x, g_params, None


_multimax.defvjp(_multimax_fwd, _multimax_bwd)
