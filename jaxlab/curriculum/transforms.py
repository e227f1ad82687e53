"""CurBench's settings as data transforms: symmetric label noise and class imbalance."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_labels, check_range


def noisy_labels(labels: ArrayLike, p: float, num_classes: int, key: jax.Array) -> jax.Array:
    """Replaces each label, with probability ``p``, by a uniformly drawn DIFFERENT class.

    The noise-p setting of CurBench: ``ỹ_i = y_i`` with probability ``1 − p``, else
    ``ỹ_i ~ Uniform({0, …, C−1} \\ {y_i})`` (drawn as ``(y_i + U{1, …, C−1}) mod C``).

    Args:
      labels: ``[n]`` integer labels in ``[0, num_classes)``; float labels and, when
        concrete, labels outside the range raise ``ValueError``.
      p: noise rate ``p`` in ``[0, 1)``; checked when concrete, unchecked when traced
        under ``jit`` (wrap in ``jax.experimental.checkify`` to check it there).
      num_classes: ``C ≥ 2`` (static).
      key: PRNG key; the result is a deterministic function of it.

    Returns:
      ``[n]`` int32 noisy labels.

    Example:
      >>> from jaxlab.curriculum import noisy_labels
      >>> y = jnp.zeros(1000, jnp.int32)
      >>> z = noisy_labels(y, 0.4, 10, jax.random.key(0))
      >>> 0.35 < float(jnp.mean(z != y)) < 0.45
      True

    References:
      Zhou et al., CurBench: Curriculum Learning Benchmark, ICML 2024 (Sec. 3).
    """
    check_integer("num_classes", num_classes, low=2)
    labels = check_labels("labels", labels, num_classes)
    if labels.ndim != 1:
        raise ValueError(f"labels must be [n], got shape {labels.shape}")
    check_range("p", p, 0.0, 1.0, high_open=True)
    check_key("key", key)
    flip_key, class_key = jax.random.split(key)
    flip = jax.random.bernoulli(flip_key, p, labels.shape)
    offset = jax.random.randint(class_key, labels.shape, 1, num_classes)
    return jnp.where(flip, (labels + offset) % num_classes, labels).astype(jnp.int32)


def imbalance(labels: ArrayLike, ratio: float, num_classes: int, key: jax.Array) -> np.ndarray:
    """Indices kept by CurBench's imbalance-r setting (a long-tailed class distribution).

    Keeps each sample of class ``c`` with probability ``μ^c``, ``μ = (1/r)^{1/(C−1)}``
    (``r`` = ``ratio``), so class 0 keeps everything and class ``C−1`` a fraction ``1/r``.
    The number kept is data dependent, so this runs on the host (returns numpy).

    Args:
      labels: ``[n]`` integer labels in ``[0, num_classes)`` (checked: host-side).
      ratio: imbalance ratio ``r ≥ 1`` (``1``: keep all).
      num_classes: ``C ≥ 2``.
      key: PRNG key; the result is a deterministic function of it.

    Returns:
      ``[k]`` sorted int64 indices of the kept samples.

    Example:
      >>> from jaxlab.curriculum import imbalance
      >>> y = jnp.repeat(jnp.arange(3), 1000)
      >>> kept = imbalance(y, 100.0, 3, jax.random.key(0))
      >>> np.bincount(np.asarray(y)[kept]).tolist()[0]
      1000

    References:
      Zhou et al., CurBench: Curriculum Learning Benchmark, ICML 2024 (Sec. 3).
    """
    check_integer("num_classes", num_classes, low=2)
    labels = check_labels("labels", labels, num_classes)
    if labels.ndim != 1:
        raise ValueError(f"labels must be [n], got shape {labels.shape}")
    check_range("ratio", ratio, 1.0)
    check_key("key", key)
    mu = (1.0 / ratio) ** (1.0 / (num_classes - 1))
    keep_prob = mu ** labels.astype(jnp.float32)
    keep = jax.random.uniform(key, labels.shape) < keep_prob
    return np.flatnonzero(np.asarray(keep))
