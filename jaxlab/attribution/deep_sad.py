"""Deep SAD (Ruff et al. 2020): bias-free network, centre, semi-supervised loss, score."""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import check_range, is_traced

__all__ = ["DeepSADNet", "deep_sad_center", "deep_sad_loss", "deep_sad_score"]


class DeepSADNet(nn.Module):
    """Bias-free MLP φ (no bias terms, so φ cannot collapse to a constant; Ruff et al. 2020).

    Attributes:
      features: hidden widths followed by the representation size.
    """

    features: Sequence[int] = (64, 32)

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = x.reshape(x.shape[0], -1)
        for width in self.features[:-1]:
            x = nn.leaky_relu(nn.Dense(width, use_bias=False)(x))
        return nn.Dense(self.features[-1], use_bias=False)(x)


def deep_sad_center(reps: jax.typing.ArrayLike, eps: float = 0.1) -> jax.Array:
    """The hypersphere centre c: the mean representation, entries within ε of 0 set to ±ε.

    Args:
      reps: ``[n, k]`` representations φ(x) of the training data at initialisation.
      eps: entries with |c_j| < ε become ±ε (sign of c_j; +ε at 0), as in Deep SAD's code,
        so that a trivial all-zero solution is not the centre.

    Returns:
      ``[k]`` centre.

    Example:
      >>> from jaxlab.attribution import deep_sad_center
      >>> deep_sad_center(jnp.array([[1.0, 0.01], [3.0, -0.03]]))
      Array([ 2. , -0.1], dtype=float32)
    """
    check_range("eps", eps, 0.0)
    reps = jnp.asarray(reps)
    if reps.ndim != 2 or reps.shape[0] < 1:
        raise ValueError(f"reps must have shape [n >= 1, k]; got {reps.shape}")
    c = jnp.mean(reps, axis=0)
    small = jnp.abs(c) < eps
    return jnp.where(small & (c < 0), -eps, jnp.where(small, eps, c))


def deep_sad_loss(
    reps: jax.typing.ArrayLike,
    center: jax.typing.ArrayLike,
    labels: jax.typing.ArrayLike,
    eta: float = 1.0,
    eps: float = 1e-6,
) -> jax.Array:
    """Deep SAD's semi-supervised loss (Eq. 4 of Ruff et al.).

        ℓ = (1/(n+m)) [ Σ_unlabelled ‖φ(x) − c‖² + η Σ_labelled (‖φ(x̃) − c‖² + ε)^{ỹ} ]

    with ỹ = +1 for labelled normal samples (pulled to c) and ỹ = −1 for labelled anomalies
    (pushed away; the inverse distance). Weight decay is left to the optimiser.

    Args:
      reps: ``[n, k]`` representations φ(x).
      center: ``[k]`` centre c.
      labels: ``[n]`` with 0 (unlabelled), +1 (normal) or −1 (anomalous).
      eta: η > 0.
      eps: ε > 0 keeps the inverse finite.

    Returns:
      The scalar loss.

    Example:
      >>> from jaxlab.attribution import deep_sad_loss
      >>> reps = jnp.array([[1.0, 0.0], [0.0, 2.0]])
      >>> float(deep_sad_loss(reps, jnp.zeros(2), jnp.array([1, -1]), eps=0.0))
      0.625

    References:
      Ruff, Vandermeulen, Görnitz, Binder, Müller, Müller, Kloft. Deep Semi-Supervised
      Anomaly Detection. ICLR 2020.
    """
    check_range("eta", eta, 0.0)
    check_range("eps", eps, 0.0)
    lab = jnp.asarray(labels)
    if not is_traced(lab) and not np.isin(np.asarray(lab), (-1, 0, 1)).all():
        raise ValueError("labels must be 0 (unlabelled), +1 (labelled normal) or -1 (anomaly)")
    reps = jnp.asarray(reps)
    center = jnp.asarray(center)
    labels = jnp.asarray(labels)
    if reps.ndim != 2 or center.shape != reps.shape[1:]:
        raise ValueError(f"need reps [n, k] and center [k]; got {reps.shape}, {center.shape}")
    if labels.shape != reps.shape[:1]:
        raise ValueError(f"labels must have shape [{reps.shape[0]}]; got {labels.shape}")
    dist = jnp.sum((reps - center[None, :]) ** 2, axis=1)
    # Eq. (4): (dist + ε)^ỹ for labelled points; 0^(−1) avoided by the ε.
    labelled = eta * jnp.where(labels < 0, 1.0 / (dist + eps), dist + eps)
    return jnp.mean(jnp.where(labels == 0, dist, labelled))


def deep_sad_score(reps: jax.typing.ArrayLike, center: jax.typing.ArrayLike) -> jax.Array:
    """Anomaly score ‖φ(x) − c‖ for ``reps: [n, k]`` → ``[n]`` (higher = more anomalous)."""
    reps = jnp.asarray(reps)
    center = jnp.asarray(center)
    if reps.ndim != 2 or center.shape != reps.shape[1:]:
        raise ValueError(f"need reps [n, k] and center [k]; got {reps.shape}, {center.shape}")
    return jnp.sqrt(jnp.sum((reps - center[None, :]) ** 2, axis=1))
