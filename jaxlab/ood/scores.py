"""OOD scores (higher = more in-distribution) and their ensemble combination.

Logit scores: maximum softmax probability and energy. Feature scores: distance to the k-th
nearest ID training feature after L2 normalisation (Sun et al. 2022) and the Mahalanobis
distance to class means with a shared covariance (Lee et al. 2018). Ensembles standardise
each member's score on held-out ID data and average (MC Ensemble, Xu et al. 2024).

Bad input: logits and features holding NaN or inf are refused with a ``ValueError`` when
concrete (under ``jit`` they give NaN scores); NaN scores in :func:`standardize_scores` and
:func:`ensemble_score` give NaN. Integer inputs are promoted to float.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_labels, check_range, is_traced


def _check_finite(name: str, x: jax.Array) -> None:
    if not is_traced(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{name} holds NaN or inf values")


def _check_2d(name: str, x: ArrayLike) -> jax.Array:
    # NaN / inf features are refused when concrete; under jit they give NaN scores.
    x = as_float(name, x)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must have shape [n, d] with n >= 1, got {x.shape}")
    _check_finite(name, x)
    return x


def msp_score(logits: ArrayLike) -> jax.Array:
    r"""Maximum softmax probability, :math:`\max_c \mathrm{softmax}(z)_c`.

    Args:
      logits: ``[n, c]``.

    Returns:
      ``[n]`` scores in (0, 1].

    Example:
      >>> from jaxlab.ood import msp_score
      >>> msp_score(jnp.array([[0.0, 0.0], [10.0, 0.0]])).round(3).tolist()
      [0.5, 1.0]

    References:
      Hendrycks, Gimpel. "A baseline for detecting misclassified and out-of-distribution
      examples in neural networks", ICLR 2017.
    """
    logits = _check_2d("logits", logits)
    return jnp.max(jax.nn.softmax(logits, axis=-1), axis=-1)


def energy_score(logits: ArrayLike, temperature: float = 1.0) -> jax.Array:
    r"""Negative free energy, :math:`T \log \sum_c e^{z_c / T}`.

    Args:
      logits: ``[n, c]``.
      temperature: T > 0.

    Returns:
      ``[n]`` scores.

    Example:
      >>> from jaxlab.ood import energy_score
      >>> [round(float(s), 4) for s in energy_score(jnp.array([[0.0, 0.0]]))]
      [0.6931]

    References:
      Liu, Wang, Owens, Li. "Energy-based out-of-distribution detection", NeurIPS 2020.
    """
    check_range("temperature", temperature, 0.0, low_open=True)
    logits = _check_2d("logits", logits)
    return temperature * jax.nn.logsumexp(logits / temperature, axis=-1)


def l2_normalize(x: ArrayLike, eps: float = 1e-12) -> jax.Array:
    """Rows divided by their L2 norm (zero rows stay zero). ``x: [..., d]`` → ``[..., d]``.

    ``eps > 0`` floors the norm; NaN rows stay NaN.
    """
    x = as_float("x", x)
    if x.ndim < 1:
        raise ValueError(f"x must have shape [..., d], got a scalar {x.shape}")
    check_range("eps", eps, 0.0, low_open=True)
    return x / jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), eps)


def knn_score(
    features: ArrayLike,
    bank: ArrayLike,
    k: int = 1,
    *,
    block_size: int = 4096,
    precision: jax.lax.PrecisionLike = None,
) -> jax.Array:
    r"""Minus the distance to the k-th nearest ID feature, both L2-normalised.

    .. math:: s(x) = −\big\| \hat z(x) − \hat z_{(k)} \big\|_2,\qquad \hat z = z / \|z\|_2

    where :math:`\hat z_{(k)}` is the k-th nearest normalised bank feature. Queries are
    processed in blocks of ``block_size`` (``lax.map``) so memory stays at
    ``block_size × n_bank``.

    Args:
      features: ``[n, d]`` query features.
      bank: ``[m, d]`` ID training features (m ≥ k).
      k: which neighbour.
      block_size: queries per block.
      precision: the precision of the query-bank similarity product (``jax.lax.PrecisionLike``);
        ``None`` multiplies at the ambient ``jax.default_matmul_precision``. The distance
        ``2 − 2 q·b`` cancels for near neighbours, so TF32 (a GPU's default) moves it by
        ~1e-3; ``"highest"`` gives float32 distances (``docs/precision.md``).

    Returns:
      ``[n]`` scores (≤ 0).

    Raises:
      ValueError: bad shapes, k out of range, NaN features (when not traced).

    Example:
      >>> from jaxlab.ood import knn_score
      >>> bank = jnp.array([[1.0, 0.0], [0.0, 1.0]])
      >>> [round(float(s), 4) for s in knn_score(jnp.array([[2.0, 0.0], [-1.0, 0.0]]), bank)]
      [-0.0, -1.4142]

    References:
      Sun, Ming, Zhu, Li. "Out-of-distribution detection with deep nearest neighbors",
      ICML 2022.
    """
    features, bank = _check_2d("features", features), _check_2d("bank", bank)
    if features.shape[1] != bank.shape[1]:
        raise ValueError(f"features {features.shape} and bank {bank.shape} differ in d")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= bank.shape[0]:
        raise ValueError(f"k must be an int in [1, {bank.shape[0]}] (the bank size), got {k}")
    check_integer("block_size", block_size, low=1)
    q, b = l2_normalize(features), l2_normalize(bank)
    n = q.shape[0]
    block = min(block_size, n)
    pad = (-n) % block
    blocks = jnp.pad(q, ((0, pad), (0, 0))).reshape(-1, block, q.shape[1])

    def one(qb):
        # ‖q − b‖² = 2 − 2 q·b for unit vectors; the k largest similarities are the k nearest.
        sims = jax.lax.top_k(jnp.matmul(qb, b.T, precision=precision), k)[0][:, -1]
        return -jnp.sqrt(jnp.maximum(2.0 - 2.0 * sims, 0.0))

    return jax.lax.map(one, blocks).reshape(-1)[:n]


class ClassGaussians(NamedTuple):
    """Class means ``[c, d]`` and the shared precision matrix ``[d, d]``."""

    means: jax.Array
    precision: jax.Array


def fit_class_gaussians(
    features: ArrayLike, labels: ArrayLike, num_classes: int, ridge: float = 1e-6
) -> ClassGaussians:
    r"""Class means and the inverse of the shared (tied) covariance, as in Lee et al. 2018.

    .. math:: Σ = \frac1n \sum_i (z_i − μ_{y_i})(z_i − μ_{y_i})^⊤ + \text{ridge}\cdot I

    Args:
      features: ``[n, d]``.
      labels: ``[n]`` ints in [0, num_classes).
      num_classes: c.
      ridge: added to the covariance's diagonal before inversion.

    Returns:
      ``ClassGaussians(means [c, d], precision [d, d])``.

    Example:
      >>> from jaxlab.ood import fit_class_gaussians
      >>> g = fit_class_gaussians(jnp.array([[0.0, 1.0], [2.0, 1.0], [5.0, 5.0]]),
      ...                         jnp.array([0, 0, 1]), 2)
      >>> g.means.tolist()
      [[1.0, 1.0], [5.0, 5.0]]
    """
    features = _check_2d("features", features)
    labels = check_labels("labels", labels, num_classes)
    check_range("ridge", ridge, 0.0)
    if labels.shape != (features.shape[0],):
        raise ValueError(f"labels must have shape [{features.shape[0]}], got {labels.shape}")
    onehot = jax.nn.one_hot(labels, num_classes, dtype=features.dtype)
    counts = jnp.maximum(onehot.sum(0), 1.0)
    means = (onehot.T @ features) / counts[:, None]
    centered = features - onehot @ means
    cov = centered.T @ centered / features.shape[0]
    cov = cov + ridge * jnp.eye(cov.shape[0], dtype=cov.dtype)
    return ClassGaussians(means, jnp.linalg.inv(cov))


def mahalanobis_score(features: ArrayLike, gaussians: ClassGaussians) -> jax.Array:
    r"""Minus the smallest Mahalanobis distance to a class mean with the shared covariance.

    .. math:: s(z) = −\min_c (z − μ_c)^⊤ Σ^{-1} (z − μ_c)

    Args:
      features: ``[n, d]``.
      gaussians: from :func:`fit_class_gaussians`.

    Returns:
      ``[n]`` scores (≤ 0).

    Example:
      >>> from jaxlab.ood import ClassGaussians, mahalanobis_score
      >>> g = ClassGaussians(jnp.zeros((1, 2)), jnp.eye(2))
      >>> mahalanobis_score(jnp.array([[3.0, 4.0]]), g).tolist()
      [-25.0]

    References:
      Lee, Lee, Lee, Shin. "A simple unified framework for detecting out-of-distribution
      samples and adversarial attacks", NeurIPS 2018.
    """
    if not isinstance(gaussians, ClassGaussians):
        raise ValueError(
            f"gaussians must be ClassGaussians (from fit_class_gaussians), got "
            f"{type(gaussians).__name__}"
        )
    features = _check_2d("features", features)
    if features.shape[1] != gaussians.means.shape[1]:
        raise ValueError(
            f"features must have d = {gaussians.means.shape[1]} columns (the "
            f"gaussians' dimension), got shape {features.shape}"
        )
    diff = features[:, None, :] - gaussians.means[None, :, :]  # [n, c, d]
    dist = jnp.einsum("ncd,de,nce->nc", diff, gaussians.precision, diff)
    return -jnp.min(dist, axis=-1)


def standardize_scores(scores: ArrayLike, reference: ArrayLike, eps: float = 1e-12) -> jax.Array:
    r"""(s − mean(s_ref)) / std(s_ref): a member's score on the scale of held-out ID data.

    Args:
      scores: ``[..., n]`` scores to rescale (leading axes: members).
      reference: ``[..., m]`` the same members' scores on held-out ID data.
      eps: floor of the standard deviation (constant reference scores).

    Returns:
      ``[..., n]``.

    Example:
      >>> from jaxlab.ood import standardize_scores
      >>> standardize_scores(jnp.array([3.0]), jnp.array([1.0, 3.0])).tolist()
      [1.0]
    """
    scores, reference = as_float("scores", scores), as_float("reference", reference)
    check_range("eps", eps, 0.0, low_open=True)
    if reference.ndim < 1 or reference.shape[-1] < 1:
        raise ValueError("reference is empty: need held-out ID scores")
    mean = reference.mean(-1, keepdims=True)
    std = jnp.maximum(reference.std(-1, keepdims=True), eps)
    return (scores - mean) / std


def ensemble_score(member_scores: ArrayLike, member_reference: ArrayLike) -> jax.Array:
    r"""MC Ensemble's combination: the mean over members of the standardised scores.

    .. math:: s(x) = \frac1M \sum_m \frac{s_m(x) − \bar s_m^{ref}}{σ_m^{ref}}

    Args:
      member_scores: ``[M, n]`` each member's scores.
      member_reference: ``[M, m]`` each member's scores on held-out ID data.

    Returns:
      ``[n]``.

    Example:
      >>> from jaxlab.ood import ensemble_score
      >>> s = jnp.array([[1.0, 3.0], [10.0, 30.0]])
      >>> ensemble_score(s, s).tolist()
      [-1.0, 1.0]
    """
    member_scores = as_float("member_scores", member_scores)
    member_reference = as_float("member_reference", member_reference)
    if member_scores.ndim != 2 or member_reference.ndim != 2:
        raise ValueError(
            f"member_scores and member_reference must be [M, n] and [M, m], got "
            f"{member_scores.shape} and {member_reference.shape}"
        )
    if member_scores.shape[0] != member_reference.shape[0]:
        raise ValueError(
            f"member_scores and member_reference differ in the member count: "
            f"{member_scores.shape[0]} vs {member_reference.shape[0]}"
        )
    return standardize_scores(member_scores, member_reference).mean(0)


__all__ = [
    "ClassGaussians",
    "energy_score",
    "ensemble_score",
    "fit_class_gaussians",
    "knn_score",
    "l2_normalize",
    "mahalanobis_score",
    "msp_score",
    "standardize_scores",
]
