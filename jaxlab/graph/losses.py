"""Masked node-classification loss and accuracy (the pieces every node classifier trains on)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike


def _check(
    logits: ArrayLike, labels: ArrayLike, mask: ArrayLike
) -> tuple[jax.Array, jax.Array, jax.Array]:
    logits, labels, mask = jnp.asarray(logits), jnp.asarray(labels), jnp.asarray(mask)
    if logits.ndim != 2:
        raise ValueError(f"logits must be [n, c], got shape {logits.shape}")
    if labels.shape != logits.shape[:1] or not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(
            f"labels must be [{logits.shape[0]}] integers, got shape "
            f"{labels.shape} and dtype {labels.dtype}"
        )
    if mask.shape != labels.shape:
        raise ValueError(f"mask must be [{logits.shape[0]}], got shape {mask.shape}")
    return logits, labels, mask


def masked_cross_entropy(logits: ArrayLike, labels: ArrayLike, mask: ArrayLike) -> jax.Array:
    """Mean softmax cross-entropy over the nodes where ``mask`` is true.

    Args:
      logits: ``[n, c]``.
      labels: ``[n]`` integer labels.
      mask: ``[n]`` boolean (or 0/1 weights).

    Returns:
      A scalar: ``Σ_i mask_i · CE_i / max(Σ_i mask_i, 1)`` (0 for an empty mask). Labels
      outside ``[0, c)`` are not checked (they may be traced) and give a meaningless
      loss.

    Example:
      >>> logits = jnp.array([[2.0, 0.0], [0.0, 2.0], [5.0, 0.0]])
      >>> loss = masked_cross_entropy(logits, jnp.array([0, 1, 1]), jnp.array([1, 1, 0]))
      >>> round(float(loss), 4)  # the third node is masked out
      0.1269
    """
    logits, labels, mask = _check(logits, labels, mask)
    losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    mask = mask.astype(logits.dtype)
    return jnp.sum(losses * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def masked_accuracy(logits: ArrayLike, labels: ArrayLike, mask: ArrayLike) -> jax.Array:
    """Accuracy over the nodes where ``mask`` is true (``[n, c]``, ``[n]``, ``[n]`` → scalar).

    0 for an empty mask.

    Example:
      >>> logits = jnp.array([[2.0, 0.0], [0.0, 2.0], [5.0, 0.0]])
      >>> float(masked_accuracy(logits, jnp.array([0, 0, 1]), jnp.array([1, 1, 0])))
      0.5
    """
    logits, labels, mask = _check(logits, labels, mask)
    correct = (jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32)
    mask = mask.astype(jnp.float32)
    return jnp.sum(correct * mask) / jnp.maximum(jnp.sum(mask), 1.0)
