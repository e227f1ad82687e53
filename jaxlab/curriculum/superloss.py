"""SuperLoss: a task-agnostic confidence-aware loss with a closed-form confidence."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState, masked_mean

_INV_E = 1.0 / math.e


def lambertw(x: ArrayLike, iterations: int = 8) -> jax.Array:
    """The principal branch ``W₀(x)`` of the Lambert W function for ``x ≥ −1/e``.

    Solves ``w·e^w = x`` by Halley's iteration from the branch-point series (near
    ``−1/e``) or ``log1p`` (elsewhere); arguments at or below ``−1/e`` give ``−1``.
    Hand-written: neither ``jax.scipy`` nor optax ships ``W``.

    Args:
      x: array, any shape.
      iterations: Halley steps (8 reach float32 precision on ``[−1/e, 1e6]``).

    Returns:
      ``W₀(x)``, same shape, float32 (or the input's float dtype).

    Example:
      >>> from jaxlab.curriculum.superloss import lambertw
      >>> round(float(lambertw(np.e)), 5)
      1.0
    """
    check_integer("iterations", iterations, low=0)
    x = jnp.asarray(x)
    x = jnp.maximum(x.astype(jnp.result_type(x, jnp.float32)), -_INV_E)
    # W₀(−1/e) = −1 exactly: the clipped inputs (SuperLoss's σ* = e), where float32's
    # rounding of −1/e alone would move W by ~1e-4 (W ≈ −1 + √(2e·δ) near the branch point).
    at_branch = x <= -_INV_E
    p = jnp.sqrt(jnp.maximum(2.0 * (math.e * x + 1.0), 0.0))
    near = -1.0 + p - p**2 / 3.0 + 11.0 / 72.0 * p**3  # series at the branch point
    far = jnp.where(x < 3.0, jnp.log1p(x), jnp.log(x) - jnp.log(jnp.log(x)))
    w = jnp.where(x < -0.3, near, far)
    for _ in range(iterations):
        ew = jnp.exp(w)
        f = w * ew - x
        wp1 = w + 1.0
        denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1)
        safe = jnp.abs(wp1) > 1e-4
        w = jnp.where(safe, w - f / jnp.where(safe, denom, 1.0), w)
    return jnp.where(at_branch, -1.0, w)


def superloss_sigma(losses: ArrayLike, tau: ArrayLike, lam: float) -> jax.Array:
    """SuperLoss's optimal confidence ``σ*_i = exp(−W₀(½·max(β_i, −2/e)))``.

    With ``β_i = (ℓ_i − τ)/λ`` (``ℓ`` = ``losses``, ``τ`` = ``tau``, ``λ`` = ``lam``), the
    minimiser over σ of ``(ℓ_i − τ)σ + λ(log σ)²`` (Castells et al., Eq. (5)). Easy samples
    (``ℓ < τ``) get ``σ > 1``, hard ones ``σ < 1``.

    Args:
      losses: ``[...]`` per-sample losses ``ℓ``.
      tau: threshold ``τ`` (scalar or broadcastable).
      lam: regularisation ``λ > 0``.

    Returns:
      ``σ*`` with the shape of ``losses``, in ``(0, e]``.

    Example:
      >>> from jaxlab.curriculum import superloss_sigma
      >>> superloss_sigma(jnp.array([1.0]), 1.0, 1.0).tolist()
      [1.0]

    References:
      Castells, Weinzaepfel, Revaud, SuperLoss: A Generic Loss for Robust Curriculum
      Learning, NeurIPS 2020.
    """
    check_range("tau", tau)
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    beta = (jnp.asarray(losses) - tau) / lam
    return jnp.exp(-lambertw(0.5 * jnp.maximum(beta, -2.0 * _INV_E)))


def superloss(tau: float = 0.0, lam: float = 1.0, fac: float = 0.9) -> Curriculum:
    """SuperLoss as a curriculum: ``mean_i (ℓ_i − τ)σ*_i + λ(log σ*_i)²`` with ``σ*`` fixed.

    ``τ`` is ``tau`` when positive, else the first batch's mean loss, then (``fac > 0``) an
    exponential moving average ``τ ← fac·τ + (1 − fac)·mean(ℓ)`` of batch means, as in the
    reference. ``σ*`` is not differentiated (``stop_gradient``), so the model's gradient
    is the σ*-weighted loss gradient. Defaults: the reference's (τ=0, λ=1, fac=0.9).

    Example:
      >>> from jaxlab.curriculum import superloss
      >>> superloss().name
      'superloss'
    """
    check_range("tau", tau)
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    if not 0.0 <= fac < 1.0:
        raise ValueError(f"fac must be in [0, 1), got {fac}")

    def data_prepare(num_samples, num_classes, key):
        del num_classes, key
        return CurriculumState(
            weights=jnp.ones(num_samples, jnp.float32), extra={"tau": jnp.asarray(tau, jnp.float32)}
        )

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del logits, labels, indices
        batch_mean = masked_mean(jax.lax.stop_gradient(losses), ctx.valid)
        old = state.extra["tau"]
        current = jnp.where(old > 0, old, batch_mean)
        if fac > 0:
            current = fac * current + (1.0 - fac) * batch_mean
        sigma = jax.lax.stop_gradient(superloss_sigma(losses, current, lam))
        per_sample = (losses - current) * sigma + lam * jnp.log(sigma) ** 2
        return masked_mean(per_sample, ctx.valid), state._replace(extra={"tau": current})

    return Curriculum(name="superloss", data_prepare=data_prepare, loss_curriculum=loss_curriculum)
