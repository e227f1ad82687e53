"""Latent landmarks (Dr. Strategy): a VQ layer with straight-through gradients and an EMA
codebook, and k-means++-style re-seeding of dead codes.

Hand-written: no maintained JAX library ships a VQ-VAE quantiser with EMA updates (the
DeepMind Sonnet ``VectorQuantizerEMA`` is TensorFlow); the equations follow van den Oord et
al. (2017, Eq. 3 and Appendix A.1) as used by the Dr. Strategy reference code.

    q(z_e) = e_k,  k = argmin_j ‖z_e − e_j‖²                           (nearest code)
    z_q = z_e + sg(q(z_e) − z_e)                                        (straight-through)
    L_commit = β ‖z_e − sg(q(z_e))‖²
    N_k ← γ N_k + (1 − γ) n_k,   m_k ← γ m_k + (1 − γ) Σ_{i: k_i = k} z_e,i
    e_k = m_k / Ñ_k,  Ñ_k = (N_k + ε) / (Σ_j N_j + K ε) · Σ_j N_j       (Laplace smoothing)

References:
  van den Oord, Vinyals, Kavukcuoglu. Neural Discrete Representation Learning. NeurIPS 2017.
  Hamed, Kim, Kim, Yoon, Ahn. Dr. Strategy: Model-Based Generalist Agents with Strategic
  Dreaming. ICML 2024.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_labels, check_range, check_type

__all__ = ["VQState", "ema_update", "init_vq", "quantize", "reseed_dead_codes"]


class VQState(NamedTuple):
    """EMA codebook: ``codebook [K, D]``, ``counts [K]`` (N_k), ``sums [K, D]`` (m_k)."""

    codebook: jax.Array
    counts: jax.Array
    sums: jax.Array


def init_vq(key: ArrayLike, num_codes: int, dim: int, scale: float = 1.0) -> VQState:
    """A codebook of ``num_codes`` Gaussian codes ``[K, D]`` with unit EMA counts."""
    check_integer("num_codes", num_codes, low=1)
    check_integer("dim", dim, low=1)
    check_range("scale", scale, 0.0, low_open=True)
    codebook = scale * jax.random.normal(check_key("key", key), (num_codes, dim))
    return VQState(codebook, jnp.ones(num_codes), codebook)


def _check(z_e: jax.Array, codebook: jax.Array) -> None:
    if z_e.ndim != 2 or codebook.ndim != 2 or z_e.shape[1] != codebook.shape[1]:
        raise ValueError(
            f"z_e must be [n, D] and codebook [K, D], got {z_e.shape}, {codebook.shape}"
        )


def quantize(
    z_e: ArrayLike, codebook: ArrayLike, beta: float = 1e-4
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Nearest-code quantisation with the straight-through estimator.

    Args:
      z_e: encoder outputs ``[n, D]``.
      codebook: ``e: [K, D]`` (not trained by gradients; see :func:`ema_update`).
      beta: ``β`` of the commitment loss.

    Returns:
      ``(z_q [n, D], codes [n] int, commitment loss [])``; ``z_q`` equals the chosen codes
      in the forward pass and passes gradients to ``z_e`` unchanged.

    Example:
      >>> from jaxlab.rl.landmarks import quantize
      >>> zq, k, _ = quantize(jnp.array([[0.9, 0.1]]), jnp.eye(2))
      >>> zq.tolist(), k.tolist()
      ([[1.0, 0.0]], [0])
    """
    z_e, codebook = jnp.asarray(z_e), jax.lax.stop_gradient(jnp.asarray(codebook))
    _check(z_e, codebook)
    check_range("beta", beta, 0.0)
    d = jnp.sum(z_e**2, 1, keepdims=True) - 2 * z_e @ codebook.T + jnp.sum(codebook**2, 1)[None]
    codes = jnp.argmin(d, axis=1)
    q = codebook[codes]
    z_q = z_e + jax.lax.stop_gradient(q - z_e)  # straight-through
    commit = beta * jnp.mean(jnp.sum(jnp.square(z_e - jax.lax.stop_gradient(q)), 1))
    return z_q, codes, commit


def ema_update(
    state: VQState, z_e: ArrayLike, codes: ArrayLike, decay: float = 0.99, eps: float = 1e-5
) -> VQState:
    """EMA codebook update (van den Oord et al. 2017, Appendix A.1; module docstring).

    Args:
      state: the current :class:`VQState`.
      z_e: ``[n, D]`` encoder outputs of the batch.
      codes: ``[n]`` their assigned codes (from :func:`quantize`).
      decay: ``γ``.
      eps: ``ε`` of the Laplace smoothing.

    Returns:
      The updated :class:`VQState`.
    """
    check_type("state", state, VQState)
    z_e = jax.lax.stop_gradient(jnp.asarray(z_e))
    _check(z_e, state.codebook)
    k = state.codebook.shape[0]
    codes = check_labels("codes", codes, k)
    check_range("decay", decay, 0.0, 1.0)
    check_range("eps", eps, 0.0, low_open=True)
    onehot = jax.nn.one_hot(jnp.asarray(codes), k, dtype=z_e.dtype)  # [n, K]
    counts = decay * state.counts + (1 - decay) * onehot.sum(0)
    sums = decay * state.sums + (1 - decay) * onehot.T @ z_e
    total = counts.sum()
    smoothed = (counts + eps) / (total + k * eps) * total
    return VQState(sums / smoothed[:, None], counts, sums)


def reseed_dead_codes(
    state: VQState, z_e: ArrayLike, key: ArrayLike, min_count: float = 1e-3
) -> VQState:
    """Re-seed codes whose EMA count fell below ``min_count`` from batch points.

    Each dead code gets a batch point drawn with probability proportional to its distance to
    the nearest live code (k-means++-style, as in the Dr. Strategy reference); its EMA count
    and sum restart at one point. Live codes are unchanged.

    Args:
      state: :class:`VQState`.
      z_e: ``[n, D]`` batch points.
      key: PRNG key.
      min_count: usage threshold on ``N_k``.
    """
    check_type("state", state, VQState)
    z_e = jnp.asarray(z_e)
    _check(z_e, state.codebook)
    check_range("min_count", min_count, 0.0)
    key = check_key("key", key)
    dead = state.counts < min_count
    d = jnp.sum(jnp.square(z_e[:, None, :] - state.codebook[None]), -1)  # [n, K]
    d_live = jnp.min(jnp.where(dead[None], jnp.inf, d), 1)
    d_live = jnp.where(jnp.isfinite(d_live), d_live, 1.0)
    p = jnp.sqrt(d_live) + 1e-12
    idx = jax.random.choice(key, z_e.shape[0], (state.codebook.shape[0],), p=p / p.sum())
    new = z_e[idx]
    codebook = jnp.where(dead[:, None], new, state.codebook)
    counts = jnp.where(dead, 1.0, state.counts)
    sums = jnp.where(dead[:, None], new, state.sums)
    return VQState(codebook, counts, sums)
