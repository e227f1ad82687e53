"""Flax Linen wrappers: the ``MultiMax`` module, the normaliser registry, weight-decay mask.

A normaliser is a callable ``fn(scores, where=None) -> weights`` normalising the last axis
of already-scaled attention scores (``where`` False hides an entry). ``resolve_normalizer``
is the ONE place that maps the convenience names to such callables.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import broadcast_as, check_integer, check_range
from jaxlab.nn.eureka import norm_softmax
from jaxlab.nn.multimax import MultiMaxParams, multimax, multimax_modulate
from jaxlab.nn.sparse import entmax15, sparsemax

NORMALIZERS = ("softmax", "multimax", "sparsemax", "entmax15", "norm_softmax", "norm_softmax_std")
MULTIMAX_PARAM_PREFIX = "multimax_"

Normalizer = Callable[..., jax.Array]
"""``fn(scores: [..., n], where: [..., n] bool | None = None) -> weights [..., n]``."""


def check_normalizer(
    normalizer: str | Normalizer,
    allowed: tuple[str, ...] = NORMALIZERS,
    name: str = "normalizer",
) -> str | Normalizer:
    """Returns ``normalizer`` (a callable, or a name in ``allowed``) or raises a ValueError
    naming the argument ``name``."""
    if callable(normalizer) and allowed is NORMALIZERS:
        return normalizer
    if not isinstance(normalizer, str) or normalizer not in allowed:
        what = "a callable or one of" if allowed is NORMALIZERS else "one of"
        raise ValueError(f"{name} must be {what} {allowed}, got {normalizer!r}")
    return normalizer


def _masked(fn: Callable[..., jax.Array]) -> Normalizer:
    # Masked scores become the dtype's lowest value, as Flax does for softmax attention.
    def normalizer(scores: jax.Array, where: jax.Array | None = None) -> jax.Array:
        scores = jnp.asarray(scores)
        if where is not None:
            mask = jnp.broadcast_to(jnp.asarray(where, bool), scores.shape)
            scores = jnp.where(mask, scores, jnp.finfo(scores.dtype).min)
        return fn(scores, axis=-1)

    return normalizer


def resolve_normalizer(
    normalizer: str | Normalizer,
    *,
    scale: ArrayLike | None = None,
    multimax_params: MultiMaxParams | None = None,
) -> Normalizer:
    """The normaliser callable for a name (the registry), or ``normalizer`` itself.

    Names: ``"softmax"``, ``"sparsemax"``, ``"entmax15"`` (masked scores set to the dtype's
    lowest value first; a fully masked row is uniform, as Flax's softmax), ``"multimax"``
    (needs ``multimax_params``; σ applied before the mask, a fully masked row is zeros) and
    ``"norm_softmax"`` / ``"norm_softmax_std"`` (``norm_softmax`` with the variance / the
    standard deviation as spread). NormSoftmax wants the UNscaled logits a = q·kᵀ and
    γ = 1/scale: its entry divides the scaled scores by ``scale`` (the attention's score
    scale, 1/√d_h by default, so γ = √d_h) — the reference code's "undo scaling". Under heat
    treatment ``scale`` is the scheduled value and γ follows it, as in the reference code.

    Args:
      normalizer: a name above or a callable ``fn(scores, where=None)``.
      scale: the factor the scores were multiplied by (needed by the NormSoftmax names).
      multimax_params: the layer's ``MultiMaxParams`` (needed by ``"multimax"``).

    Returns:
      ``fn(scores, where=None) -> weights`` normalising the last axis.
    """
    check_normalizer(normalizer)
    if multimax_params is not None and not isinstance(multimax_params, MultiMaxParams):
        raise ValueError(
            f"multimax_params must be MultiMaxParams, got {type(multimax_params).__name__}"
        )
    if callable(normalizer):
        return normalizer
    if normalizer == "multimax":
        if multimax_params is None:
            raise ValueError("normalizer 'multimax' needs multimax_params")
        return functools.partial(multimax, params=multimax_params, axis=-1)
    if normalizer in ("norm_softmax", "norm_softmax_std"):
        if scale is None:
            raise ValueError(f"normalizer {normalizer!r} needs the score scale")
        spread = "variance" if normalizer == "norm_softmax" else "std"

        def normed(scores: jax.Array, where: jax.Array | None = None) -> jax.Array:
            scores = jnp.asarray(scores)
            s = jnp.asarray(scale, scores.dtype)
            return norm_softmax(scores / s, 1.0 / s, spread=spread, where=where)

        return normed
    return _masked(
        {"softmax": jax.nn.softmax, "sparsemax": sparsemax, "entmax15": entmax15}[normalizer]
    )


def _timm_trunc_normal(std: float) -> Callable[..., jax.Array]:
    # timm's trunc_normal_(std=std) truncates at the absolute bounds ±2.
    def init(key: jax.Array, shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.Array:
        return std * jax.random.truncated_normal(key, -2.0 / std, 2.0 / std, shape, dtype)

    return init


class MultiMax(nn.Module):
    """Owns one layer's MultiMax parameters (``4 · order`` scalars).

    The parameters are named ``multimax_b``, ``multimax_d``, ``multimax_t_b`` and
    ``multimax_t_d`` (shape ``[order]``), initialised as in the reference code (truncated
    normal, std 0.02); ``multimax_decay_mask`` finds them by that prefix.

    Attributes:
      order: the polynomial order n of the modulator (the paper uses 2).
      init_std: standard deviation of the initial values.

    Example:
      >>> layer = MultiMax()
      >>> variables = layer.init(jax.random.key(0), jnp.zeros(4))
      >>> layer.apply(variables, jnp.arange(4.0)).shape
      (4,)
    """

    order: int = 2
    init_std: float = 0.02

    def __post_init__(self) -> None:
        check_integer("order", self.order, low=1)
        check_range("init_std", self.init_std, 0.0, low_open=True)
        super().__post_init__()

    def setup(self) -> None:
        init = _timm_trunc_normal(self.init_std)
        self.b = self.param(MULTIMAX_PARAM_PREFIX + "b", init, (self.order,))
        self.d = self.param(MULTIMAX_PARAM_PREFIX + "d", init, (self.order,))
        self.t_b = self.param(MULTIMAX_PARAM_PREFIX + "t_b", init, (self.order,))
        self.t_d = self.param(MULTIMAX_PARAM_PREFIX + "t_d", init, (self.order,))

    def params(self) -> MultiMaxParams:
        """The parameters as a ``MultiMaxParams`` for the functional kernels."""
        return MultiMaxParams(self.b, self.d, self.t_b, self.t_d)

    def modulate(self, x: ArrayLike) -> jax.Array:
        """σ(x) (Eq. (6)); use before a softmax cross-entropy at an output layer."""
        return multimax_modulate(x, self.params())

    def __call__(self, x: ArrayLike, axis: int = -1, where: ArrayLike | None = None) -> jax.Array:
        """MultiMax(x) = softmax(σ(x)) along ``axis`` (Eq. (7))."""
        return multimax(x, self.params(), axis=axis, where=where)


def normalize(
    scores: ArrayLike,
    normalizer: str | Normalizer,
    multimax_params: MultiMaxParams | None = None,
    axis: int = -1,
    where: ArrayLike | None = None,
    scale: ArrayLike | None = None,
) -> jax.Array:
    """Normalises ``scores`` along ``axis`` with a named or callable normaliser.

    Masked entries (``where`` False) get probability 0. For MultiMax the mask is applied
    after σ (``multimax(..., where=...)``); for softmax/sparsemax/entmax15 masked scores are
    replaced by the dtype's lowest value first, as Flax does for softmax attention. A fully
    masked row is all zeros under MultiMax and NormSoftmax and uniform under the others.

    Args:
      scores: ``[..., n, ...]``.
      normalizer: a name of ``NORMALIZERS`` or a callable ``fn(scores, where=None)``
        normalising the last axis (see ``resolve_normalizer``).
      multimax_params: required for ``"multimax"``.
      axis: the axis to normalise over.
      where: optional boolean mask broadcastable to ``scores``.
      scale: the factor already applied to ``scores`` (required by the NormSoftmax names).

    Returns:
      Probabilities of ``scores``' shape.
    """
    fn = resolve_normalizer(normalizer, scale=scale, multimax_params=multimax_params)
    scores = jnp.asarray(scores)
    if scores.ndim == 0:
        raise ValueError("scores must have at least one axis, got a scalar")
    if not -scores.ndim <= axis < scores.ndim:
        raise ValueError(f"axis {axis} is out of range for scores of shape {scores.shape}")
    if where is not None:
        where = broadcast_as("where", where, scores.shape, bool)
    if axis in (-1, scores.ndim - 1):
        return fn(scores, where=where)
    moved = jnp.moveaxis(scores, axis, -1)
    moved_where = None if where is None else jnp.moveaxis(where, axis, -1)
    return jnp.moveaxis(fn(moved, where=moved_where), -1, axis)


def multimax_decay_mask(params: Any) -> Any:
    """An optax weight-decay mask that keeps MultiMax's scalars out of weight decay.

    The reference implementation's README asks for the 8 scalars per layer to be trained
    without weight decay. Leaves whose name starts with ``multimax_`` (every parameter of
    a ``MultiMax`` module) map to False, all others to True.

    Args:
      params: a parameter pytree (e.g. ``variables["params"]``).

    Returns:
      A pytree of bools with ``params``' structure.

    Example:
      >>> tx = optax.adamw(1e-3, weight_decay=0.05, mask=multimax_decay_mask)
    """

    if not jax.tree.leaves(params):
        raise ValueError(f"params must be a parameter pytree with leaves, got {params!r:.60}")

    def decays(path: tuple[Any, ...], _: Any) -> bool:
        last = path[-1] if path else None
        name = str(getattr(last, "key", getattr(last, "name", "")))
        return not name.startswith(MULTIMAX_PARAM_PREFIX)

    return jax.tree_util.tree_map_with_path(decays, params)
