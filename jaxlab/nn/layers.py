"""Flax Linen wrappers: the ``MultiMax`` module, normaliser selection, weight-decay mask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab.nn.multimax import MultiMaxParams, multimax, multimax_modulate
from jaxlab.nn.sparse import entmax15, sparsemax

NORMALIZERS = ("softmax", "multimax", "sparsemax", "entmax15")
MULTIMAX_PARAM_PREFIX = "multimax_"


def check_normalizer(normalizer: str, allowed: tuple[str, ...] = NORMALIZERS) -> str:
    """Returns ``normalizer`` or raises a ValueError listing the allowed names."""
    if normalizer not in allowed:
        raise ValueError(f"normalizer must be one of {allowed}, got {normalizer!r}")
    return normalizer


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

    def __call__(
        self, x: ArrayLike, axis: int = -1, where: ArrayLike | None = None
    ) -> jax.Array:
        """MultiMax(x) = softmax(σ(x)) along ``axis`` (Eq. (7))."""
        return multimax(x, self.params(), axis=axis, where=where)


def normalize(
    scores: ArrayLike,
    normalizer: str,
    multimax_params: MultiMaxParams | None = None,
    axis: int = -1,
    where: ArrayLike | None = None,
) -> jax.Array:
    """Normalises ``scores`` along ``axis`` with the named normaliser.

    Masked entries (``where`` False) get probability 0. For MultiMax the mask is applied
    after σ (``multimax(..., where=...)``); for the others masked scores are replaced by the
    dtype's lowest value first, as Flax does for softmax attention. A fully masked row is
    all zeros under MultiMax and uniform under the others (Flax's softmax behaviour).

    Args:
      scores: ``[..., n, ...]``.
      normalizer: one of ``"softmax"``, ``"multimax"``, ``"sparsemax"``, ``"entmax15"``.
      multimax_params: required for ``"multimax"``.
      axis: the axis to normalise over.
      where: optional boolean mask broadcastable to ``scores``.

    Returns:
      Probabilities of ``scores``' shape.
    """
    check_normalizer(normalizer)
    scores = jnp.asarray(scores)
    if normalizer == "multimax":
        if multimax_params is None:
            raise ValueError("normalizer 'multimax' needs multimax_params")
        return multimax(scores, multimax_params, axis=axis, where=where)
    if where is not None:
        mask = jnp.broadcast_to(jnp.asarray(where, bool), scores.shape)
        scores = jnp.where(mask, scores, jnp.finfo(scores.dtype).min)
    fn = {"softmax": jax.nn.softmax, "sparsemax": sparsemax, "entmax15": entmax15}[normalizer]
    return fn(scores, axis=axis)


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

    def decays(path: tuple[Any, ...], _: Any) -> bool:
        last = path[-1] if path else None
        name = str(getattr(last, "key", getattr(last, "name", "")))
        return not name.startswith(MULTIMAX_PARAM_PREFIX)

    return jax.tree_util.tree_map_with_path(decays, params)
