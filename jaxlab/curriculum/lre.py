"""Learning to reweight examples (LRE): per-batch weights from a meta-gradient."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab.curriculum.base import Curriculum
from jaxlab.curriculum.meta import LossFn, check_meta, lookahead_meta_loss


def lre_weights(
    params: Any,
    loss_fn: LossFn,
    inputs: ArrayLike,
    labels: ArrayLike,
    meta_inputs: ArrayLike,
    meta_labels: ArrayLike,
    lr: float,
    valid: ArrayLike | None = None,
) -> jax.Array:
    """LRE's example weights: ``w_i ∝ max(−∂/∂ε_i ℓ^meta(θ − α∇_θ Σ ε_j ℓ_j), 0)`` at ``ε = 0``.

    The gradient with respect to the perturbation ``ε`` of the meta-batch loss after a
    look-ahead step (Ren et al., Eq. (4)-(6)) is taken by ``jax.grad`` through the inner
    update; weights are clipped at 0 and normalised to sum 1 (all zero when every
    gradient is positive, Eq. (7)).

    Args:
      params: model parameters ``θ``.
      loss_fn: ``(params, inputs, labels) -> [b]`` per-sample losses.
      inputs, labels: training batch (``[b, ...]``, ``[b]``).
      meta_inputs, meta_labels: clean meta batch (``[m, ...]``, ``[m]``).
      lr: look-ahead step size ``α``.
      valid: optional ``[b]`` mask; padding rows get weight 0.

    Returns:
      ``[b]`` weights ≥ 0 summing to 1 (or all 0).

    Example:
      >>> from jaxlab.curriculum import lre_weights
      >>> f = lambda p, x, y: (p * x - y) ** 2
      >>> w = lre_weights(1.0, f, jnp.array([1.0, 1.0]), jnp.array([0.0, 5.0]),
      ...                 jnp.ones(1), jnp.zeros(1), 0.1)
      >>> w.tolist()  # the first sample pulls p towards the meta target 0
      [1.0, 0.0]

    References:
      Ren, Zeng, Yang, Urtasun, Learning to Reweight Examples for Robust Deep Learning,
      ICML 2018.
    """
    check_meta(loss_fn, lr, labels, valid=valid)
    labels = jnp.asarray(labels)
    eps = jnp.zeros(labels.shape, jnp.float32)
    grad_eps = jax.grad(lookahead_meta_loss)(
        eps, params, loss_fn, inputs, labels, meta_inputs, meta_labels, lr
    )
    w = jnp.maximum(-grad_eps, 0.0)  # Eq. (6)
    if valid is not None:
        w = w * jnp.asarray(valid, w.dtype)
    total = jnp.sum(w)
    return jnp.where(total > 0, w / jnp.where(total > 0, total, 1.0), 0.0)  # Eq. (7)


def lre() -> Curriculum:
    """LRE as a curriculum: each step reweights its batch by :func:`lre_weights`.

    A tenth of the training set is held out as the clean meta set (``meta_fraction``),
    as in the reference. The model's loss is ``Σ_i w_i ℓ_i`` with the weights held fixed.

    Example:
      >>> from jaxlab.curriculum import lre
      >>> lre().meta_fraction
      0.1
    """

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, indices
        params = jax.lax.stop_gradient(ctx.params)
        w = lre_weights(
            params,
            ctx.loss_fn,
            ctx.inputs,
            labels,
            ctx.meta_inputs,
            ctx.meta_labels,
            ctx.lr,
            ctx.valid,
        )
        return jnp.sum(jax.lax.stop_gradient(w) * losses), state

    return Curriculum(name="lre", loss_curriculum=loss_curriculum, meta_fraction=0.1)
