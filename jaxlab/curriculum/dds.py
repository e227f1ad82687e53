"""Differentiable data selection (DDS): a scorer rewarded by gradient alignment."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import check_range
from jaxlab.curriculum.base import Curriculum, masked_mean
from jaxlab.curriculum.meta import LossFn, check_meta
from jaxlab.curriculum.scorer import scorer_prepare_hooks, scorer_weights


def dds_reward(
    params: Any,
    loss_fn: LossFn,
    inputs: ArrayLike,
    labels: ArrayLike,
    meta_inputs: ArrayLike,
    meta_labels: ArrayLike,
    eps: float,
) -> jax.Array:
    """The per-sample change of loss after a step along the meta gradient, ``[b]``.

    ``r_i = (ℓ_i(θ − ε∇_θ ℓ^meta(θ)) − ℓ_i(θ)) / ε ≈ −∇ℓ_iᵀ ∇ℓ^meta`` (Wang et al.,
    Eq. (7), the finite-difference form the reference uses): negative when the sample's
    gradient agrees with the meta set's.

    Example:
      >>> from jaxlab.curriculum.dds import dds_reward
      >>> f = lambda p, x, y: (p * x - y) ** 2
      >>> r = dds_reward(1.0, f, jnp.ones(2), jnp.array([0.0, 2.0]), jnp.ones(1),
      ...                jnp.zeros(1), 1e-3)
      >>> bool(r[0] < 0 < r[1])
      True

    References:
      Wang, Pham, Michel, Anastasopoulos, Carbonell, Neubig, Optimizing Data Usage via
      Differentiable Rewards, ICML 2020.
    """
    check_range("eps", eps, 0.0, low_open=True)
    check_meta(loss_fn, 1.0, labels)
    inputs, labels = jnp.asarray(inputs), jnp.asarray(labels)
    meta_inputs, meta_labels = jnp.asarray(meta_inputs), jnp.asarray(meta_labels)
    meta_grad = jax.grad(lambda p: jnp.mean(loss_fn(p, meta_inputs, meta_labels)))(params)
    moved = jax.tree.map(lambda p, g: p - eps * g, params, meta_grad)
    return (loss_fn(moved, inputs, labels) - loss_fn(params, inputs, labels)) / eps


def dds(eps: float = 1e-3, lr: float = 1e-3) -> Curriculum:
    """DDS as a curriculum: the scorer (a model copy + sigmoid unit) minimises
    ``mean_i r_i log w_i`` by Adam; the model trains on ``mean_i w_i ℓ_i``.

    A tenth of the training set is the meta set, as in the reference.

    Example:
      >>> from jaxlab.curriculum import dds
      >>> dds().meta_fraction
      0.1
    """
    check_range("lr", lr, 0.0, low_open=True)
    if eps <= 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    tx = optax.adam(lr)

    data_prepare, model_prepare = scorer_prepare_hooks(tx)

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, indices
        params = jax.lax.stop_gradient(ctx.params)
        reward = dds_reward(
            params, ctx.loss_fn, ctx.inputs, labels, ctx.meta_inputs, ctx.meta_labels, eps
        )

        def objective(scorer):
            w = scorer_weights(scorer, ctx.apply_fn, ctx.inputs)
            return masked_mean(reward * jnp.log(w), ctx.valid), w

        (_, w), g = jax.value_and_grad(objective, has_aux=True)(state.params)
        updates, opt_state = tx.update(g, state.opt_state, state.params)
        scorer = optax.apply_updates(state.params, updates)
        loss = masked_mean(jax.lax.stop_gradient(w) * losses, ctx.valid)
        return loss, state._replace(params=scorer, opt_state=opt_state)

    return Curriculum(
        name="dds",
        data_prepare=data_prepare,
        model_prepare=model_prepare,
        loss_curriculum=loss_curriculum,
        meta_fraction=0.1,
    )
