"""Pooling of per-seed results and the verdict on a claim (tests from ``scipy.stats``).

The rule, by ``Claim.kind`` (every test at level ``ALPHA`` = 0.05):

- ``"better"``: ours against the baseline's samples, a paired t-test (``ttest_rel``) when
  the claim is ``paired`` (the same seeds, in the same order), else Welch's t-test
  (``ttest_ind(equal_var=False)``), two-sided. Significant in the claim's direction →
  *supports*, significant against it → *contradicts*, else *inconclusive*.
- ``"matches"``: equivalence to the paper's number within ±``tolerance`` by TOST (two
  one-sided one-sample t-tests, each at ``ALPHA``): equivalence shown → *supports*; the mean
  significantly above ``paper + tolerance`` or below ``paper − tolerance`` (one-sided) →
  *contradicts*; else *inconclusive*.
- ``"at_least"`` / ``"at_most"``: a one-sided one-sample t-test of the mean against
  ``paper − tolerance`` / ``paper + tolerance`` in the claim's direction → *supports*;
  significant the other way → *contradicts*.

Edge cases, decided before any test:

- NaN or ±inf in ours or the baseline → *failed*, with the reason.
- A ``deterministic`` claim (an exact, seed-free quantity) is compared exactly, with no
  test, at any n: the mean against the baseline's mean (strictly better → *supports*,
  equal → *inconclusive*), the closed band ``|mean − paper| ≤ tolerance`` (inside →
  *supports*, outside → *contradicts*) or the threshold (``mean ≥ paper − tolerance`` for
  ``"at_least"``, ``≤ paper + tolerance`` for ``"at_most"``).
- Otherwise fewer than ``MIN_SAMPLES`` (3) samples in ours or the baseline →
  *inconclusive*.
- Zero variance (every sample equal, or every paired difference equal) with ≥ 3 samples:
  a t statistic is undefined, and the spread is known to be nil, so the value is compared
  exactly as for a deterministic claim (e.g. all differences equal and non-zero →
  decisive with p = 0; all equal to the baseline → inconclusive).

The reported ``effect`` is signed so that positive is the claim's direction (``"better"``:
ours − baseline, negated when lower is better; ``"at_least"``: mean − threshold;
``"at_most"``: threshold − mean; ``"matches"``: mean − paper, unsigned by direction), with
its two-sided 95 % confidence interval (scipy's ``confidence_interval``) and the p-value
of the test that decided (for *inconclusive*, that of the test that would have supported).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from scipy import stats

from jaxlab.report.registry import Claim

SUPPORTS, CONTRADICTS, INCONCLUSIVE, FAILED = "supports", "contradicts", "inconclusive", "failed"
WORDS = (SUPPORTS, CONTRADICTS, INCONCLUSIVE, FAILED)
ALPHA = 0.05
CI_LEVEL = 0.95
MIN_SAMPLES = 3

# Names of the tests, as the report's legend prints them.
PAIRED, WELCH = "paired t-test", "Welch t-test"
TOST, ONE_SIDED = "TOST", "one-sided t-test"
EXACT, NO_TEST = "exact", "none"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The verdict on one claim and the numbers behind it.

    Attributes:
      word: ``supports`` / ``contradicts`` / ``inconclusive`` / ``failed``.
      test: the test that decided (``PAIRED``, ``WELCH``, ``TOST``, ``ONE_SIDED``,
        ``EXACT`` for a deterministic or zero-variance comparison, ``NO_TEST``).
      n: number of our samples.
      effect: the effect, positive in the claim's direction (see the module docstring).
      ci: its 95 % confidence interval (``None`` without a test).
      p: the p-value of the deciding test (``None`` without a test).
      reason: one line saying why (always set for ``inconclusive`` without a test and for
        ``failed``).
    """

    word: str
    test: str
    n: int
    effect: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    reason: str = ""


def pool(results: Sequence[dict], metric: str) -> np.ndarray:
    """All samples of ``metric`` over seeds: one per seed; a list value holds the seeds a
    call batched (``batch_seeds``), in seed order."""
    samples: list[float] = []
    for result in results:
        if metric not in result:
            raise KeyError(f"result has no metric {metric!r}; it has {sorted(result)}")
        value = result[metric]
        samples.extend(float(v) for v in np.ravel(np.asarray(value, dtype=np.float64)))
    return np.asarray(samples)


def _constant(x: np.ndarray) -> bool:
    """Every sample equal (to rounding): the t statistic is undefined."""
    return float(np.ptp(x)) <= 1e-12 * max(1.0, float(np.max(np.abs(x))))


def _word(effect: float, p_for: float | None = None, p_against: float | None = None) -> str:
    """The word from a signed effect and the p-values for and against the claim; without
    p-values the comparison is exact (the sign of the effect decides)."""
    if p_for is None:
        return SUPPORTS if effect > 0 else CONTRADICTS if effect < 0 else INCONCLUSIVE
    if p_for < ALPHA:
        return SUPPORTS
    if p_against is not None and p_against < ALPHA:
        return CONTRADICTS
    return INCONCLUSIVE


def _exact(effect: float, n: int, why: str, closed: bool = False) -> Verdict:
    """An exact comparison: the sign of ``effect`` decides; ``closed``: 0 supports (a band
    or a threshold that includes its edge)."""
    word = SUPPORTS if closed and effect == 0 else _word(effect)
    p = None if word == INCONCLUSIVE else 0.0
    return Verdict(word, EXACT, n, effect, (effect, effect), p, why)


def _exact_band(effect: float, tol: float, n: int, why: str) -> Verdict:
    """``|effect| ≤ tol`` supports, beyond it contradicts (exactly)."""
    verdict = _exact(tol - abs(effect), n, why, closed=True)
    return dataclasses.replace(verdict, effect=effect, ci=(effect, effect))


def _ci(result, shift: float = 0.0, sign: float = 1.0) -> tuple[float, float]:
    low, high = result.confidence_interval(CI_LEVEL)
    low, high = sign * (float(low) - shift), sign * (float(high) - shift)
    return (min(low, high), max(low, high))


def _better(claim: Claim, ours: np.ndarray, base: np.ndarray) -> Verdict:
    sign = 1.0 if claim.higher_is_better else -1.0
    n = len(ours)
    if claim.paired:
        if ours.shape != base.shape:
            raise ValueError(
                f"paired claim {claim.name!r}: {len(ours)} samples vs {len(base)} baseline "
                "samples; a paired test needs one baseline per sample (per seed, same order)"
            )
        effect = sign * float(np.mean(ours - base))
        if _constant(ours - base):
            return _exact(effect, n, "every paired difference is equal (zero variance)")
        result = stats.ttest_rel(ours, base)
        test = PAIRED
    else:
        effect = sign * float(np.mean(ours) - np.mean(base))
        if _constant(ours) and _constant(base):
            return _exact(effect, n, "both arms have zero variance")
        result = stats.ttest_ind(ours, base, equal_var=False)
        test = WELCH
    p = float(result.pvalue)
    word = _word(effect, p if effect > 0 else 1.0, p if effect < 0 else 1.0)
    return Verdict(word, test, n, effect, _ci(result, sign=sign), p)


def _matches(claim: Claim, ours: np.ndarray) -> Verdict:
    paper, tol = float(claim.paper), float(claim.tolerance)
    n, effect = len(ours), float(np.mean(ours)) - paper
    if _constant(ours):
        return _exact_band(effect, tol, n, "every sample is equal (zero variance)")
    p_tost = max(stats.ttest_1samp(ours, paper - tol, alternative="greater").pvalue,
                 stats.ttest_1samp(ours, paper + tol, alternative="less").pvalue)
    p_out = min(stats.ttest_1samp(ours, paper + tol, alternative="greater").pvalue,
                stats.ttest_1samp(ours, paper - tol, alternative="less").pvalue)
    word = _word(0.0, float(p_tost), float(p_out))
    p = float(p_out if word == CONTRADICTS else p_tost)
    return Verdict(word, TOST, n, effect, _ci(stats.ttest_1samp(ours, paper), shift=paper), p)


def _threshold(claim: Claim) -> tuple[float, float]:
    """(threshold, sign): ``at_least`` → (paper − tol, +1), ``at_most`` → (paper + tol, −1)."""
    tol = float(claim.tolerance or 0.0)
    if claim.kind == "at_least":
        return float(claim.paper) - tol, 1.0
    return float(claim.paper) + tol, -1.0


def _one_sided(claim: Claim, ours: np.ndarray) -> Verdict:
    threshold, sign = _threshold(claim)
    n, effect = len(ours), sign * (float(np.mean(ours)) - threshold)
    if _constant(ours):
        return _exact(effect, n, "every sample is equal (zero variance)", closed=True)
    up, down = ("greater", "less") if sign > 0 else ("less", "greater")
    p_for = float(stats.ttest_1samp(ours, threshold, alternative=up).pvalue)
    p_against = float(stats.ttest_1samp(ours, threshold, alternative=down).pvalue)
    word = _word(effect, p_for, p_against)
    ci = _ci(stats.ttest_1samp(ours, threshold), shift=threshold, sign=sign)
    return Verdict(word, ONE_SIDED, n, effect, ci, p_against if word == CONTRADICTS else p_for)


def _deterministic(claim: Claim, ours: np.ndarray, base: np.ndarray | None) -> Verdict:
    """A deterministic claim: its mean compared exactly (no test), at any n."""
    n, mean = len(ours), float(np.mean(ours))
    why = f"deterministic: exact comparison of {n} value(s)"
    if claim.kind == "better":
        sign = 1.0 if claim.higher_is_better else -1.0
        return _exact(sign * (mean - float(np.mean(base))), n, why)
    if claim.kind == "matches":
        return _exact_band(mean - float(claim.paper), float(claim.tolerance), n, why)
    threshold, sign = _threshold(claim)
    return _exact(sign * (mean - threshold), n, why, closed=True)


def _non_finite(name: str, x: np.ndarray) -> str:
    bad = x[~np.isfinite(x)]
    return f"{len(bad)} non-finite value(s) in {name} ({', '.join(map(str, bad[:3]))})"


def verdict(claim: Claim, ours: np.ndarray, baseline: np.ndarray | None = None) -> Verdict:
    """The verdict on ``claim`` given our samples (and, for ``"better"``, the baseline's).

    Args:
      claim: the claim; its ``kind`` picks the test (see the module docstring).
      ours: our samples, one per seed (``pool``).
      baseline: the baseline's samples (one per seed; the same seeds in the same order when
        the claim is ``paired``); required when ``claim.kind == "better"``.

    Raises:
      ValueError: a ``"better"`` claim without baseline samples, or a paired claim whose
        two sample lists differ in length.
    """
    ours = np.asarray(ours, dtype=np.float64).ravel()
    base = None if baseline is None else np.asarray(baseline, dtype=np.float64).ravel()
    kind = claim.kind
    if kind == "better" and base is None:
        raise ValueError(f"claim {claim.name!r} compares with a baseline; pass its samples")
    n = len(ours)
    if n == 0:
        return Verdict(FAILED, NO_TEST, 0, reason="no samples")
    for name, x in (("ours", ours), ("the baseline", base if kind == "better" else None)):
        if x is not None and not np.all(np.isfinite(x)):
            return Verdict(FAILED, NO_TEST, n, reason=_non_finite(name, x))
    if claim.paper is None and kind != "better":
        return Verdict(INCONCLUSIVE, NO_TEST, n, reason="diagnostic: nothing to compare with")
    if claim.deterministic:
        return _deterministic(claim, ours, base)
    fewest = min(n, len(base)) if kind == "better" else n
    if fewest < MIN_SAMPLES:
        return Verdict(INCONCLUSIVE, NO_TEST, n,
                       reason=f"{fewest} sample(s) < {MIN_SAMPLES}: never decisive")
    if kind == "better":
        return _better(claim, ours, base)
    if kind == "matches":
        return _matches(claim, ours)
    return _one_sided(claim, ours)

