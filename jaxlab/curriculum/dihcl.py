"""Dynamic instance hardness (DIHCL): sample hard-so-far instances more often."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_labels, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState, masked_mean


def dih_update(
    dih: ArrayLike,
    losses: ArrayLike,
    indices: ArrayLike,
    valid: ArrayLike,
    discount: float,
    lr: float,
) -> jax.Array:
    """The dynamic instance hardness after a batch: ``r_i ← (1−γ) r_i + γ ℓ_i / max(α, 1e-3)``.

    Only the batch's valid rows change (``γ`` = ``discount``, ``α`` = ``lr``: the
    reference normalises the loss by the learning rate).

    Args:
      dih: ``[N]`` hardness. losses: ``[b]``. indices: ``[b]`` rows. valid: ``[b]``.

    Returns:
      ``[N]`` updated hardness.

    Example:
      >>> from jaxlab.curriculum.dihcl import dih_update
      >>> dih_update(jnp.zeros(3), jnp.array([2.0]), jnp.array([1]), jnp.array([True]),
      ...            0.5, 1.0).tolist()
      [0.0, 1.0, 0.0]
    """
    check_range("discount", discount, 0.0, 1.0)
    check_range("lr", lr, 0.0, low_open=True)
    if jnp.ndim(dih) != 1:
        raise ValueError(f"dih must be [N], got shape {jnp.shape(dih)}")
    check_labels("indices", indices, jnp.shape(dih)[0])
    for name, value in (("losses", losses), ("valid", valid)):
        if jnp.shape(value) != jnp.shape(indices):
            raise ValueError(
                f"{name} must be [b] like indices {jnp.shape(indices)}, got {jnp.shape(value)}"
            )
    dih = jnp.asarray(dih)
    new = (1 - discount) * dih[indices] + discount * jnp.asarray(losses) / max(lr, 1e-3)
    return dih.at[indices].set(jnp.where(jnp.asarray(valid), new, dih[indices]))


def dihcl(
    warm_epochs: int = 5, discount: float = 0.9, decay_rate: float = 0.9, bottom_size: float = 0.5
) -> Curriculum:
    """DIHCL ("loss" hardness, "rand" sampling; the reference's defaults).

    During training the loss hook tracks each sample's hardness (:func:`dih_update`).
    After ``warm_epochs`` epochs on the whole set, each epoch draws
    ``⌊rate·N⌋`` samples without replacement with probability ∝ hardness,
    ``rate ← max(rate · decay_rate, bottom_size)``.

    Example:
      >>> from jaxlab.curriculum import dihcl
      >>> dihcl().name
      'dihcl'

    References:
      Zhou, Wang, Bilmes, Curriculum Learning by Dynamic Instance Hardness, NeurIPS 2020.
    """
    check_integer("warm_epochs", warm_epochs, low=1)
    check_range("discount", discount, 0.0, 1.0)
    check_range("decay_rate", decay_rate, 0.0, 1.0, low_open=True)
    check_range("bottom_size", bottom_size, 0.0, 1.0, low_open=True)

    def data_prepare(num_samples, num_classes, key):
        del num_classes
        seed = jax.random.randint(key, (), 0, 2**31 - 1)
        return CurriculumState(
            weights=np.ones(num_samples, np.float32),
            extra={"dih": jnp.zeros(num_samples), "seed": seed},
        )

    def data_curriculum(state, epoch, losses):
        del losses
        n = len(state.weights)
        if epoch < warm_epochs:
            return state._replace(weights=np.ones(n, np.float32))
        rate = max(decay_rate ** (epoch - warm_epochs + 1), bottom_size)
        prob = np.asarray(state.extra["dih"], np.float64).copy()
        prob[prob == 0] = 1e-6
        prob /= prob.sum()
        rng = np.random.default_rng([int(state.extra["seed"]), epoch])
        chosen = rng.choice(n, max(1, int(np.floor(rate * n))), replace=False, p=prob)
        weights = np.zeros(n, np.float32)
        weights[chosen] = 1.0
        return state._replace(weights=weights)

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, labels
        dih = dih_update(
            state.extra["dih"], jax.lax.stop_gradient(losses), indices, ctx.valid, discount, ctx.lr
        )
        return masked_mean(losses, ctx.valid), state._replace(extra={**state.extra, "dih": dih})

    return Curriculum(
        name="dihcl",
        data_prepare=data_prepare,
        data_curriculum=data_curriculum,
        loss_curriculum=loss_curriculum,
    )
