"""Masked node-classification loss and accuracy (the pieces every node classifier trains on)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike


def masked_cross_entropy(logits: ArrayLike, labels: ArrayLike, mask: ArrayLike) -> jax.Array:
    """Mean softmax cross-entropy over the nodes where ``mask`` is true.

    Args:
      logits: ``[n, c]``.
      labels: ``[n]`` integer labels.
      mask: ``[n]`` boolean (or 0/1 weights).

    Returns:
      A scalar: ``Σ_i mask_i · CE_i / max(Σ_i mask_i, 1)``.

    Example:
      >>> logits = jnp.array([[2.0, 0.0], [0.0, 2.0], [5.0, 0.0]])
      >>> loss = masked_cross_entropy(logits, jnp.array([0, 1, 1]), jnp.array([1, 1, 0]))
      >>> round(float(loss), 4)  # the third node is masked out
      0.1269
    """
    logits = jnp.asarray(logits)
    losses = optax.softmax_cross_entropy_with_integer_labels(logits, jnp.asarray(labels))
    mask = jnp.asarray(mask).astype(logits.dtype)
    return jnp.sum(losses * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def masked_accuracy(logits: ArrayLike, labels: ArrayLike, mask: ArrayLike) -> jax.Array:
    """Accuracy over the nodes where ``mask`` is true (``[n, c]``, ``[n]``, ``[n]`` → scalar).

    Example:
      >>> logits = jnp.array([[2.0, 0.0], [0.0, 2.0], [5.0, 0.0]])
      >>> float(masked_accuracy(logits, jnp.array([0, 0, 1]), jnp.array([1, 1, 0])))
      0.5
    """
    correct = (jnp.argmax(jnp.asarray(logits), axis=-1) == jnp.asarray(labels))
    correct = correct.astype(jnp.float32)
    mask = jnp.asarray(mask).astype(jnp.float32)
    return jnp.sum(correct * mask) / jnp.maximum(jnp.sum(mask), 1.0)
