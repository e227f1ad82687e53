"""Contrastive losses: SimCLR's NT-Xent and supervised contrastive (SupCon) on embeddings.

Hand-written: optax has no SupCon; both follow the papers' equations on L2-normalised
embeddings with cosine similarities divided by a temperature.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def _normalize(z: jax.Array) -> jax.Array:
    return z / jnp.maximum(jnp.linalg.norm(z, axis=-1, keepdims=True), 1e-12)


def _check(name: str, z: ArrayLike) -> jax.Array:
    z = jnp.asarray(z)
    if z.ndim != 2 or z.shape[0] < 2:
        raise ValueError(f"{name} must have shape [n, d] with n >= 2, got {z.shape}")
    return z


def supcon_loss(z: ArrayLike, labels: ArrayLike, temperature: float = 0.1) -> jax.Array:
    r"""Supervised contrastive loss (SupCon, the "L_out" form of Khosla et al. 2020).

    With unit embeddings :math:`\hat z` and A(i) = all samples but i, P(i) = those of i's
    label,

    .. math::
        L = \frac{1}{|I'|} \sum_{i \in I'} \frac{-1}{|P(i)|} \sum_{p \in P(i)}
            \log \frac{\exp(\hat z_i\cdot\hat z_p/τ)}
                       {\sum_{a \in A(i)} \exp(\hat z_i\cdot\hat z_a/τ)}

    over the anchors I' with at least one positive. Stack the augmented views of a batch
    along the first axis (with repeated labels).

    Args:
      z: ``[n, d]`` embeddings (normalised inside).
      labels: ``[n]`` integer labels.
      temperature: τ > 0.

    Returns:
      ``[]`` the loss.

    Example:
      >>> from jaxlab.nn.contrastive import supcon_loss
      >>> z = jnp.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
      >>> bool(supcon_loss(z, jnp.array([0, 0, 1, 1])) < supcon_loss(z, jnp.array([0, 1, 0, 1])))
      True

    References:
      Khosla et al. "Supervised contrastive learning", NeurIPS 2020.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    z = _normalize(_check("z", z))
    labels = jnp.asarray(labels)
    if labels.shape != (z.shape[0],):
        raise ValueError(f"labels must have shape [{z.shape[0]}], got {labels.shape}")
    n = z.shape[0]
    self_mask = jnp.eye(n, dtype=bool)
    logits = jnp.where(self_mask, -jnp.inf, z @ z.T / temperature)
    log_prob = logits - jax.nn.logsumexp(logits, axis=1, keepdims=True)
    positives = (labels[:, None] == labels[None, :]) & ~self_mask
    count = positives.sum(1)
    per_anchor = -jnp.where(positives, log_prob, 0.0).sum(1) / jnp.maximum(count, 1)
    has = count > 0
    return jnp.sum(jnp.where(has, per_anchor, 0.0)) / jnp.maximum(has.sum(), 1)


def simclr_loss(z1: ArrayLike, z2: ArrayLike, temperature: float = 0.5) -> jax.Array:
    r"""SimCLR's NT-Xent: each view's positive is the other view of the same sample.

    With the 2n unit embeddings of both views,

    .. math::
        ℓ(i, j) = −\log \frac{\exp(\hat z_i\cdot\hat z_j/τ)}
            {\sum_{k \ne i} \exp(\hat z_i\cdot\hat z_k/τ)},\qquad
        L = \frac{1}{2n} \sum_{k=1}^{n} [ℓ(2k−1, 2k) + ℓ(2k, 2k−1)]

    Args:
      z1: ``[n, d]`` embeddings of the first views.
      z2: ``[n, d]`` embeddings of the second views.
      temperature: τ > 0.

    Returns:
      ``[]`` the loss.

    Example:
      >>> from jaxlab.nn.contrastive import simclr_loss
      >>> z = jnp.eye(3)
      >>> bool(simclr_loss(z, z) < simclr_loss(z, z[::-1]))
      True

    References:
      Chen, Kornblith, Norouzi, Hinton. "A simple framework for contrastive learning of
      visual representations", ICML 2020.
    """
    z1, z2 = _check("z1", z1), _check("z2", z2)
    if z1.shape != z2.shape:
        raise ValueError(f"z1 and z2 must have the same shape, got {z1.shape} and {z2.shape}")
    n = z1.shape[0]
    labels = jnp.concatenate([jnp.arange(n), jnp.arange(n)])
    return supcon_loss(jnp.concatenate([z1, z2]), labels, temperature)
