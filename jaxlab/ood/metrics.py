"""OOD detection metrics: AUROC and FPR at a fixed TPR, ID as the positive class, tie-safe.

Scores follow one convention: higher = more in-distribution. Both metrics are rank
statistics computed with one sort (``jit``-able, O(n log n)), so they scale to 10⁶ scores.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_range


def _check_scores(scores_id: ArrayLike, scores_ood: ArrayLike) -> tuple[jax.Array, jax.Array]:
    s_id, s_ood = as_float("scores_id", scores_id), as_float("scores_ood", scores_ood)
    for name, s in (("scores_id", s_id), ("scores_ood", s_ood)):
        if s.ndim != 1:
            raise ValueError(f"{name} must have shape [n], got {s.shape}")
        if s.shape[0] == 0:
            raise ValueError(f"{name} is empty: need at least one score")
    dtype = jnp.result_type(s_id.dtype, s_ood.dtype, jnp.float32)
    return s_id.astype(dtype), s_ood.astype(dtype)


def _nan_if_any_nan(value: jax.Array, s_id: jax.Array, s_ood: jax.Array) -> jax.Array:
    # A NaN score has no rank: the metric is undefined, never a finite number.
    bad = jnp.any(jnp.isnan(s_id)) | jnp.any(jnp.isnan(s_ood))
    return jnp.where(bad, jnp.nan, value)


def auroc(scores_id: ArrayLike, scores_ood: ArrayLike) -> jax.Array:
    r"""Area under the ROC curve with ID as the positive class; ties count one half.

    .. math::
        \mathrm{AUROC} = \frac{1}{n_{id} n_{ood}} \sum_{i, j}
            \big(\mathbb 1[s^{id}_i > s^{ood}_j] + \tfrac12 \mathbb 1[s^{id}_i = s^{ood}_j]\big)

    computed as the Mann-Whitney U statistic from each ID score's mid-rank among the OOD
    scores (equal to the trapezoidal area of scikit-learn's ``roc_auc_score``). All-equal
    scores give 0.5. A NaN score anywhere gives NaN (also under ``jit``); integer scores are
    promoted to float.

    Args:
      scores_id: ``[n_id]`` scores of in-distribution samples (higher = more ID).
      scores_ood: ``[n_ood]`` scores of OOD samples.

    Returns:
      ``[]`` AUROC in [0, 1].

    Example:
      >>> from jaxlab.ood import auroc
      >>> float(auroc(jnp.array([0.9, 0.8, 0.3]), jnp.array([0.1, 0.3])))
      0.9166666865348816

    References:
      Hendrycks, Gimpel. "A baseline for detecting misclassified and out-of-distribution
      examples in neural networks", ICLR 2017.
    """
    s_id, s_ood = _check_scores(scores_id, scores_ood)
    ood_sorted = jnp.sort(s_ood)
    # For each ID score: the OOD scores below it plus half of those equal to it (its
    # mid-rank among the OOD scores). A mean of values in [0, n_ood], so no large sums or
    # integer products overflow at 10⁶ scores.
    below = jnp.searchsorted(ood_sorted, s_id, side="left")
    upto = jnp.searchsorted(ood_sorted, s_id, side="right")
    wins = 0.5 * (below + upto).astype(s_id.dtype)
    return _nan_if_any_nan(jnp.mean(wins) / s_ood.shape[0], s_id, s_ood)


def fpr_at_tpr(scores_id: ArrayLike, scores_ood: ArrayLike, tpr: float = 0.95) -> jax.Array:
    r"""False-positive rate on OOD at the highest threshold that keeps ``tpr`` of ID (FPR95).

    The threshold τ is the ⌈tpr·n_id⌉-th largest ID score; ID is accepted when s ≥ τ, so ties
    at τ are accepted on both sides:

    .. math:: \mathrm{FPR} = \frac{1}{n_{ood}} \sum_j \mathbb 1[s^{ood}_j \ge τ]

    This is the first point of scikit-learn's ``roc_curve`` with TPR ≥ ``tpr`` (no
    interpolation between ROC points; the ``ood-metrics`` package interpolates linearly, so
    its value is at most this one). All-equal scores give 1. A NaN score anywhere gives NaN
    (also under ``jit``).

    Args:
      scores_id: ``[n_id]`` scores of in-distribution samples (higher = more ID).
      scores_ood: ``[n_ood]`` scores of OOD samples.
      tpr: the true-positive rate to keep, in (0, 1]; static (a Python float).

    Returns:
      ``[]`` FPR in [0, 1].

    Example:
      >>> from jaxlab.ood import fpr_at_tpr
      >>> float(fpr_at_tpr(jnp.arange(100.0), jnp.array([2.0, 50.0, 200.0])))
      0.6666666865348816

    References:
      Liang, Li, Srikant. "Enhancing the reliability of out-of-distribution image detection
      in neural networks" (ODIN), ICLR 2018.
    """
    check_range("tpr", tpr, 0.0, 1.0, low_open=True)
    s_id, s_ood = _check_scores(scores_id, scores_ood)
    n_id = s_id.shape[0]
    # k = ⌈tpr·n_id⌉; the slack absorbs float rounding (0.95·100 = 95.00000000000001).
    k = min(max(math.ceil(tpr * n_id - 1e-9), 1), n_id)
    threshold = jnp.sort(s_id)[n_id - k]
    return _nan_if_any_nan(jnp.mean((s_ood >= threshold).astype(s_id.dtype)), s_id, s_ood)
