"""Self-paced learning (SPL): train on the samples the current model finds easy.

Each epoch ranks the training set by the current model's loss and keeps (hard weighting)
or up-weights (soft weighting) the easiest fraction ``λ(e)``, which a pacing function
grows to 1. The ranking runs on the host between epochs (a data-dependent selection);
the weights enter the jitted step through the default loss hook.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_range, has_nan
from jaxlab.curriculum.base import Curriculum, CurriculumState, check_weights

PACINGS = ("linear", "geom", "root")
WEIGHTINGS = ("hard", "linear", "logarithmic", "logistic", "polynomial")


def pacing(
    epoch: int, start_rate: float, grow_epochs: int, kind: str = "linear", p: int = 2
) -> float:
    """The fraction of the training set used at ``epoch`` (counted from 1), capped at 1.

    With ``λ₀`` = ``start_rate``, ``E`` = ``grow_epochs``, ``e`` = ``epoch``:
    linear ``λ₀ + (1 − λ₀)·e/E``; geometric ``2^{log₂λ₀ · (1 − e/E)}``;
    root-p ``(λ₀^p + (1 − λ₀^p)·e/E)^{1/p}``. Each is evaluated in the reference's order of
    operations (``λ₀ + (1 − λ₀)/E·e``, …), so that :func:`spl_weights`'s ``⌈rate·N⌉``
    lands on the reference's sample count also where ``rate·N`` rounds just above an
    integer (e.g. λ₀ = 0.2, E = 15, e = 12, N = 100: 84.00000000000001 → 85 samples).

    Args:
      epoch: the epoch ``e ≥ 1`` (the reference advances its counter before pacing).
      start_rate: ``λ₀`` in ``(0, 1]``.
      grow_epochs: ``E ≥ 1``, the epoch at which the whole set is used.
      kind: ``"linear"``, ``"geom"`` or ``"root"``.
      p: the root's order for ``"root"``.

    Returns:
      ``min(1, λ(e))``.

    Example:
      >>> from jaxlab.curriculum.spl import pacing
      >>> round(pacing(5, 0.2, 10), 4), pacing(20, 0.2, 10)
      (0.6, 1.0)
    """
    check_range("start_rate", start_rate, 0.0, 1.0, low_open=True)
    check_integer("grow_epochs", grow_epochs, low=1)
    check_integer("epoch", epoch, low=0)
    if kind == "root":
        check_integer("p", p, low=1)
    if kind == "linear":
        rate = start_rate + (1.0 - start_rate) / grow_epochs * epoch
    elif kind == "geom":
        log_start = math.log2(start_rate)
        rate = 2.0 ** (-log_start / grow_epochs * epoch + log_start)
    elif kind == "root":
        # The reference raises to 1/2 for every p; the root-p function is the 1/p-th root.
        rate = (start_rate**p + (1.0 - start_rate**p) / grow_epochs * epoch) ** (1.0 / p)
    else:
        raise ValueError(f"pacing kind must be one of {PACINGS}, got {kind!r}")
    return min(1.0, rate)


def spl_weights(
    losses: ArrayLike, rate: float, weighting: str = "hard", t: float = 2.0
) -> jax.Array:
    """Self-paced weights of ``losses [N]`` keeping the easiest ``⌈rate·N⌉`` samples.

    With ``λ`` the largest of the ``k = ⌈rate·N⌉`` smallest losses and ``ℓ_i`` the loss:
    hard ``v_i = 1[ℓ_i ≤ λ]`` (exactly ``k`` ones, ties broken by index);
    linear ``v_i = 1[ℓ_i < λ](1 − ℓ_i/λ)``;
    logarithmic ``v_i = 1[ℓ_i < λ] log(ℓ_i + 1 − λ)/log(1 − λ)`` (needs ``λ < 1``);
    logistic ``v_i = (1 + e^{−λ})/(1 + e^{ℓ_i − λ})``;
    polynomial ``v_i = 1[ℓ_i < λ](1 − ℓ_i/λ)^{1/(t−1)}``.

    ``k = ⌈N·rate⌉`` exactly, as the reference (no slack for float error: see
    :func:`pacing`). NaN losses are refused with a ``ValueError`` when concrete and give
    NaN weights under ``jit``.

    Args:
      losses: ``[N]`` per-sample losses (≥ 0).
      rate: fraction of samples to select, in ``(0, 1]`` (static); at least one is kept.
      weighting: one of ``"hard"``, ``"linear"``, ``"logarithmic"``, ``"logistic"``,
        ``"polynomial"``.
      t: the polynomial's order ``t > 1``.

    Returns:
      ``[N]`` float32 weights in ``[0, 1]`` (``[0, (1 + e^{−λ})/(1 + e^{−λ})]`` for
      logistic).

    Example:
      >>> from jaxlab.curriculum import spl_weights
      >>> spl_weights(jnp.array([0.3, 0.1, 0.9, 0.5]), 0.5).tolist()
      [1.0, 1.0, 0.0, 0.0]

    References:
      Kumar, Packer, Koller, Self-Paced Learning for Latent Variable Models, NeurIPS 2010;
      Wang, Chen, Zhu, A Survey on Curriculum Learning, TPAMI 2021 (soft weightings).
    """
    losses = as_float("losses", losses).astype(jnp.float32)
    if losses.ndim != 1 or losses.shape[0] == 0:
        raise ValueError(f"losses must be [N] with N >= 1, got shape {losses.shape}")
    check_range("rate", rate, 0.0, 1.0, low_open=True)
    if weighting == "polynomial":
        check_range("t", t, 1.0, low_open=True)
    if has_nan(losses):
        raise ValueError("losses hold NaN: no order of difficulty")
    n = losses.shape[0]
    k = max(1, math.ceil(n * rate))  # the reference's count, Eq. of CurBench's SPL
    weights = _spl_weights(losses, k, weighting, t)
    return jnp.where(jnp.any(jnp.isnan(losses)), jnp.nan, weights)


def _spl_weights(losses: jax.Array, k: int, weighting: str, t: float) -> jax.Array:
    n = losses.shape[0]
    order = jnp.argsort(losses, stable=True)
    threshold = losses[order[k - 1]]
    if weighting == "hard":
        return jnp.zeros(n, jnp.float32).at[order[:k]].set(1.0)
    mask = (losses < threshold).astype(jnp.float32)
    if weighting == "linear":
        return mask * (1.0 - losses / threshold)
    if weighting == "logarithmic":
        return mask * jnp.log(losses + 1.0 - threshold) / jnp.log(1.0 - threshold)
    if weighting == "logistic":
        return (1.0 + jnp.exp(-threshold)) / (1.0 + jnp.exp(losses - threshold))
    if weighting == "polynomial":
        return mask * jnp.clip(1.0 - losses / threshold, 0.0) ** (1.0 / (t - 1.0))
    raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")


def spl(
    start_rate: float = 0.2,
    grow_epochs: int = 15,
    grow_fn: str = "linear",
    weighting: str = "hard",
    p: int = 2,
    t: float = 2.0,
) -> Curriculum:
    """Self-paced learning as a curriculum (CurBench's SPL; defaults of the spec).

    Each epoch ``e`` (from 1) keeps/weights the easiest ``pacing(e)`` fraction of the
    training set under the current model's per-sample loss. With ``weighting="hard"`` the
    trainer trains only on the selected samples (fewer steps early on).

    Example:
      >>> from jaxlab.curriculum import spl
      >>> c = spl(start_rate=0.25, grow_epochs=4)
      >>> s = c.data_prepare(4, 2, jax.random.key(0))
      >>> c.data_curriculum(s, 0, np.array([0.3, 0.1, 0.9, 0.5])).weights.tolist()
      [1.0, 1.0, 0.0, 0.0]
    """
    if grow_fn not in PACINGS:
        raise ValueError(f"grow_fn must be one of {PACINGS}, got {grow_fn!r}")
    if weighting == "polynomial":
        check_range("t", t, 1.0, low_open=True)
    pacing(1, start_rate, grow_epochs, grow_fn, p)  # validates the pacing arguments
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")

    def data_curriculum(state: CurriculumState, epoch: int, losses) -> CurriculumState:
        if losses is None:
            raise ValueError("spl needs the per-sample losses (needs_losses=True)")
        rate = pacing(epoch + 1, start_rate, grow_epochs, grow_fn, p)
        w = np.asarray(spl_weights(losses, rate, weighting, t))
        if weighting != "hard" and not np.any(w > 0):
            w = np.asarray(spl_weights(losses, rate, "hard"))  # all ties: keep the k easiest
        return state._replace(weights=check_weights(w, len(losses), "spl weights"))

    return Curriculum(name="spl", data_curriculum=data_curriculum, needs_losses=True)
