"""Meta-Weight-Net (MW-Net): a small network maps a sample's loss to its weight."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState, masked_mean
from jaxlab.curriculum.meta import LossFn, check_meta


class WeightNetParams(NamedTuple):
    """Parameters of the 1-hidden-layer weighting network ``V(ℓ) = σ(w₂ᵀ relu(w₁ℓ + b₁) + b₂)``."""

    w1: jax.Array  # [1, h]
    b1: jax.Array  # [h]
    w2: jax.Array  # [h, 1]
    b2: jax.Array  # [1]


def init_weight_net(key: jax.Array, hidden: int = 100) -> WeightNetParams:
    """PyTorch-default (uniform ±1/√fan_in) initialisation of the 1 → ``hidden`` → 1 net."""
    k1, k2, k3, k4 = jax.random.split(key, 4)
    b_out = 1.0 / jnp.sqrt(hidden)
    u = lambda k, shape, bound: jax.random.uniform(k, shape, jnp.float32, -bound, bound)
    return WeightNetParams(
        u(k1, (1, hidden), 1.0),
        u(k2, (hidden,), 1.0),
        u(k3, (hidden, 1), b_out),
        u(k4, (1,), b_out),
    )


def weight_net(params: WeightNetParams, losses: ArrayLike) -> jax.Array:
    """The weight ``V(ℓ_i; Θ) ∈ (0, 1)`` of each per-sample loss ``ℓ`` (``[b]`` → ``[b]``).

    Example:
      >>> from jaxlab.curriculum.mw_net import init_weight_net, weight_net
      >>> weight_net(init_weight_net(jax.random.key(0)), jnp.ones(3)).shape
      (3,)
    """
    if not isinstance(params, WeightNetParams):
        raise ValueError(
            f"params must be WeightNetParams (from init_weight_net), got {type(params).__name__}"
        )
    if jnp.ndim(losses) != 1:
        raise ValueError(f"losses must be [b], got shape {jnp.shape(losses)}")
    x = jnp.asarray(losses)[:, None]
    h = jax.nn.relu(x @ params.w1 + params.b1[None, :])
    return jax.nn.sigmoid(h @ params.w2 + params.b2[None, :])[:, 0]


def mw_net_meta_loss(
    vparams: WeightNetParams,
    params: Any,
    loss_fn: LossFn,
    inputs: ArrayLike,
    labels: ArrayLike,
    meta_inputs: ArrayLike,
    meta_labels: ArrayLike,
    lr: float,
    valid: ArrayLike,
) -> jax.Array:
    """MW-Net's meta-objective ``mean_j ℓ^meta_j(θ̂(Θ))``, ``θ̂ = θ − α∇_θ mean_i V(ℓ_i;Θ)ℓ_i``.

    (Shu et al., Eq. (3)-(4)); its gradient in ``Θ`` (``vparams``) flows through the
    look-ahead step, the losses fed to ``V`` included.

    Example:
      >>> from jaxlab.curriculum.mw_net import init_weight_net, mw_net_meta_loss
      >>> f = lambda p, x, y: (p * x - y) ** 2
      >>> v = init_weight_net(jax.random.key(0), 4)
      >>> float(mw_net_meta_loss(v, 1.0, f, jnp.ones(2), jnp.zeros(2), jnp.ones(1),
      ...                        jnp.zeros(1), 0.0, jnp.ones(2)))
      1.0
    """
    if not isinstance(vparams, WeightNetParams):
        raise ValueError(
            f"vparams must be WeightNetParams (from init_weight_net), got {type(vparams).__name__}"
        )
    check_meta(loss_fn, lr, labels, valid=valid)
    valid = jnp.asarray(valid, jnp.float32)
    n = jnp.maximum(jnp.sum(valid), 1.0)

    inputs, labels = jnp.asarray(inputs), jnp.asarray(labels)

    def inner_loss(p):
        losses = loss_fn(p, inputs, labels)
        return jnp.sum(weight_net(vparams, losses) * losses * valid) / n

    # As in the reference graph, V's input ℓ(θ) is differentiated in the inner step too.
    grads = jax.grad(inner_loss)(params)
    new = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return jnp.mean(loss_fn(new, jnp.asarray(meta_inputs), jnp.asarray(meta_labels)))


def mw_net(hidden: int = 100, lr: float = 1e-3, weight_decay: float = 1e-4) -> Curriculum:
    """MW-Net as a curriculum: each step updates ``V`` by its meta-gradient, then trains
    the model on ``mean_i V(ℓ_i) ℓ_i`` with the updated weights held fixed.

    ``V`` is optimised by Adam (``lr``) with L2 weight decay, a tenth of the training set
    is the meta set (the reference's setting).

    Example:
      >>> from jaxlab.curriculum import mw_net
      >>> mw_net().meta_fraction
      0.1
    """
    check_integer("hidden", hidden, low=1)
    check_range("lr", lr, 0.0, low_open=True)
    check_range("weight_decay", weight_decay, 0.0)
    tx = optax.chain(optax.add_decayed_weights(weight_decay), optax.adam(lr))

    def data_prepare(num_samples, num_classes, key):
        del num_classes
        v = init_weight_net(key, hidden)
        return CurriculumState(
            weights=jnp.ones(num_samples, jnp.float32), params=v, opt_state=tx.init(v)
        )

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, indices
        params = jax.lax.stop_gradient(ctx.params)
        g = jax.grad(mw_net_meta_loss)(
            state.params,
            params,
            ctx.loss_fn,
            ctx.inputs,
            labels,
            ctx.meta_inputs,
            ctx.meta_labels,
            ctx.lr,
            ctx.valid,
        )
        updates, opt_state = tx.update(g, state.opt_state, state.params)
        v = optax.apply_updates(state.params, updates)
        w = jax.lax.stop_gradient(weight_net(v, jax.lax.stop_gradient(losses)))
        return masked_mean(w * losses, ctx.valid), state._replace(params=v, opt_state=opt_state)

    return Curriculum(
        name="mw_net", data_prepare=data_prepare, loss_curriculum=loss_curriculum, meta_fraction=0.1
    )
