"""DDPM noise schedules and the quantities derived from them.

The forward process of a DDPM (Ho et al., 2020) is fixed by a sequence of variances
β_0 … β_{T-1}. Every sampler and loss needs the same derived arrays (ᾱ_t, the posterior
mean coefficients, …); :class:`Schedule` holds them once, as a pytree of ``jax.Array`` so
it can be passed straight into ``jit``-ed functions.

Index convention: ``t ∈ {0, …, T-1}``; step ``t`` carries β_t and ᾱ_t = Π_{s ≤ t} (1 − β_s),
so ``t = 0`` is the least noisy level and ``t = T-1`` is (close to) pure noise.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Schedule(NamedTuple):
    """A DDPM noise schedule with its derived coefficients; every field is ``[T]``.

    Attributes:
      betas: β_t.
      alphas_cumprod: ᾱ_t = Π_{s ≤ t} (1 − β_s).
      alphas_cumprod_prev: ᾱ_{t-1}, with ᾱ_{-1} = 1.
      sqrt_alphas_cumprod: √ᾱ_t.
      sqrt_one_minus_alphas_cumprod: √(1 − ᾱ_t).
      posterior_variance: β̃_t = β_t (1 − ᾱ_{t-1}) / (1 − ᾱ_t), Eq. (7) of Ho et al.
      posterior_log_variance_clipped: log β̃_t with β̃_0 replaced by β̃_1 (β̃_0 = 0).
      posterior_mean_coef1: √ᾱ_{t-1} β_t / (1 − ᾱ_t), the coefficient of x₀ in μ̃_t.
      posterior_mean_coef2: √α_t (1 − ᾱ_{t-1}) / (1 − ᾱ_t), the coefficient of x_t in μ̃_t.
    """

    betas: jax.Array
    alphas_cumprod: jax.Array
    alphas_cumprod_prev: jax.Array
    sqrt_alphas_cumprod: jax.Array
    sqrt_one_minus_alphas_cumprod: jax.Array
    posterior_variance: jax.Array
    posterior_log_variance_clipped: jax.Array
    posterior_mean_coef1: jax.Array
    posterior_mean_coef2: jax.Array

    @property
    def num_steps(self) -> int:
        """T, the number of diffusion steps (static: taken from the array shape)."""
        return self.betas.shape[0]


def schedule_from_betas(betas: np.typing.ArrayLike) -> Schedule:
    """Builds a :class:`Schedule` from β_0 … β_{T-1}.

    The derived quantities are computed in float64 NumPy and stored as float32 arrays.

    Args:
      betas: ``[T]`` variances, each in (0, 1].

    Returns:
      The schedule.

    Raises:
      ValueError: ``betas`` is not a non-empty 1-D array of values in (0, 1].

    Example:
      >>> s = schedule_from_betas(np.full(10, 0.1))
      >>> s.num_steps
      10
    """
    betas = np.asarray(betas, dtype=np.float64)
    if betas.ndim != 1 or betas.shape[0] < 2:
        raise ValueError(f"betas must be 1-D with at least 2 steps; got shape {betas.shape}")
    if not np.all(np.isfinite(betas)) or np.any(betas <= 0) or np.any(betas > 1):
        raise ValueError("betas must be finite and in (0, 1]")
    alphas = 1.0 - betas
    alphas_cumprod = np.cumprod(alphas)  # ᾱ_t = Π α_s
    alphas_cumprod_prev = np.concatenate([[1.0], alphas_cumprod[:-1]])
    # Eq. (7) of Ho et al.: q(x_{t-1} | x_t, x₀) = N(μ̃_t, β̃_t I).
    one_minus = 1.0 - alphas_cumprod
    posterior_variance = betas * (1.0 - alphas_cumprod_prev) / one_minus
    posterior_log_variance_clipped = np.log(
        np.concatenate([[posterior_variance[1]], posterior_variance[1:]])
    )
    coef1 = betas * np.sqrt(alphas_cumprod_prev) / one_minus
    coef2 = (1.0 - alphas_cumprod_prev) * np.sqrt(alphas) / one_minus
    arrays = (
        betas,
        alphas_cumprod,
        alphas_cumprod_prev,
        np.sqrt(alphas_cumprod),
        np.sqrt(one_minus),
        posterior_variance,
        posterior_log_variance_clipped,
        coef1,
        coef2,
    )
    return Schedule(*(jnp.asarray(a, dtype=jnp.float32) for a in arrays))


def cosine_beta_schedule(num_steps: int, s: float = 0.008, max_beta: float = 0.999) -> Schedule:
    """The cosine schedule of Nichol & Dhariwal (2021).

    ᾱ(t) = f(t) / f(0),  f(t) = cos²(((t / T) + s) / (1 + s) · π / 2)      (Eq. 17)
    β_t = min(1 − ᾱ(t + 1) / ᾱ(t), max_beta)

    Args:
      num_steps: T ≥ 2.
      s: the small offset ``s`` that keeps β_0 from being vanishingly small.
      max_beta: the clip on β_t that avoids the singularity at t = T.

    Returns:
      The :class:`Schedule`.

    Example:
      >>> sched = cosine_beta_schedule(1000)
      >>> float(sched.betas[-1])
      0.999

    References:
      Nichol & Dhariwal, "Improved Denoising Diffusion Probabilistic Models", ICML 2021.
    """
    if int(num_steps) != num_steps or num_steps < 2:
        raise ValueError(f"num_steps must be an integer ≥ 2; got {num_steps}")
    if not 0.0 < max_beta <= 1.0:
        raise ValueError(f"max_beta must be in (0, 1]; got {max_beta}")
    if s < 0:
        raise ValueError(f"s must be ≥ 0; got {s}")
    t = np.arange(num_steps + 1, dtype=np.float64) / num_steps
    f = np.cos((t + s) / (1.0 + s) * np.pi / 2.0) ** 2  # Eq. (17)
    alpha_bar = f / f[0]
    betas = np.minimum(1.0 - alpha_bar[1:] / alpha_bar[:-1], max_beta)
    return schedule_from_betas(betas)


def linear_beta_schedule(
    num_steps: int, beta_start: float = 1e-4, beta_end: float = 2e-2
) -> Schedule:
    """The linear schedule of Ho et al. (2020): β_t evenly spaced in [beta_start, beta_end].

    Args:
      num_steps: T ≥ 2.
      beta_start: β_0.
      beta_end: β_{T-1}.

    Returns:
      The :class:`Schedule`.

    References:
      Ho, Jain & Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020.
    """
    if int(num_steps) != num_steps or num_steps < 2:
        raise ValueError(f"num_steps must be an integer ≥ 2; got {num_steps}")
    if not 0.0 < beta_start <= beta_end <= 1.0:
        raise ValueError(f"need 0 < beta_start ≤ beta_end ≤ 1; got {beta_start}, {beta_end}")
    return schedule_from_betas(np.linspace(beta_start, beta_end, num_steps))
