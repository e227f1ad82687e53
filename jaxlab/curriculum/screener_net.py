"""ScreenerNet: a network trained alongside the model predicts each sample's weight."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import check_range
from jaxlab.curriculum.base import Curriculum, masked_mean
from jaxlab.curriculum.scorer import scorer_prepare_hooks, scorer_weights


def screener_loss(weights: ArrayLike, losses: ArrayLike, margin: float) -> jax.Array:
    """ScreenerNet's per-sample objective ``(1 − w)² ℓ + w² max(M − ℓ, 0)`` (Eq. (1)).

    Hard samples (large ``ℓ``) are pushed to ``w → 1``, easy ones (``ℓ < M``) to ``w → 0``.

    Example:
      >>> from jaxlab.curriculum.screener_net import screener_loss
      >>> screener_loss(jnp.array([0.5]), jnp.array([2.0]), 1.0).tolist()
      [0.5]

    References:
      Kim, Choi, ScreenerNet: Learning Self-Paced Curriculum for Deep Neural Networks,
      arXiv:1801.00904, 2018.
    """
    check_range("margin", margin, 0.0)
    if jnp.shape(weights) != jnp.shape(losses):
        raise ValueError(
            f"losses must have the shape of weights {jnp.shape(weights)}, got {jnp.shape(losses)}"
        )
    w, loss = jnp.asarray(weights), jnp.asarray(losses)
    return (1.0 - w) ** 2 * loss + w**2 * jax.nn.relu(margin - loss)


def screener_net(margin: float = 1.0, lr: float = 1e-3) -> Curriculum:
    """ScreenerNet as a curriculum: the scorer (a copy of the model + a sigmoid unit) takes
    an Adam step on :func:`screener_loss`, the model trains on ``mean_i w_i ℓ_i``.

    Example:
      >>> from jaxlab.curriculum import screener_net
      >>> screener_net().name
      'screener_net'
    """
    check_range("margin", margin, 0.0)
    check_range("lr", lr, 0.0, low_open=True)
    tx = optax.adam(lr)

    data_prepare, model_prepare = scorer_prepare_hooks(tx)

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, labels, indices
        fixed = jax.lax.stop_gradient(losses)

        def objective(scorer):
            w = scorer_weights(scorer, ctx.apply_fn, ctx.inputs)
            return masked_mean(screener_loss(w, fixed, margin), ctx.valid), w

        (_, w), g = jax.value_and_grad(objective, has_aux=True)(state.params)
        updates, opt_state = tx.update(g, state.opt_state, state.params)
        scorer = optax.apply_updates(state.params, updates)
        loss = masked_mean(jax.lax.stop_gradient(w) * losses, ctx.valid)
        return loss, state._replace(params=scorer, opt_state=opt_state)

    return Curriculum(
        name="screener_net",
        data_prepare=data_prepare,
        model_prepare=model_prepare,
        loss_curriculum=loss_curriculum,
    )
