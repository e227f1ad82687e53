"""Reverse-process samplers: DDPM ancestral sampling and DDIM, both as ``lax.scan`` loops.

Both samplers share one interface:

* ``eps_fn(x_t, t) -> ε̂``: the noise-prediction model, ``t`` an int32 ``[B]`` array (the
  same step for every example; ``B`` is the leading axis of the leaves of ``x_t``);
* ``clip_x0``: optional bound c; the predicted x̂₀ is clipped to [−c, c] at every step;
* ``project``: optional hook applied to the state after every step (and to x_T), e.g.
  MCF's re-centering of the center of mass;
* ``mask``: optional ``[B, ...]`` prefix of the leaves' shape; padding stays exactly 0.

They are pure functions of their arguments: deterministic given ``key``, ``jit``-able (the
step count is static), and differentiable in the model parameters if ``eps_fn`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import check_integer
from jaxlab.diffusion._tree import apply_mask, check_mask, check_sampling, normal_like
from jaxlab.diffusion.schedules import Schedule

PyTree = Any
EpsFn = Callable[[PyTree, jax.Array], PyTree]
Projection = Callable[[PyTree], PyTree]


def _prepare(x_T: PyTree, mask, project: Projection | None):
    mask = check_mask(x_T, mask)
    leaves = jax.tree.leaves(x_T)
    if not leaves or leaves[0].ndim == 0:
        raise ValueError("x_T must be a non-empty pytree of arrays with a leading batch axis")
    batch = leaves[0].shape[0]
    if any(leaf.shape[:1] != (batch,) for leaf in leaves):
        raise ValueError("every leaf of x_T must share the leading batch axis")

    def finish(x):
        x = apply_mask(x, mask)
        if project is not None:
            x = apply_mask(project(x), mask)
        return x

    return mask, batch, finish


def _predict_x0(x_t, eps, sqrt_ab, sqrt_1mab, clip_x0):
    # Eq. (15) of Ho et al.: x̂₀ = (x_t − √(1 − ᾱ_t) ε̂) / √ᾱ_t.
    x0 = jax.tree.map(lambda x, e: (x - sqrt_1mab * e) / sqrt_ab, x_t, eps)
    if clip_x0 is not None:
        x0 = jax.tree.map(lambda v: jnp.clip(v, -clip_x0, clip_x0), x0)
    return x0


def _check_clip(clip_x0):
    if clip_x0 is not None and not clip_x0 > 0:
        raise ValueError(f"clip_x0 must be positive or None; got {clip_x0}")


def ancestral_sample(
    eps_fn: EpsFn,
    schedule: Schedule,
    x_T: PyTree,
    key: jax.Array,
    *,
    mask: jax.typing.ArrayLike | None = None,
    clip_x0: float | None = None,
    project: Projection | None = None,
) -> PyTree:
    """DDPM ancestral sampling through all T steps.

    x̂₀ = (x_t − √(1 − ᾱ_t) ε_θ(x_t, t)) / √ᾱ_t, optionally clipped      (Eq. 15, Ho et al.)
    x_{t-1} = μ̃_t(x̂₀, x_t) + σ_t z,   μ̃_t = c₁ x̂₀ + c₂ x_t,  σ_t² = β̃_t   (Eqs. 6–7)

    with no noise added at the last step (t = 0).

    Args:
      eps_fn: the ε-prediction model ``eps_fn(x_t, t[B]) -> ε̂``.
      schedule: the noise schedule used in training.
      x_T: the starting noise, a pytree of ``[B, ...]`` leaves (usually N(0, I)).
      key: PRNG key for the per-step noise; step t uses ``fold_in(key, t)``.
      mask: optional ``[B, ...]`` real-entry mask.
      clip_x0: optional bound on x̂₀.
      project: optional per-step projection of the state.

    Returns:
      x₀, a pytree like ``x_T``.

    Example:
      >>> from jaxlab.diffusion import cosine_beta_schedule
      >>> eps_fn = lambda x, t: jnp.zeros_like(x)  # a stand-in for a trained model
      >>> x_T = jax.random.normal(jax.random.key(0), (2, 3))
      >>> x = ancestral_sample(eps_fn, cosine_beta_schedule(100), x_T, jax.random.key(1),
      ...                      clip_x0=1.0)
      >>> x.shape, bool(jnp.all(jnp.abs(x) <= 1.0))
      ((2, 3), True)

    References:
      Ho, Jain & Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020.
    """
    check_sampling(schedule, key, eps_fn, "eps_fn")
    _check_clip(clip_x0)
    mask, batch, finish = _prepare(x_T, mask, project)

    def step(x, t):
        eps = eps_fn(x, jnp.full((batch,), t, jnp.int32))
        x0 = _predict_x0(
            x,
            eps,
            schedule.sqrt_alphas_cumprod[t],
            schedule.sqrt_one_minus_alphas_cumprod[t],
            clip_x0,
        )
        c1, c2 = schedule.posterior_mean_coef1[t], schedule.posterior_mean_coef2[t]
        sigma = jnp.where(t > 0, jnp.exp(0.5 * schedule.posterior_log_variance_clipped[t]), 0.0)
        z = normal_like(jax.random.fold_in(key, t), x)
        # Eqs. (6)-(7): x_{t-1} = c₁ x̂₀ + c₂ x_t + σ_t z.
        x = jax.tree.map(lambda a, b, n: c1 * a + c2 * b + sigma * n, x0, x, z)
        return finish(x), None

    steps = jnp.arange(schedule.num_steps - 1, -1, -1, dtype=jnp.int32)
    x, _ = jax.lax.scan(step, finish(x_T), steps)
    return x


def ddim_timesteps(total_steps: int, num_steps: int) -> np.ndarray:
    """The DDIM sub-sequence τ: ``num_steps`` evenly spaced steps of ``[0, total_steps)``."""
    check_integer("total_steps", total_steps, low=1)
    check_integer("num_steps", num_steps, low=1)
    if not 1 <= num_steps <= total_steps:
        raise ValueError(f"num_steps must be in [1, {total_steps}]; got {num_steps}")
    return np.round(np.linspace(0, total_steps - 1, num_steps)).astype(np.int32)


def ddim_sample(
    eps_fn: EpsFn,
    schedule: Schedule,
    x_T: PyTree,
    key: jax.Array,
    *,
    num_steps: int = 50,
    eta: float = 0.0,
    mask: jax.typing.ArrayLike | None = None,
    clip_x0: float | None = None,
    project: Projection | None = None,
) -> PyTree:
    """DDIM sampling on an evenly spaced sub-sequence τ of the training steps.

    x_{τ_{i-1}} = √ᾱ_{τ_{i-1}} x̂₀ + √(1 − ᾱ_{τ_{i-1}} − σ²) ε̂ + σ z      (Eq. 12, Song et al.)
    σ = η √((1 − ᾱ_{τ_{i-1}}) / (1 − ᾱ_{τ_i})) √(1 − ᾱ_{τ_i} / ᾱ_{τ_{i-1}})   (Eq. 16)

    with ᾱ_{τ_{-1}} = 1. η = 0 is the deterministic DDIM; η = 1 matches DDPM's variance.
    When x̂₀ is clipped, ε̂ is recomputed from the clipped x̂₀ so the update stays
    consistent.

    Args:
      eps_fn: the ε-prediction model ``eps_fn(x_t, t[B]) -> ε̂``.
      schedule: the noise schedule used in training.
      x_T: the starting noise, a pytree of ``[B, ...]`` leaves.
      key: PRNG key for the per-step noise (unused when η = 0).
      num_steps: the length of τ (static).
      eta: η ≥ 0.
      mask: optional ``[B, ...]`` real-entry mask.
      clip_x0: optional bound on x̂₀.
      project: optional per-step projection of the state.

    Returns:
      x₀, a pytree like ``x_T``.

    Example:
      >>> from jaxlab.diffusion import cosine_beta_schedule
      >>> eps_fn = lambda x, t: jnp.zeros_like(x)  # a stand-in for a trained model
      >>> x_T = jax.random.normal(jax.random.key(0), (2, 3))
      >>> x = ddim_sample(eps_fn, cosine_beta_schedule(100), x_T, jax.random.key(1),
      ...                 num_steps=10, eta=1.0)
      >>> x.shape
      (2, 3)

    References:
      Song, Meng & Ermon, "Denoising Diffusion Implicit Models", ICLR 2021.
    """
    check_sampling(schedule, key, eps_fn, "eps_fn")
    _check_clip(clip_x0)
    if eta < 0:
        raise ValueError(f"eta must be ≥ 0; got {eta}")
    mask, batch, finish = _prepare(x_T, mask, project)
    tau = ddim_timesteps(schedule.num_steps, num_steps)
    tau_prev = np.concatenate([[-1], tau[:-1]]).astype(np.int32)
    ab = schedule.alphas_cumprod

    def step(x, ts):
        i, t, t_prev = ts
        ab_t = ab[t]
        ab_prev = jnp.where(t_prev >= 0, ab[jnp.maximum(t_prev, 0)], 1.0)
        eps = eps_fn(x, jnp.full((batch,), t, jnp.int32))
        x0 = _predict_x0(x, eps, jnp.sqrt(ab_t), jnp.sqrt(1.0 - ab_t), clip_x0)
        if clip_x0 is not None:
            eps = jax.tree.map(lambda a, b: (a - jnp.sqrt(ab_t) * b) / jnp.sqrt(1.0 - ab_t), x, x0)
        # Eq. (16): σ_τ(η).
        sigma = eta * jnp.sqrt((1.0 - ab_prev) / (1.0 - ab_t) * (1.0 - ab_t / ab_prev))
        dir_coef = jnp.sqrt(jnp.maximum(1.0 - ab_prev - sigma**2, 0.0))
        z = normal_like(jax.random.fold_in(key, i), x)
        # Eq. (12).
        x = jax.tree.map(
            lambda a, e, n: jnp.sqrt(ab_prev) * a + dir_coef * e + sigma * n, x0, eps, z
        )
        return finish(x), None

    order = np.arange(num_steps - 1, -1, -1)
    xs = (jnp.asarray(order, jnp.int32), jnp.asarray(tau[order]), jnp.asarray(tau_prev[order]))
    x, _ = jax.lax.scan(step, finish(x_T), xs)
    return x
