"""Contrastive losses: SimCLR's NT-Xent and the supervised contrastive (SupCon) loss.

Both L2-normalise the embeddings (cosine similarities), scale them by ``1 / temperature``
and use a log-sum-exp over every other item of the batch, so they are stable for small
temperatures. ``optax.ntxent`` computes a related loss whose denominator holds only one
positive at a time (the pytorch-metric-learning form); SupCon's denominator holds all of
them, so it is written here by hand. With two views and one positive per anchor the three
agree (tested).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["simclr_loss", "supcon_loss"]


def _normalize(z: jax.Array) -> jax.Array:
    norm = jnp.sqrt(jnp.sum(z * z, axis=-1, keepdims=True))
    return z / jnp.maximum(norm, 1e-12)


def _check_embeddings(name: str, z: jax.Array) -> None:
    if z.ndim != 2 or z.shape[0] < 2:
        raise ValueError(f"{name} must have shape [b, d] with b >= 2; got {z.shape}")


def _check_temperature(temperature: float) -> None:
    if isinstance(temperature, (int, float)) and not temperature > 0:
        raise ValueError(f"temperature must be positive; got {temperature}")


def _log_softmax_offdiag(z: jax.Array, temperature) -> jax.Array:
    """log p(j | i) over j ≠ i for cosine similarities / temperature; the diagonal is -inf."""
    z = _normalize(z)
    logits = (z @ z.T) / temperature
    eye = jnp.eye(z.shape[0], dtype=bool)
    logits = jnp.where(eye, -jnp.inf, logits)
    return jax.nn.log_softmax(logits, axis=-1)


def simclr_loss(
    z1: jax.typing.ArrayLike, z2: jax.typing.ArrayLike, temperature: float = 0.5
) -> jax.Array:
    """SimCLR's NT-Xent loss for two views of a batch.

    With u = [z1; z2] row-normalised (2b items) and s_ij = u_iᵀu_j / τ, the positive of
    item i is its other view p(i) = (i + b) mod 2b and

        ℓ = (1 / 2b) Σ_i −log( exp(s_{i,p(i)}) / Σ_{k≠i} exp(s_ik) )        (Eq. 1, Chen et al.)

    Args:
      z1: ``[b, d]`` embeddings (projection-head outputs) of the first view.
      z2: ``[b, d]`` embeddings of the second view; row i is the positive of ``z1[i]``.
      temperature: τ > 0.

    Returns:
      The scalar loss (mean over the 2b anchors).

    Example:
      >>> from jaxlab.nn.contrastive import simclr_loss
      >>> z = jax.random.normal(jax.random.key(0), (8, 4))
      >>> loss_same = simclr_loss(z, z, temperature=0.1)
      >>> loss_rand = simclr_loss(z, jax.random.normal(jax.random.key(1), (8, 4)), 0.1)
      >>> bool(loss_same < loss_rand)
      True

    References:
      Chen, Kornblith, Norouzi, Hinton. A Simple Framework for Contrastive Learning of
      Visual Representations. ICML 2020.
    """
    z1 = jnp.asarray(z1)
    z2 = jnp.asarray(z2)
    _check_embeddings("z1", z1)
    if z2.shape != z1.shape:
        raise ValueError(f"z2 must have the shape of z1 {z1.shape}; got {z2.shape}")
    _check_temperature(temperature)
    b = z1.shape[0]
    log_p = _log_softmax_offdiag(jnp.concatenate([z1, z2], axis=0), temperature)
    positive = jnp.concatenate([jnp.arange(b, 2 * b), jnp.arange(b)])
    return -jnp.mean(jnp.take_along_axis(log_p, positive[:, None], axis=1))


def supcon_loss(
    z: jax.typing.ArrayLike, labels: jax.typing.ArrayLike, temperature: float = 0.1
) -> jax.Array:
    """Supervised contrastive loss (SupCon, the "L_out" form).

    With z row-normalised, s_ij = z_iᵀz_j / τ, A(i) = {k ≠ i} and the positives
    P(i) = {p ∈ A(i) : y_p = y_i},

        ℓ = (1 / |I⁺|) Σ_{i ∈ I⁺} (−1 / |P(i)|) Σ_{p ∈ P(i)}
              log( exp(s_ip) / Σ_{a ∈ A(i)} exp(s_ia) )                   (Eq. 2, Khosla et al.)

    where I⁺ are the anchors with at least one positive (anchors without one are left out;
    a batch with no positive pair at all gives 0). Several views of an item go into ``z`` as
    separate rows with the same label; SimCLR is the special case of two views and distinct
    labels per item.

    Args:
      z: ``[b, d]`` embeddings.
      labels: ``[b]`` integer class (or item) labels.
      temperature: τ > 0.

    Returns:
      The scalar loss.

    Example:
      >>> from jaxlab.nn.contrastive import supcon_loss
      >>> z = jnp.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
      >>> good = supcon_loss(z, jnp.array([0, 0, 1, 1]), temperature=0.1)
      >>> bad = supcon_loss(z, jnp.array([0, 1, 0, 1]), temperature=0.1)
      >>> bool(good < bad)
      True

    References:
      Khosla, Teterwak, Wang, Sarna, Tian, Isola, Maschinot, Liu, Krishnan. Supervised
      Contrastive Learning. NeurIPS 2020.
    """
    z = jnp.asarray(z)
    labels = jnp.asarray(labels)
    _check_embeddings("z", z)
    if labels.shape != (z.shape[0],):
        raise ValueError(f"labels must have shape [{z.shape[0]}]; got {labels.shape}")
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(f"labels must be integer labels, got dtype {labels.dtype}")
    _check_temperature(temperature)
    log_p = _log_softmax_offdiag(z, temperature)
    eye = jnp.eye(z.shape[0], dtype=bool)
    positive = (labels[:, None] == labels[None, :]) & ~eye
    num_pos = jnp.sum(positive, axis=1)
    # Eq. (2): mean log-probability of the positives of each anchor (−inf diagonal masked).
    per_anchor = -jnp.sum(jnp.where(positive, log_p, 0.0), axis=1) / jnp.maximum(num_pos, 1)
    has_pos = num_pos > 0
    return jnp.sum(jnp.where(has_pos, per_anchor, 0.0)) / jnp.maximum(jnp.sum(has_pos), 1)
