"""The DDPM forward process and the ε-prediction training loss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxlab._checks import is_traced
from jaxlab.diffusion._tree import (
    apply_mask,
    check_mask,
    check_sampling,
    expand_to,
    normal_like,
)
from jaxlab.diffusion.schedules import Schedule

PyTree = Any
EpsFn = Callable[[PyTree, jax.Array], PyTree]


def q_sample(schedule: Schedule, x0: PyTree, t: jax.typing.ArrayLike, noise: PyTree) -> PyTree:
    """Samples x_t ~ q(x_t | x₀) by reparameterisation.

    x_t = √ᾱ_t · x₀ + √(1 − ᾱ_t) · ε                                  (Eq. 4, Ho et al.)

    Args:
      schedule: the noise schedule (ᾱ_t).
      x0: x₀, a pytree of arrays whose leaves all share the leading shape ``t.shape``.
      t: integer step(s) in ``[0, T)``: a scalar, or ``[B]`` for a batch (one step per
        example, broadcast over the trailing axes of every leaf).
      noise: ε, a pytree with the structure and shapes of ``x0``.

    Returns:
      x_t, with the structure of ``x0``.

    Example:
      >>> from jaxlab.diffusion import cosine_beta_schedule
      >>> s = cosine_beta_schedule(1000)
      >>> x0 = jnp.ones((4, 9, 3)); eps = jnp.zeros_like(x0)
      >>> xt = q_sample(s, x0, jnp.array([0, 10, 100, 999]), eps)
      >>> xt[:, 0, 0]  # √ᾱ_t · x0 with ε = 0: from ≈ 1 down to ≈ 0
      Array([9.99...e-01, 9.99...e-01, 9.85...e-01, 4.9...e-05], dtype=float32)

    References:
      Ho, Jain & Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020.
    """
    leaves = jax.tree.leaves(x0)
    if not leaves or any(jnp.ndim(leaf) == 0 for leaf in leaves):
        raise ValueError("x0 must be a non-empty pytree of arrays with a leading batch axis")
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.integer):
        raise ValueError(f"t must be an integer array; got dtype {t.dtype}")
    check_mask(x0, t, name="t")
    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    if not is_traced(t) and t.size and not 0 <= int(t.min()) <= int(t.max()) < schedule.num_steps:
        raise ValueError(
            f"t must lie in [0, {schedule.num_steps}), got values in "
            f"[{int(t.min())}, {int(t.max())}]"
        )
    if jax.tree.structure(x0) != jax.tree.structure(noise):  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError("noise must have the pytree structure of x0")
    a = schedule.sqrt_alphas_cumprod[t]
    b = schedule.sqrt_one_minus_alphas_cumprod[t]
    # Eq. (4): x_t = √ᾱ_t x₀ + √(1 − ᾱ_t) ε.
    return jax.tree.map(lambda x, e: expand_to(a, x) * x + expand_to(b, x) * e, x0, noise)


def masked_mse(pred: PyTree, target: PyTree, mask: jax.typing.ArrayLike | None = None) -> jax.Array:
    """Mean squared error over the real entries of each example, then over the batch.

    loss = (1/B) Σ_b [ Σ_{real entries of b} (pred − target)² / #(real entries of b) ]

    Args:
      pred, target: pytrees of the same structure; leaves ``[B, ...]``.
      mask: optional ``[B, ...]`` prefix of every leaf's shape, 1 for real entries (atoms)
        and 0 for padding. ``None`` means every entry is real.

    Returns:
      A scalar. An example without any real entry contributes 0.
    """
    mask = check_mask(pred, mask)
    leaves_p, leaves_t = jax.tree.leaves(pred), jax.tree.leaves(target)
    if jax.tree.structure(pred) != jax.tree.structure(target) or not leaves_p:  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError("pred and target must be non-empty pytrees of the same structure")
    if any(jnp.shape(p) != jnp.shape(q) for p, q in zip(leaves_p, leaves_t, strict=True)):
        raise ValueError("pred and target must have the same leaf shapes")
    batch = leaves_p[0].shape[0]
    total = jnp.zeros((batch,), jnp.float32)
    count = jnp.zeros((batch,), jnp.float32)
    for p, q in zip(leaves_p, leaves_t, strict=True):
        w = jnp.ones(p.shape, jnp.float32)
        if mask is not None:
            w = w * expand_to(mask, p).astype(jnp.float32)
        sq = jnp.square(p.astype(jnp.float32) - q.astype(jnp.float32)) * w
        total = total + jnp.sum(jnp.reshape(sq, (batch, -1)), axis=1)
        count = count + jnp.sum(jnp.reshape(w, (batch, -1)), axis=1)
    per_example = total / jnp.maximum(count, 1.0)
    return jnp.mean(per_example)


def ddpm_loss(
    eps_fn: EpsFn,
    schedule: Schedule,
    x0: PyTree,
    key: jax.Array,
    mask: jax.typing.ArrayLike | None = None,
) -> jax.Array:
    """The simplified DDPM objective with ε-prediction, masked per example.

    L_simple = E_{t, x₀, ε} ‖ε − ε_θ(√ᾱ_t x₀ + √(1 − ᾱ_t) ε, t)‖²      (Eq. 14, Ho et al.)

    t is drawn uniformly from ``[0, T)`` per example and ε ~ N(0, I) (zero on padding); the
    squared error is averaged over the real entries of each example, then over the batch.

    Args:
      eps_fn: ``eps_fn(x_t, t) -> ε̂`` with ``x_t`` a pytree of ``[B, ...]`` leaves and
        ``t`` an int32 ``[B]`` array.
      schedule: the noise schedule.
      x0: clean data, pytree of ``[B, ...]`` leaves (padding entries should be 0).
      key: PRNG key for t and ε.
      mask: optional ``[B, ...]`` prefix of every leaf's shape (1 = real entry).

    Returns:
      The scalar loss.

    References:
      Ho, Jain & Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020.
    """
    check_sampling(schedule, key, eps_fn, "eps_fn")
    mask = check_mask(x0, mask)
    leaves = jax.tree.leaves(x0)
    if not leaves or leaves[0].ndim == 0:
        raise ValueError("x0 must be a non-empty pytree of arrays with a leading batch axis")
    batch = leaves[0].shape[0]
    t_rng, eps_rng = jax.random.split(key)
    t = jax.random.randint(t_rng, (batch,), 0, schedule.num_steps, dtype=jnp.int32)
    noise = apply_mask(normal_like(eps_rng, x0), mask)
    x_t = apply_mask(q_sample(schedule, x0, t, noise), mask)
    return masked_mse(eps_fn(x_t, t), noise, mask)  # Eq. (14)
