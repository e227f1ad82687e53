"""MultiMax: softmax of a learned piecewise-polynomial modulation of the scores.

MultiMax(x) = softmax(σ(x)) with the element-wise modulator (Zhou et al., 2024, Eq. (6))

    σ(x) = x + Σ_{k=1..n} [ t_b,k · relu(b_k − x)^k  +  t_d,k · relu(x − d_k)^k ].

σ is the identity between the thresholds b_k and d_k; below b_k it changes slope and
curvature (learned t_b,k < 0 pushes small scores down: sparsity), above d_k it does too
(learned t_d,k bends large scores so several of them keep mass: multi-modality).

``multimax`` has a hand-written VJP (Eq. (6)–(7) differentiated in closed form): the
backward pass computes the softmax cotangent, σ'(x) and the 4·order parameter cotangents
from the saved input and output, with all parameter sums in one variadic reduction.
Automatic differentiation of ``softmax(σ(x))`` instead compiles one reduction loop per
parameter (see ``benchmarks/multimax.py`` and ``docs/multimax.md``). Reverse mode only:
``jax.grad``/``jax.vjp`` (also nested) work, ``jax.jvp``/``jax.jacfwd`` raise.
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
    out_dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32
    compute_dtype = jnp.promote_types(out_dtype, jnp.float32)
    x = x.astype(compute_dtype)
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
    return _multimax(x, params, mask, axis, _input_limit(order)).astype(out_dtype)


def _masked_softmax(s: jax.Array, mask: jax.Array | None, axis: int) -> jax.Array:
    if mask is None:
        e = jnp.exp(s - jnp.max(s, axis, keepdims=True))
        return e / jnp.sum(e, axis, keepdims=True)
    m = jnp.max(jnp.where(mask, s, -jnp.inf), axis, keepdims=True)
    m = jnp.where(jnp.isfinite(m), m, 0.0)  # all-masked rows
    e = jnp.where(mask, jnp.exp(s - m), 0.0)
    denom = jnp.sum(e, axis, keepdims=True)
    return e / jnp.where(denom > 0, denom, 1.0)


def _forward(x, params, mask, axis, limit):
    x = jnp.clip(x, -limit, limit)
    big = jnp.finfo(x.dtype).max
    s = jnp.clip(_modulate(x, params), -big, big)  # Eq. (6), overflow to ±inf removed
    return _masked_softmax(s, mask, axis)  # Eq. (7)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _multimax(x, params, mask, axis, limit):
    return _forward(x, params, mask, axis, limit)


def _multimax_fwd(x, params, mask, axis, limit):
    y = _forward(x, params, mask, axis, limit)
    return y, (x, params, mask, y)


def _sum_products(weights: jax.Array, features: list[jax.Array], axis: int) -> list[jax.Array]:
    """Σ weights·feature for each feature, as ONE variadic reduction over ``axis``.

    Separate ``jnp.sum`` calls compile to one reduction loop per parameter, each
    re-reading the inputs and recomputing the feature; a variadic ``lax.reduce`` is a
    single loop that carries all the partial sums (about 3x faster on CPU).
    """
    products = [weights * f for f in features]
    zeros = [jnp.zeros((), weights.dtype)] * len(products)
    add = lambda a, b: [u + v for u, v in zip(a, b, strict=True)]
    rows = jax.lax.reduce(products, zeros, add, (axis,))
    return [jnp.sum(r) for r in rows]


def _multimax_bwd(axis, limit, residuals, g):
    x, params, mask, y = residuals
    # Softmax VJP (Eq. (7)); y = 0 on masked entries, so they get no cotangent.
    g_sigma = y * (g - jnp.sum(g * y, axis, keepdims=True))
    inside = jnp.abs(x) <= limit
    x = jnp.clip(x, -limit, limit)
    # σ'(x) and ∂σ/∂(t_b,k, t_d,k, b_k, d_k), differentiating Eq. (6) term by term.
    dsigma = jnp.ones_like(x)
    features = []
    for k, below, above in _terms(x, params):
        # d relu(b − x)^k / d(b − x) = k·relu(b − x)^(k−1) on x < b (likewise above d).
        below_slope = (x < params.b[k - 1]).astype(x.dtype) if k == 1 else k * below ** (k - 1)
        above_slope = (x > params.d[k - 1]).astype(x.dtype) if k == 1 else k * above ** (k - 1)
        dsigma = dsigma - params.t_b[k - 1] * below_slope + params.t_d[k - 1] * above_slope
        features += [below**k, above**k, below_slope, above_slope]
    sums = jnp.stack(_sum_products(g_sigma, features, axis)).reshape(-1, 4)
    g_params = MultiMaxParams(
        b=params.t_b * sums[:, 2],
        d=-params.t_d * sums[:, 3],
        t_b=sums[:, 0],
        t_d=sums[:, 1],
    )
    return jnp.where(inside, g_sigma * dsigma, 0.0), g_params, None


_multimax.defvjp(_multimax_fwd, _multimax_bwd)
