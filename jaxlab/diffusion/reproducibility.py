"""The empirical optimal denoiser and the reproducibility / memorization scores.

Zhang et al. (ICML 2024) measure whether two diffusion models map the same initial noise
to the same image (reproducibility, RP) and whether samples copy training images
(memorization), both with a copy-detection embedding (SSCD) and a cosine threshold 0.6.
SSCD's weights cannot be downloaded here, so :func:`pca_proxy` ships a stated proxy: L2-
normalised PCA features of the training set, with the threshold calibrated by
:func:`calibrate_threshold` so that an item and a lightly noised copy pass while distinct
training items do not. The scores take features, so any embedding (SSCD included) plugs in.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import as_float, check_range

__all__ = [
    "PCAProxy",
    "calibrate_threshold",
    "memorization_score",
    "nearest_neighbor_ratio",
    "optimal_denoiser",
    "pca_embed",
    "pca_proxy",
    "reproducibility_score",
]


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _scaled(diff: jax.Array, inv: jax.Array) -> jax.Array:
    """diff · inv with 0 · ∞ := 0, so σ → 0 (inv = ∞) keeps the arg-max item exactly."""
    return jnp.where(diff == 0, 0.0, diff * inv)


def optimal_denoiser(
    x: jax.typing.ArrayLike,
    sigma: jax.typing.ArrayLike,
    train_set: jax.typing.ArrayLike,
    *,
    chunk_size: int = 4096,
    precision: jax.lax.PrecisionLike = None,
) -> jax.Array:
    """The empirical optimal denoiser D*(x; σ) of a training set (EDM parametrisation).

        D*(x; σ) = Σ_i w_i y_i,   w = softmax_i( −‖x − y_i‖² / (2σ²) )

    the exact minimiser of the denoising loss on the empirical distribution {y_i}
    (Sec. 3 of Zhang et al.; Karras et al. Eq. 57). The softmax is an online log-sum-exp
    over chunks of the training set (the flash-attention recurrence): memory is
    O(b · chunk_size + b · d), never O(b · n · d). Logits use ‖x‖² − ‖x − y‖² = 2xᵀy − ‖y‖²
    (one matmul per chunk). As σ → 0 the weights become one-hot on the nearest training item
    (exactly, with no NaN, even for σ = 0 inside ``jit``); a training set of one item returns
    that item for every σ. Hand-written: no maintained JAX library ships it.

    Args:
      x: ``[b, d]`` noisy queries (finite).
      sigma: σ > 0, a scalar or ``[b]``.
      train_set: ``[n, d]`` training items y_i.
      chunk_size: training items per chunk.
      precision: the precision of the two products a chunk (``jax.lax.PrecisionLike``);
        ``None`` multiplies at the ambient ``jax.default_matmul_precision``. The logits
        ``2xᵀy − ‖y‖²`` cancel to ``‖x‖² − ‖x − y‖²`` and are divided by 2σ², so TF32 (a
        GPU's default) errors of ~1e-3·‖x‖‖y‖ decide the softmax at small σ; ``"highest"``
        gives float32 logits (``docs/precision.md``).

    Returns:
      ``[b, d]`` denoised queries.

    Example:
      >>> from jaxlab.diffusion import optimal_denoiser
      >>> train = jnp.array([[0.0, 0.0], [4.0, 0.0]])
      >>> optimal_denoiser(jnp.array([[3.0, 1.0]]), 1e-3, train)
      Array([[4., 0.]], dtype=float32)

    References:
      Zhang, Zhou, Lu, Guo, Wang, Shen, Qu. The Emergence of Reproducibility and
      Consistency in Diffusion Models. ICML 2024.
    """
    x = jnp.asarray(x)
    train_set = jnp.asarray(train_set)
    sigma = jnp.asarray(sigma, dtype=jnp.result_type(x.dtype, float))
    if x.ndim != 2:
        raise ValueError(f"x must have shape [b, d]; got {x.shape}")
    if train_set.ndim != 2 or train_set.shape[0] < 1 or train_set.shape[1] != x.shape[1]:
        raise ValueError(f"train_set must have shape [n >= 1, {x.shape[1]}]; got {train_set.shape}")
    if sigma.shape not in ((), x.shape[:1]):
        raise ValueError(f"sigma must be a scalar or have shape [{x.shape[0]}]; got {sigma.shape}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1; got {chunk_size}")
    if _is_concrete(sigma) and not np.all(np.asarray(sigma) > 0):
        raise ValueError(f"sigma must be > 0; got min {float(np.min(np.asarray(sigma)))}")
    if _is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError("x must be finite; got NaN or inf entries")
    b, d = x.shape
    n = train_set.shape[0]
    dtype = jnp.result_type(x.dtype, train_set.dtype, float)
    x = x.astype(dtype)
    inv = jnp.broadcast_to(1.0 / (2.0 * sigma.astype(dtype) ** 2), (b,))[:, None]  # [b, 1]

    chunk = min(chunk_size, n)
    num_chunks = -(-n // chunk)
    train_set = train_set.astype(dtype)  # a no-op for float inputs: the set is never copied

    def body(carry, i):
        m, s, acc = carry  # running max of the σ-free logits, Σ exp, Σ exp · y
        # Chunk i covers rows [i·chunk, (i+1)·chunk); the last one is slid back to end at n
        # (an in-place slice, no padded copy) and masks the rows an earlier chunk counted.
        start = jnp.minimum(i * chunk, n - chunk)
        y = jax.lax.dynamic_slice_in_dim(train_set, start, chunk)
        ok = start + jnp.arange(chunk) >= i * chunk
        # σ-free logit ‖x‖² − ‖x − y‖² = 2xᵀy − ‖y‖²; the 1/(2σ²) factor comes after the max.
        raw = 2.0 * jnp.matmul(x, y.T, precision=precision) - jnp.sum(y * y, axis=1)[None, :]
        raw = jnp.where(ok[None, :], raw, -jnp.inf)
        m_new = jnp.maximum(m, jnp.max(raw, axis=1, keepdims=True))
        p = jnp.exp(_scaled(raw - m_new, inv))
        p = jnp.where(ok[None, :], p, 0.0)
        rescale = jnp.exp(_scaled(m - m_new, inv))
        rescale = jnp.where(jnp.isneginf(m), 0.0, rescale)
        s = s * rescale + jnp.sum(p, axis=1, keepdims=True)
        acc = acc * rescale + jnp.matmul(p, y, precision=precision)
        return (m_new, s, acc), None

    init = (jnp.full((b, 1), -jnp.inf, dtype), jnp.zeros((b, 1), dtype), jnp.zeros((b, d), dtype))
    (_, s, acc), _ = jax.lax.scan(body, init, jnp.arange(num_chunks))
    return acc / s


def _normalize(f: jax.Array) -> jax.Array:
    return f / jnp.maximum(jnp.linalg.norm(f, axis=-1, keepdims=True), 1e-12)


def _share_above(cos: jax.Array, threshold: float) -> jax.Array:
    """Share of ``cos > threshold``; NaN when a cosine is NaN (not a silent "no")."""
    share = jnp.mean((cos > threshold).astype(jnp.result_type(float)))
    return jnp.where(jnp.any(jnp.isnan(cos)), jnp.nan, share)


def _check_features(name: str, f: jax.Array) -> None:
    if f.ndim != 2 or f.shape[0] < 1:
        raise ValueError(f"{name} must have shape [N, k] with N >= 1; got {f.shape}")


def pair_cosine(features_a: jax.typing.ArrayLike, features_b: jax.typing.ArrayLike) -> jax.Array:
    """Cosine similarity of each shared-noise pair: ``[N, k]`` ×2 → ``[N]``.

        c_i = ⟨e_A(i), e_B(i)⟩ / (‖e_A(i)‖ ‖e_B(i)‖)

    RP (``reproducibility_score``) is the share of these above a detector's threshold; their
    mean is the threshold-free summary (useful when no calibrated detector such as SSCD is
    at hand).

    Example:
      >>> from jaxlab.diffusion import pair_cosine
      >>> pair_cosine(jnp.array([[2.0, 0.0], [0.0, 1.0]]), jnp.array([[1.0, 0.0], [1.0, 0.0]]))
      Array([1., 0.], dtype=float32)
    """
    a = jnp.asarray(features_a)
    b = jnp.asarray(features_b)
    _check_features("features_a", a)
    if b.shape != a.shape:
        raise ValueError(f"features_b must have the shape of features_a {a.shape}; got {b.shape}")
    return jnp.sum(_normalize(a) * _normalize(b), axis=1)


def reproducibility_score(
    features_a: jax.typing.ArrayLike,
    features_b: jax.typing.ArrayLike,
    threshold: float = 0.6,
) -> jax.Array:
    """Share of shared-noise pairs whose embeddings agree (the RP score).

        RP = (1/N) Σ_i 1[ cos(e_A(i), e_B(i)) > τ ]                   (Sec. 2 of Zhang et al.)

    Args:
      features_a: ``[N, k]`` embeddings of model A's samples (any feature map; rows are
        L2-normalised here).
      features_b: ``[N, k]`` embeddings of model B's samples from the same N noises.
      threshold: τ (0.6 with SSCD in the paper).

    Returns:
      The scalar RP in [0, 1].

    Example:
      >>> from jaxlab.diffusion import reproducibility_score
      >>> a = jnp.array([[1.0, 0.0], [0.0, 1.0]])
      >>> float(reproducibility_score(a, jnp.array([[1.0, 0.1], [1.0, 0.0]])))
      0.5
    """
    check_range("threshold", threshold, -1.0, 1.0)
    cos = pair_cosine(features_a, features_b)
    return _share_above(cos, threshold)


def memorization_score(
    features_samples: jax.typing.ArrayLike,
    features_train: jax.typing.ArrayLike,
    threshold: float = 0.6,
) -> jax.Array:
    """Share of samples whose most similar training item is above the threshold.

        M = (1/N) Σ_i 1[ max_j cos(e(x_i), e(y_j)) > τ ]    (the reference code prints 1 − M)

    Args:
      features_samples: ``[N, k]`` embeddings of generated samples.
      features_train: ``[n, k]`` embeddings of the training set.
      threshold: τ.

    Returns:
      The scalar memorization score in [0, 1].

    Example:
      >>> from jaxlab.diffusion import memorization_score
      >>> train = jnp.eye(3)
      >>> float(memorization_score(jnp.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), train))
      0.5
    """
    s = jnp.asarray(features_samples)
    t = jnp.asarray(features_train)
    _check_features("features_samples", s)
    _check_features("features_train", t)
    if t.shape[1] != s.shape[1]:
        raise ValueError(f"features_train must have {s.shape[1]} columns; got {t.shape}")
    check_range("threshold", threshold, -1.0, 1.0)
    best = jnp.max(_normalize(s) @ _normalize(t).T, axis=1)
    return _share_above(best, threshold)


def nearest_neighbor_ratio(
    samples: jax.typing.ArrayLike, train_set: jax.typing.ArrayLike
) -> jax.Array:
    """Distance to the nearest training item over the distance to the second nearest.

    A ratio near 0 means a sample sits on one training item (a copy); near 1 means it is
    about as far from its nearest as from its second-nearest item (a novel sample).

    Args:
      samples: ``[N, d]``.
      train_set: ``[n, d]`` with n ≥ 2.

    Returns:
      ``[N]`` ratios in [0, 1].

    Example:
      >>> from jaxlab.diffusion import nearest_neighbor_ratio
      >>> train = jnp.array([[0.0], [4.0]])
      >>> nearest_neighbor_ratio(jnp.array([[1.0]]), train)
      Array([0.33333334], dtype=float32)
    """
    x = jnp.asarray(samples)
    y = jnp.asarray(train_set)
    _check_features("samples", x)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] != x.shape[1]:
        raise ValueError(f"train_set must have shape [n >= 2, {x.shape[1]}]; got {y.shape}")
    d2 = jnp.sum(x * x, axis=1)[:, None] - 2.0 * x @ y.T + jnp.sum(y * y, axis=1)[None, :]
    neg_two, _ = jax.lax.top_k(-jnp.maximum(d2, 0.0), 2)
    d1, d2nd = jnp.sqrt(-neg_two[:, 0]), jnp.sqrt(-neg_two[:, 1])
    ratio = jnp.where(d2nd > 0, d1 / jnp.where(d2nd > 0, d2nd, 1.0), 0.0)
    return jnp.where(jnp.isnan(jnp.sum(d2, axis=1)), jnp.nan, ratio)  # NaN rows stay NaN


class PCAProxy(NamedTuple):
    """A PCA feature map: ``mean: [d]``, ``components: [k, d]`` (orthonormal rows)."""

    mean: jax.Array
    components: jax.Array


def pca_proxy(train_set: jax.typing.ArrayLike, num_components: int) -> PCAProxy:
    """Fits the PCA proxy for SSCD on a training set (a stated proxy, not SSCD).

    Args:
      train_set: ``[n, d]``.
      num_components: k ≤ min(n, d).

    Returns:
      The :class:`PCAProxy` (use it with :func:`pca_embed`).

    Example:
      >>> from jaxlab.diffusion import pca_proxy, pca_embed
      >>> proxy = pca_proxy(jax.random.normal(jax.random.key(0), (20, 5)), 3)
      >>> pca_embed(proxy, jnp.ones((2, 5))).shape
      (2, 3)
    """
    y = jnp.asarray(train_set, dtype=jnp.result_type(float))
    if y.ndim != 2 or not 1 <= num_components <= min(y.shape):
        raise ValueError(
            f"need train_set [n, d] and 1 <= num_components <= min(n, d); got "
            f"{y.shape}, {num_components}"
        )
    mean = jnp.mean(y, axis=0)
    _, _, vt = jnp.linalg.svd(y - mean[None, :], full_matrices=False)
    return PCAProxy(mean=mean, components=vt[:num_components])


def pca_embed(proxy: PCAProxy, x: jax.typing.ArrayLike) -> jax.Array:
    """L2-normalised PCA coordinates of ``x: [N, d]`` → ``[N, k]``."""
    if not isinstance(proxy, PCAProxy):
        raise ValueError(f"proxy must be a PCAProxy (from pca_proxy), got {type(proxy).__name__}")
    x = jnp.asarray(x)
    if x.ndim != 2 or x.shape[1] != proxy.mean.shape[0]:
        raise ValueError(f"x must have shape [N, {proxy.mean.shape[0]}]; got {x.shape}")
    return _normalize((x - proxy.mean[None, :]) @ proxy.components.T)


def calibrate_threshold(
    features_items: jax.typing.ArrayLike,
    features_copies: jax.typing.ArrayLike,
    quantile: float = 0.05,
) -> jax.Array:
    """A cosine threshold τ separating near-copies from distinct items.

    τ is the midpoint between the ``quantile``-quantile of cos(item, its lightly noised copy)
    and the (1 − ``quantile``)-quantile of the largest cosine between two distinct items, so
    that most copies pass and most distinct pairs do not.

    Args:
      features_items: ``[n, k]`` embeddings of distinct items (n ≥ 2).
      features_copies: ``[n, k]`` embeddings of a lightly noised copy of each item.
      quantile: the tail share left out on each side.

    Returns:
      The scalar threshold.

    Example:
      >>> from jaxlab.diffusion import calibrate_threshold
      >>> items = jnp.eye(4)
      >>> round(float(calibrate_threshold(items, items + 0.05)), 2)
      0.5
    """
    check_range("quantile", quantile, 0.0, 0.5)
    a, b = as_float("features_items", features_items), as_float("features_copies", features_copies)
    _check_features("features_items", a)
    if a.shape[0] < 2 or b.shape != a.shape:
        raise ValueError(
            f"need features_items [n >= 2, k] and features_copies of that shape; "
            f"got {a.shape}, {b.shape}"
        )
    a, b = _normalize(a), _normalize(b)
    copy_sim = jnp.sum(a * b, axis=1)
    cross = a @ a.T - 3.0 * jnp.eye(a.shape[0], dtype=a.dtype)
    distinct_sim = jnp.max(cross, axis=1)
    low = jnp.quantile(copy_sim, quantile)
    high = jnp.quantile(distinct_sim, 1.0 - quantile)
    return 0.5 * (low + high)
