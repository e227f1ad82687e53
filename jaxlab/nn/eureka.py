"""Fixes for softmax-induced plateaus in multi-step tasks: NormSoftmax and heat treatment.

Hoffmann et al. (2024) show that a ViT trained on a two-step task plateaus because the
softmax Jacobian passes tiny gradients to W_Q and W_K when attention is near-uniform or
collapsed. Two remedies act on the attention temperature:

* ``norm_softmax``: normalise the logits of each query by their spread before the softmax,
  capped by γ (the attention layer passes γ = √d_h, the reference code's choice).
* ``heat_treatment_schedule``: anneal the attention scale (the factor multiplying q·kᵀ) on a
  half-cosine from a large initial value down to the default 1/√d_h, constant afterwards.
  The schedule is an optax schedule; pass its value at the current step as the attention
  layer's call-time ``scale`` (see ``MultiHeadAttention``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import as_float, broadcast_as

SPREADS = ("variance", "std")


def norm_softmax(
    logits: ArrayLike,
    gamma: ArrayLike,
    axis: int = -1,
    spread: str = "variance",
    where: ArrayLike | None = None,
) -> jax.Array:
    """NormSoftmax: softmax of the logits divided by min(γ, spread of the logits).

    ``norm_softmax(a) = softmax(a / min(γ, s(a)))`` along ``axis`` (Hoffmann et al., 2024,
    Sec. 5, after Jiang et al.'s NormSoftmax), where ``a = logits`` are the UNscaled
    attention logits q·kᵀ and s(a) is, per row,

    * ``spread="variance"``: the population variance mean((a − mean a)²) — the default of
      the reference code (its ``norm_softmax``);
    * ``spread="std"``: the unbiased standard deviation (``torch.std``; the reference
      code's ``norm_softmax_std`` and the paper's text).

    Large spreads (collapsed attention) are divided down; small spreads (near-uniform
    attention) are divided by the spread rather than by γ, which sharpens them. Hand-written:
    no maintained JAX library ships it. The forward is ``jax.nn.softmax(a / D)`` after one
    per-row mean/variance pass; the VJP is written in closed form from the input, the output
    and the per-row statistics of the forward (softmax cotangent plus the spread's
    derivative), which XLA fuses far better than autodiff of the forward pass; reverse mode
    only (``jax.grad``/``jax.vjp``; ``jvp`` raises). Speed: ``benchmarks/attention.py``.

    Edge cases: a constant row (s = 0, or any spread below √tiny of the dtype, ≈ 1e-19 in
    float32) gives the uniform distribution with finite gradients (the divisor is set to 1
    and the softmax subtracts the row's max); ±1e4 logits are fine.
    Entries with ``where`` False get weight 0 and are excluded from the spread; a fully
    masked row is all zeros. Non-finite unmasked logits give NaN rows (not checked, so the
    kernel stays free under ``jit``).

    Args:
      logits: ``[..., n, ...]`` unscaled logits a.
      gamma: positive scalar γ (√d_h in the attention layer); may be a traced value.
      axis: the axis to normalise over.
      spread: ``"variance"`` or ``"std"``.
      where: optional boolean mask broadcastable to ``logits``; False hides an entry.

    Returns:
      Probabilities of ``logits``' shape.

    Example:
      >>> from jaxlab.nn import norm_softmax
      >>> w = norm_softmax(jnp.array([[0.0, 1.0, 2.0], [3.0, 3.0, 3.0]]), gamma=8.0)
      >>> [round(float(v), 3) for v in w[0]], [round(float(v), 3) for v in w[1]]
      ([0.039, 0.175, 0.786], [0.333, 0.333, 0.333])

    References:
      Hoffmann, Schrodi, Bratulić, Behrmann, Fischer, Brox, "Eureka-Moments in
      Transformers: Multi-Step Tasks Reveal Softmax Induced Optimization Problems",
      ICML 2024.
    """
    if spread not in SPREADS:
        raise ValueError(f"spread must be one of {SPREADS}, got {spread!r}")
    a = as_float("logits", logits)  # ints promoted, complex refused
    if a.ndim == 0:
        raise ValueError(f"logits must have at least one axis, got shape {a.shape}")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis {axis} out of range for logits of shape {a.shape}")
    gamma_arr = jnp.asarray(gamma)
    if gamma_arr.ndim != 0:
        raise ValueError(f"gamma must be a scalar, got shape {gamma_arr.shape}")
    if not isinstance(gamma_arr, jax.core.Tracer) and not float(gamma_arr) > 0:
        raise ValueError(f"gamma must be positive, got {float(gamma_arr)}")
    gamma_arr = gamma_arr.astype(a.dtype)
    mask = None if where is None else broadcast_as("where", where, a.shape, bool)
    axis = axis % a.ndim
    if axis != a.ndim - 1:
        moved_mask = None if mask is None else jnp.moveaxis(mask, axis, -1)
        out = _norm_softmax_last(jnp.moveaxis(a, axis, -1), gamma_arr, moved_mask, spread)
        return jnp.moveaxis(out, -1, axis)
    return _norm_softmax_last(a, gamma_arr, mask, spread)


def _stats(a, gamma, mask, spread):
    """Per-row statistics of the last axis: the masked logits, mean, divisor D = min(γ, s),
    whether D = s (so the spread's derivative enters), and ∂s/∂a_j / (a_j − ā)."""
    if mask is None:
        count = jnp.asarray(a.shape[-1], a.dtype)
        mean = jnp.mean(a, axis=-1, keepdims=True)
    else:
        count = jnp.sum(mask, axis=-1, keepdims=True).astype(a.dtype)
        a = jnp.where(mask, a, 0.0)
        mean = jnp.sum(a, axis=-1, keepdims=True) / jnp.maximum(count, 1.0)
    centered = a - mean
    sq = centered * centered if mask is None else jnp.where(mask, centered * centered, 0.0)
    ss = jnp.sum(sq, axis=-1, keepdims=True)
    # Below `floor` the row is treated as constant (divisor 1: softmax of a constant row is
    # uniform) so that neither the value nor the gradient (∝ 1/D², 1/√ss) overflows.
    floor = jnp.sqrt(jnp.finfo(a.dtype).tiny)
    if spread == "variance":
        s = ss / jnp.maximum(count, 1.0)
        flat = s <= floor
        # ∂s/∂a_j = 2 (a_j − ā) / n
        ds_scale = 2.0 / jnp.maximum(count, 1.0)
    else:
        # Unbiased: torch.std's default; a single entry has spread 0 here (torch gives NaN).
        var = ss / jnp.maximum(count - 1.0, 1.0)
        flat = var <= floor * floor
        s = jnp.sqrt(jnp.where(flat, 1.0, var))
        # ∂s/∂a_j = (a_j − ā) / ((n − 1) s)
        ds_scale = 1.0 / (jnp.maximum(count - 1.0, 1.0) * s)
    uses_s = jnp.logical_and(~flat, s < gamma)
    divisor = jnp.where(flat, 1.0, jnp.minimum(gamma, jnp.where(flat, 1.0, s)))
    return a, mean, divisor, uses_s, ds_scale


def _forward(a, gamma, mask, spread):
    # The softmax itself is jax.nn.softmax (max-shifted, masked): XLA lowers it to its
    # fused softmax kernel (one YNNPACK fusion on CPU) instead of exp/sum/divide passes.
    a, mean, divisor, uses_s, ds_scale = _stats(a, gamma, mask, spread)
    p = jax.nn.softmax(a / divisor, axis=-1, where=mask)
    return p, (a, p, mean, divisor, uses_s, ds_scale)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _norm_softmax_last(a, gamma, mask, spread):
    return _forward(a, gamma, mask, spread)[0]


def _norm_softmax_fwd(a, gamma, mask, spread):
    p, res = _forward(a, gamma, mask, spread)
    return p, (res, mask)


def _norm_softmax_bwd(spread, residuals, g):
    # Residuals: the (masked) input and the output, which exist anyway, and per-row
    # statistics; a − ā is recomputed inside the fused elementwise passes, not stored.
    (a, p, mean, divisor, uses_s, ds_scale), mask = residuals
    del spread
    # Softmax cotangent u = ∂L/∂z for z = a/D: u = p ⊙ (g − Σ p g); Σ u = 0 (masked u = 0).
    pg = p * g
    u = pg - p * jnp.sum(pg, axis=-1, keepdims=True)
    centered = a - mean
    # ∂L/∂D = −Σ u a / D² = −Σ u (a − ā) / D² (Σ u = 0); D = s where s < γ, γ where γ ≤ s.
    dl_dd = -jnp.sum(centered * u, axis=-1, keepdims=True) / (divisor * divisor)
    grad_a = u / divisor + jnp.where(uses_s, dl_dd * ds_scale, 0.0) * centered
    if mask is not None:
        grad_a = jnp.where(mask, grad_a, 0.0)
    grad_gamma = jnp.sum(jnp.where(uses_s, 0.0, dl_dd))
    return grad_a, grad_gamma.astype(divisor.dtype), None


_norm_softmax_last.defvjp(_norm_softmax_fwd, _norm_softmax_bwd)


def heat_treatment_schedule(
    init_scale: float, final_scale: float, transition_steps: int
) -> Callable[[ArrayLike], jax.Array]:
    """Heat treatment: the attention scale on a half-cosine from ``init_scale`` to ``final_scale``.

    ``scale(t) = final + (init − final) · ½ (1 + cos(π · min(t, T) / T))`` with
    T = ``transition_steps``, constant at ``final_scale`` afterwards (the reference code's
    ``half_cosine`` temperature schedule, run over the first half of training from 3.0 to
    0.125 = 1/√64). The value multiplies the attention logits q·kᵀ in place of 1/√d_h; pass
    it as the call-time ``scale`` of ``MultiHeadAttention``/``ViT``. Built on
    ``optax.cosine_decay_schedule``.

    Args:
      init_scale: positive scale at step 0.
      final_scale: positive scale from step ``transition_steps`` on.
      transition_steps: positive number of steps of the half-cosine.

    Returns:
      An optax schedule ``step -> scale``.

    Example:
      >>> from jaxlab.nn import heat_treatment_schedule
      >>> sched = heat_treatment_schedule(3.0, 0.125, 100)
      >>> [round(float(sched(t)), 4) for t in (0, 50, 100, 200)]
      [3.0, 1.5625, 0.125, 0.125]

    References:
      Hoffmann et al., "Eureka-Moments in Transformers: Multi-Step Tasks Reveal Softmax
      Induced Optimization Problems", ICML 2024.
    """
    if not init_scale > 0:
        raise ValueError(f"init_scale must be positive, got {init_scale!r}")
    if not final_scale > 0:
        raise ValueError(f"final_scale must be positive, got {final_scale!r}")
    if not (isinstance(transition_steps, int) and transition_steps > 0):
        raise ValueError(f"transition_steps must be a positive int, got {transition_steps!r}")
    return optax.cosine_decay_schedule(
        init_value=init_scale, decay_steps=transition_steps, alpha=final_scale / init_scale
    )
