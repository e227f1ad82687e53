"""Locality and faithfulness metrics of explanation maps: pointing game, mass inside the
object, deletion / insertion AUC of the embedding's cosine similarity."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxlab._checks import check_integer
from jaxlab.explain.nem import check_baseline

__all__ = ["deletion_auc", "insertion_auc", "mass_inside", "pointing_game"]


def _check(saliency: jax.Array, gt_mask: jax.Array) -> None:
    if saliency.ndim != 3 or saliency.shape != gt_mask.shape:
        raise ValueError(
            f"saliency and gt_mask must share a shape [b, H, W]; got "
            f"{saliency.shape}, {gt_mask.shape}"
        )


def pointing_game(saliency: jax.typing.ArrayLike, gt_mask: jax.typing.ArrayLike) -> jax.Array:
    """1 where the saliency's arg-max pixel lies inside the object, per image.

    Args:
      saliency: ``[b, H, W]``.
      gt_mask: ``[b, H, W]`` boolean (or 0/1) object mask.

    Returns:
      ``[b]`` floats in {0, 1}.

    Example:
      >>> from jaxlab.explain import pointing_game
      >>> pointing_game(jnp.array([[[0.0, 1.0]]]), jnp.array([[[False, True]]]))
      Array([1.], dtype=float32)
    """
    saliency, gt_mask = jnp.asarray(saliency), jnp.asarray(gt_mask)
    _check(saliency, gt_mask)
    b = saliency.shape[0]
    idx = jnp.argmax(saliency.reshape(b, -1), axis=1)
    hit = jnp.take_along_axis(gt_mask.reshape(b, -1), idx[:, None], axis=1)[:, 0]
    nan_map = jnp.any(jnp.isnan(saliency.reshape(b, -1)), axis=1)  # no arg-max: NaN
    return jnp.where(nan_map, jnp.nan, hit.astype(jnp.float32))


def mass_inside(saliency: jax.typing.ArrayLike, gt_mask: jax.typing.ArrayLike) -> jax.Array:
    """Share of the (negative parts clipped) saliency mass inside the object, per image.

    Example:
      >>> from jaxlab.explain import mass_inside
      >>> mass_inside(jnp.array([[[1.0, 3.0]]]), jnp.array([[[False, True]]]))
      Array([0.75], dtype=float32)
    """
    saliency, gt_mask = jnp.asarray(saliency), jnp.asarray(gt_mask)
    _check(saliency, gt_mask)
    s = jnp.maximum(saliency, 0.0)
    inside = jnp.sum(jnp.where(gt_mask.astype(bool), s, 0.0), axis=(1, 2))
    return inside / jnp.maximum(jnp.sum(s, axis=(1, 2)), 1e-12)


def _curve_auc(encode_fn, x, saliency, baseline, num_steps, insert):
    check_integer("num_steps", num_steps, low=1)
    if not callable(encode_fn):
        raise ValueError(f"encode_fn must be callable, got {type(encode_fn).__name__}")
    b, h, w, c = x.shape
    order = jnp.argsort(-saliency.reshape(b, -1), axis=1)  # most important first
    rank = jnp.argsort(order, axis=1).reshape(b, h, w)
    ref = encode_fn(x)
    start, end = (baseline, x) if insert else (x, baseline)

    def at(k):
        # The top-k pixels come from `end`, the rest from `start`.
        take = (rank < k)[..., None]
        emb = encode_fn(jnp.where(take, end, start))
        num = jnp.sum(emb * ref, axis=1)
        den = jnp.maximum(jnp.linalg.norm(emb, axis=1) * jnp.linalg.norm(ref, axis=1), 1e-12)
        return num / den

    ks = jnp.round(jnp.linspace(0, h * w, num_steps + 1)).astype(jnp.int32)
    sims = jax.lax.map(at, ks)  # [steps + 1, b]
    return jnp.mean((sims[1:] + sims[:-1]) / 2.0, axis=0)  # trapezoid on [0, 1]


def deletion_auc(
    encode_fn: Callable[[jax.Array], jax.Array],
    x: jax.typing.ArrayLike,
    saliency: jax.typing.ArrayLike,
    baseline: jax.typing.ArrayLike = 0.0,
    num_steps: int = 16,
) -> jax.Array:
    """Area under cos(f(x), f(x with the top-k salient pixels replaced by the baseline))
    as k goes from 0 to all pixels (lower = more faithful). ``x: [b, H, W, C]`` → ``[b]``.

    Example:
      >>> from jaxlab.explain import deletion_auc
      >>> f = lambda x: jnp.concatenate([x[:, 0, 0, :], jnp.ones((x.shape[0], 1))], axis=1)
      >>> x = jnp.ones((1, 2, 2, 1))
      >>> good = deletion_auc(f, x, jnp.array([[[1.0, 0.0], [0.0, 0.0]]]), num_steps=4)
      >>> bad = deletion_auc(f, x, jnp.array([[[0.0, 0.0], [0.0, 1.0]]]), num_steps=4)
      >>> bool(good[0] < bad[0])
      True
    """
    x = jnp.asarray(x)
    saliency = jnp.asarray(saliency)
    if x.ndim != 4 or saliency.shape != x.shape[:3]:
        raise ValueError(
            f"need x [b, H, W, C] and saliency [b, H, W]; got {x.shape}, {saliency.shape}"
        )
    base = check_baseline(baseline, x)
    return _curve_auc(encode_fn, x, saliency, base, num_steps, insert=False)


def insertion_auc(
    encode_fn: Callable[[jax.Array], jax.Array],
    x: jax.typing.ArrayLike,
    saliency: jax.typing.ArrayLike,
    baseline: jax.typing.ArrayLike = 0.0,
    num_steps: int = 16,
) -> jax.Array:
    """Area under cos(f(x), f(baseline with the top-k salient pixels of x inserted))
    (higher = more faithful). ``x: [b, H, W, C]`` → ``[b]``."""
    x = jnp.asarray(x)
    saliency = jnp.asarray(saliency)
    if x.ndim != 4 or saliency.shape != x.shape[:3]:
        raise ValueError(
            f"need x [b, H, W, C] and saliency [b, H, W]; got {x.shape}, {saliency.shape}"
        )
    base = check_baseline(baseline, x)
    return _curve_auc(encode_fn, x, saliency, base, num_steps, insert=True)
