"""Pooling of per-seed results and the verdict word of a claim."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from jaxlab.report.registry import Claim

SUPPORTS, CONTRADICTS, INCONCLUSIVE, FAILED = "supports", "contradicts", "inconclusive", "failed"


def pool(results: Sequence[dict], metric: str) -> np.ndarray:
    """All samples of ``metric`` over seeds (list values are runs batched in one call)."""
    samples: list[float] = []
    for result in results:
        if metric not in result:
            raise KeyError(f"result has no metric {metric!r}; it has {sorted(result)}")
        value = result[metric]
        samples.extend(float(v) for v in np.ravel(np.asarray(value, dtype=np.float64)))
    return np.asarray(samples)


def _stderr(samples: np.ndarray) -> float:
    return float(np.std(samples, ddof=1) / math.sqrt(len(samples))) if len(samples) > 1 else 0.0


def verdict(claim: Claim, ours: np.ndarray, baseline: np.ndarray | None) -> str:
    """The verdict word for ``claim`` given our samples (and the baseline's).

    With a baseline: the signed improvement of the mean (in the claim's direction) against
    twice its standard error — beyond it ``supports``/``contradicts``, else
    ``inconclusive``. For a ``paired`` claim the standard error is that of the per-sample
    differences (ours[i] − baseline[i]), which removes the split-to-split variance both
    share. Without one: ``supports`` when our mean is within ``tolerance`` of
    the paper's number, ``contradicts`` when it is further than tolerance plus twice the
    standard error, else ``inconclusive``.
    """
    sign = 1.0 if claim.higher_is_better else -1.0
    if claim.baseline is not None and baseline is not None:
        gain = sign * (ours.mean() - baseline.mean())
        if claim.paired:
            if ours.shape != baseline.shape:
                raise ValueError(
                    f"paired claim {claim.name!r}: {len(ours)} samples vs {len(baseline)} "
                    "baseline samples; a paired test needs one baseline per sample"
                )
            noise = 2.0 * _stderr(ours - baseline)
        else:
            noise = 2.0 * math.hypot(_stderr(ours), _stderr(baseline))
        if gain > noise:
            return SUPPORTS
        if gain < -noise:
            return CONTRADICTS
        return INCONCLUSIVE
    if claim.paper is not None and claim.tolerance is not None:
        gap = abs(ours.mean() - claim.paper)
        if gap <= claim.tolerance:
            return SUPPORTS
        if gap > claim.tolerance + 2.0 * _stderr(ours):
            return CONTRADICTS
    return INCONCLUSIVE
