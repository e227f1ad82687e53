"""Pooling of per-seed results and the verdict on a claim (tests from ``scipy.stats``).

Every test is at level ``ALPHA`` = 0.05. The number a claim is compared with is its
``Claim.bound`` (its ``threshold``, else the paper's number shifted by the tolerance). The
test depends on ``Claim.kind`` and on what one sample is (``Claim.samples``):

=================  ==============================  ========================================
kind               continuous samples              0/1 outcomes or proportions (counts)
=================  ==============================  ========================================
``"better"``       paired t-test (``paired``),     exact sign test on the per-sample
                   else Welch's t-test; two-sided  differences (McNemar's exact test for
                                                   0/1) when paired, else Fisher's exact
                                                   test on the pooled counts; two-sided
``"matches"``      TOST: two one-sided one-sample  exact TOST: two one-sided binomial tests
                   t-tests at the band's edges     at the band's edges
``"at_least"`` /   one-sided one-sample t-test     one-sided exact binomial test against
``"at_most"``      against the bound               the bound (a nominal rate)
``"draw"``         exact sign TOST (below)         (continuous only)
=================  ==============================  ========================================

``"draw"`` asks whether one external value (a reference run's single draw) is equivalent
to a typical draw of ours within the claim's margin (``tolerance``, fixed in the claim): the
exact sign TOST of our median against value ± margin, distribution-free (no normality, so a
bimodal spread is judged as it is). *supports* only when equivalence is shown; our median
significantly outside the band → *contradicts*; else *inconclusive*. More spread, or fewer
samples, make support harder, never easier.

Significant in the claim's direction → *supports*; significant against it (the two-sided
test's other side, the one-sided test the other way, the mean outside the band by a
one-sided test) → *contradicts*; else *inconclusive*. A *supports* of ``"matches"`` also
needs its whole confidence interval inside the band.

Counts: a 0/1 sample is one trial; a proportion of ``trials`` independent trials counts
``round(x · trials)`` successes of ``trials``; a proportion whose trials share data
(``trials=None``) counts as one trial with ``round(Σx)`` successes in all, which is
conservative (a share's variance is at most p(1 − p)).

Edge cases, decided before any test:

- NaN or ±inf in ours or the baseline → *failed*, with the reason; so is a sample outside
  the claim's ``bounds``, a 0/1 sample that is neither, and a proportion outside [0, 1].
- Continuous samples that are all 0 or 1 are undeclared outcomes: ``ValueError`` (the row
  records the error and fails); the claim must declare ``samples``.
- A ``deterministic`` claim (an exact, seed-free quantity) is compared exactly, with no
  test, once ``DETERMINISTIC_RUNS`` (2) runs agree bit for bit (``==``, not a tolerance);
  runs that differ → *failed*; a single run → *inconclusive*. Equal within ``np.isclose``
  counts as equal: ``better`` → *inconclusive*; a closed band or bound → *supports*.
- Otherwise fewer than ``MIN_SAMPLES`` (3) samples in ours or the baseline →
  *inconclusive*.
- Censored continuous samples: a sample on a finite edge of ``bounds`` (the run's cap, such
  as "never reached counts as the run length", a floor or a ceiling) is known only to be at
  least (at most) that edge, so no t-test runs on it: the exact sign test (paired
  differences, or against the bound; both arms at the cap are a tie), its TOST for a band,
  or the Mann–Whitney U test for two unpaired arms, each valid under a common cap.
- Continuous samples with no spread (a t statistic is undefined): the exact sign test
  (samples equal to the bound within ``np.isclose`` are ties, left out), or the
  Mann–Whitney U test for two unpaired constant arms. No zero-variance row is decided
  "exactly": only ``deterministic`` claims are.

The reported ``effect`` is signed so that positive is the claim's direction (``"better"``:
ours − baseline, negated when lower is better; ``"at_least"``: mean − bound;
``"at_most"``: bound − mean; ``"matches"``: mean − centre; ``"draw"``: our median − the
value), with its confidence interval at the level of the test that decided
(``Verdict.ci_level``): 95 % for the two-sided ``"better"`` t-tests, 90 % (= 1 − 2α) for
TOST and the one-sided t-tests, each α = 0.05 a side; Clopper–Pearson for the binomial
tests; none for the sign, Fisher and Mann–Whitney tests. The p-value is that of the test
that decided (for *inconclusive*, of the test that would have supported).
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
TWO_SIDED_LEVEL = 1 - ALPHA  # the CI of a two-sided test at ALPHA
ONE_SIDED_LEVEL = 1 - 2 * ALPHA  # the CI of a one-sided test (or TOST) at ALPHA
MIN_SAMPLES = 3
DETERMINISTIC_RUNS = 2  # a deterministic value counts once this many runs agree bit for bit
RTOL, ATOL = 1e-9, 1e-12  # np.isclose at float edges

# Names of the tests, as the report's legend prints them.
PAIRED, WELCH = "paired t-test", "Welch t-test"
TOST, ONE_SIDED = "TOST", "one-sided t-test"
SIGN, FISHER, MANN_WHITNEY = "exact sign test", "Fisher exact test", "Mann-Whitney U"
BINOMIAL, BINOMIAL_TOST = "exact binomial test", "exact binomial TOST"
SIGN_TOST = "exact sign TOST"
EXACT, NO_TEST = "exact", "none"
CI_LEVELS = {
    PAIRED: TWO_SIDED_LEVEL,
    WELCH: TWO_SIDED_LEVEL,
    TOST: ONE_SIDED_LEVEL,
    ONE_SIDED: ONE_SIDED_LEVEL,
    BINOMIAL: ONE_SIDED_LEVEL,
    BINOMIAL_TOST: ONE_SIDED_LEVEL,
}


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The verdict on one claim and the numbers behind it.

    Attributes:
      word: ``supports`` / ``contradicts`` / ``inconclusive`` / ``failed``.
      test: the test that decided (one of the names above; ``EXACT`` for a deterministic
        comparison, ``NO_TEST`` when none ran).
      n: number of our samples.
      effect: the effect, positive in the claim's direction (see the module docstring).
      ci: its confidence interval at ``ci_level`` (``None`` when the test gives none).
      p: the p-value of the deciding test (``None`` without a test).
      reason: one line saying why (always set without a test and for ``failed``).
      ci_level: the level of ``ci`` (the test's: 0.95 two-sided, 0.90 one-sided / TOST).
    """

    word: str
    test: str
    n: int
    effect: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    reason: str = ""
    ci_level: float | None = None


def pool(
    results: Sequence[dict], metric: str, unit: str = "seeds", seeds: int | None = None
) -> np.ndarray:
    """All samples of ``metric`` over the runner's seeds, in seed order.

    A list value holds the seeds one call batched (``batch_seeds``). With ``unit`` other
    than ``"seeds"`` the claim names its unit of replication (networks, splits, timing
    rounds), and a list holds that many units of one seed.

    Args:
      results: the per-call results (one per seed, or one per batch of seeds).
      metric: the key to pool.
      unit: the claim's unit of replication.
      seeds: the number of seeds the runner ran (``num_seeds``), when known: with
        ``unit == "seeds"`` the pooled samples must be at most that many, batched or not
        (an arm may run on the first few seeds only).

    Raises:
      KeyError: a result lacks ``metric``.
      ValueError: ``unit`` is ``"seeds"`` and the samples are not one per seed: more than
        ``seeds`` (or, with ``seeds`` unknown and several results, not one per result), i.e.
        a list per seed of several samples, which needs the claim to name its unit.
    """
    samples: list[float] = []
    for result in results:
        if metric not in result:
            raise KeyError(f"result has no metric {metric!r}; it has {sorted(result)}")
        samples.extend(float(v) for v in np.ravel(np.asarray(result[metric], dtype=np.float64)))
    if seeds is not None:
        several = len(samples) > seeds  # an arm may run on a subset of the seeds
        expected = seeds
    else:
        several, expected = len(results) > 1 and len(samples) != len(results), len(results)
    if unit == "seeds" and several:
        raise ValueError(
            f"metric {metric!r}: {len(samples)} samples from {expected} seeds; one sample "
            "per seed, or the claim names its unit_of_replication"
        )
    return np.asarray(samples)


def _near(a: float | np.ndarray, b: float | np.ndarray) -> np.ndarray:
    return np.isclose(a, b, rtol=RTOL, atol=ATOL)


def _constant(x: np.ndarray) -> bool:
    """Every sample equal (to rounding): the t statistic is undefined."""
    return bool(np.all(_near(x, x[0])))


def _word(p_for: float, p_against: float | None = None) -> str:
    """The word from the p-values for and against the claim."""
    if p_for < ALPHA:
        return SUPPORTS
    if p_against is not None and p_against < ALPHA:
        return CONTRADICTS
    return INCONCLUSIVE


def _pick(word: str, p_for: float, p_against: float) -> float:
    return p_against if word == CONTRADICTS else p_for


def _ci(result, level: float, shift: float = 0.0, sign: float = 1.0) -> tuple[float, float]:
    low, high = result.confidence_interval(level)
    low, high = sign * (float(low) - shift), sign * (float(high) - shift)
    return (min(low, high), max(low, high))


def _binom_p(successes: int, total: int, rate: float, alternative: str) -> float:
    """``binomtest``'s p-value, with a rate outside [0, 1] decided by logic (H0 impossible
    or certain)."""
    if total == 0:
        return 1.0
    if rate < 0 or rate > 1:
        below = rate < 0
        return 0.0 if (alternative == "greater") == below else 1.0
    return float(stats.binomtest(successes, total, rate, alternative=alternative).pvalue)


def _sign_p(diffs: np.ndarray, alternative: str) -> float:
    """The exact sign test on ``diffs`` (zeros within ``np.isclose`` are ties, left out):
    H0 P(d > 0) = 1/2."""
    up = int(np.sum((diffs > 0) & ~_near(diffs, 0.0)))
    down = int(np.sum((diffs < 0) & ~_near(diffs, 0.0)))
    return _binom_p(up, up + down, 0.5, alternative)


def _counts(claim: Claim, x: np.ndarray) -> tuple[int, int]:
    """(successes, trials) of 0/1 outcomes or proportions (see the module docstring)."""
    if claim.samples == "proportion" and claim.trials is None:
        return int(round(float(np.sum(x)))), len(x)
    k = claim.trials or 1
    return int(round(float(np.sum(x)) * k)), len(x) * k


def _bad_counts(claim: Claim, x: np.ndarray) -> str:
    if claim.samples == "binary" and not np.all(_near(x, 0.0) | _near(x, 1.0)):
        return "samples='binary' but some samples are neither 0 nor 1"
    if claim.samples == "proportion" and (np.any(x < -ATOL) or np.any(x > 1 + ATOL)):
        return "samples='proportion' but some samples are outside [0, 1]"
    if claim.samples == "proportion" and claim.trials:
        scaled = x * claim.trials
        if not np.all(_near(scaled, np.round(scaled))):
            return f"a proportion of {claim.trials} trials is not a multiple of 1/{claim.trials}"
    return ""


def _better(claim: Claim, ours: np.ndarray, base: np.ndarray, censored: str) -> Verdict:
    sign = 1.0 if claim.higher_is_better else -1.0
    n = len(ours)
    if claim.paired and ours.shape != base.shape:
        raise ValueError(
            f"paired claim {claim.name!r}: {len(ours)} samples vs {len(base)} baseline "
            "samples; a paired test needs one baseline per sample (per seed, same order)"
        )
    counts = claim.samples != "continuous"
    if claim.paired:
        effect = sign * float(np.mean(ours - base))
        if counts or censored or _constant(ours - base):
            diffs = sign * (ours - base)
            p_for, p_against = _sign_p(diffs, "greater"), _sign_p(diffs, "less")
            word = _two_sided(p_for, p_against)
            why = censored or ("" if counts else "every paired difference is equal: no t statistic")
            return Verdict(word, SIGN, n, effect, None, _p_two(p_for, p_against), why)
        result = stats.ttest_rel(ours, base)
        test = PAIRED
    else:
        effect = sign * (float(np.mean(ours)) - float(np.mean(base)))
        if counts:
            (k1, n1), (k0, n0) = _counts(claim, ours), _counts(claim, base)
            p = float(stats.fisher_exact([[k1, n1 - k1], [k0, n0 - k0]]).pvalue)
            return Verdict(_signed_word(effect, p), FISHER, n, effect, None, p)
        if censored or (_constant(ours) and _constant(base)):
            p = float(stats.mannwhitneyu(ours, base, alternative="two-sided").pvalue)
            why = censored or "both arms are constant: no t statistic"
            return Verdict(_signed_word(effect, p), MANN_WHITNEY, n, effect, None, p, why)
        result = stats.ttest_ind(ours, base, equal_var=False)
        test = WELCH
    p = float(result.pvalue)
    return Verdict(
        _signed_word(effect, p),
        test,
        n,
        effect,
        _ci(result, TWO_SIDED_LEVEL, sign=sign),
        p,
        ci_level=TWO_SIDED_LEVEL,
    )


def _signed_word(effect: float, p: float) -> str:
    """The word of a two-sided test: significant with a positive effect supports, with a
    negative one contradicts."""
    if p >= ALPHA or _near(effect, 0.0):
        return INCONCLUSIVE
    return SUPPORTS if effect > 0 else CONTRADICTS


def _p_two(p_up: float, p_down: float) -> float:
    """The two-sided p-value of an exact test from its one-sided ones (doubled smaller)."""
    return min(1.0, 2.0 * min(p_up, p_down))


def _two_sided(p_up: float, p_down: float) -> str:
    p = _p_two(p_up, p_down)
    if p >= ALPHA:
        return INCONCLUSIVE
    return SUPPORTS if p_up < p_down else CONTRADICTS


def _bound(claim: Claim) -> float:
    """``claim.bound``: :func:`verdict` runs a test only for a claim that has one."""
    bound = claim.bound
    if bound is None:
        raise ValueError(f"claim {claim.name!r} has no number to compare with")
    return float(bound)


def _tolerance(claim: Claim) -> float:
    """``claim.tolerance`` of a ``"matches"`` or ``"draw"`` claim (the registry requires
    one)."""
    tolerance = claim.tolerance
    if tolerance is None:
        raise ValueError(f"claim {claim.name!r}: test {claim.kind!r} needs a tolerance")
    return float(tolerance)


def _matches(claim: Claim, ours: np.ndarray, censored: str) -> Verdict:
    centre, tol = _bound(claim), _tolerance(claim)
    low, high = centre - tol, centre + tol
    n, effect = len(ours), float(np.mean(ours)) - centre
    if claim.samples != "continuous":
        k, total = _counts(claim, ours)
        p_tost = max(_binom_p(k, total, low, "greater"), _binom_p(k, total, high, "less"))
        p_out = min(_binom_p(k, total, high, "greater"), _binom_p(k, total, low, "less"))
        ci = stats.binomtest(k, total).proportion_ci(ONE_SIDED_LEVEL, method="exact")
        interval = (float(ci.low) - centre, float(ci.high) - centre)
        test = BINOMIAL_TOST
    elif censored or _constant(ours):
        p_tost = max(_sign_p(ours - low, "greater"), _sign_p(ours - high, "less"))
        p_out = min(_sign_p(ours - high, "greater"), _sign_p(ours - low, "less"))
        interval, test = None, SIGN_TOST
    else:

        def one(value: float, alternative: str) -> float:
            return float(stats.ttest_1samp(ours, value, alternative=alternative).pvalue)

        p_tost = max(one(low, "greater"), one(high, "less"))
        p_out = min(one(high, "greater"), one(low, "less"))
        interval = _ci(stats.ttest_1samp(ours, centre), ONE_SIDED_LEVEL, shift=centre)
        test = TOST
    word = _word(p_tost, p_out)
    why = "" if test != SIGN_TOST else censored or "every sample is equal: no t statistic"
    if word == SUPPORTS and interval is not None and not _inside(interval, tol):
        word, why = INCONCLUSIVE, f"the {ONE_SIDED_LEVEL:.0%} CI leaves the band ±{tol:g}"
    return Verdict(
        word, test, n, effect, interval, _pick(word, p_tost, p_out), why, CI_LEVELS.get(test)
    )


def _inside(interval: tuple[float, float], tol: float) -> bool:
    low, high = interval
    return bool((low >= -tol or _near(low, -tol)) and (high <= tol or _near(high, tol)))


def _one_sided(claim: Claim, ours: np.ndarray, censored: str) -> Verdict:
    bound = _bound(claim)
    sign = 1.0 if claim.kind == "at_least" else -1.0
    up, down = ("greater", "less") if sign > 0 else ("less", "greater")
    n, effect = len(ours), sign * (float(np.mean(ours)) - bound)
    if claim.samples != "continuous":
        k, total = _counts(claim, ours)
        p_for, p_against = _binom_p(k, total, bound, up), _binom_p(k, total, bound, down)
        ci = stats.binomtest(k, total).proportion_ci(ONE_SIDED_LEVEL, method="exact")
        low, high = sign * (float(ci.low) - bound), sign * (float(ci.high) - bound)
        interval, test, why = (min(low, high), max(low, high)), BINOMIAL, ""
    elif censored or _constant(ours):
        p_for, p_against = _sign_p(ours - bound, up), _sign_p(ours - bound, down)
        interval, test = None, SIGN
        why = censored or "every sample is equal: no t statistic"
    else:
        p_for = float(stats.ttest_1samp(ours, bound, alternative=up).pvalue)
        p_against = float(stats.ttest_1samp(ours, bound, alternative=down).pvalue)
        interval = _ci(stats.ttest_1samp(ours, bound), ONE_SIDED_LEVEL, shift=bound, sign=sign)
        test, why = ONE_SIDED, ""
    word = _word(p_for, p_against)
    return Verdict(
        word, test, n, effect, interval, _pick(word, p_for, p_against), why, CI_LEVELS.get(test)
    )


def _draw(claim: Claim, ours: np.ndarray) -> Verdict:
    """Is ``claim.bound`` (a reference run's one draw) equivalent to a typical draw of ours
    within the claim's margin (module docstring)? ``effect`` = our median − the value."""
    value, margin, n = _bound(claim), _tolerance(claim), len(ours)
    low, high = value - margin, value + margin
    p_tost = max(_sign_p(ours - low, "greater"), _sign_p(ours - high, "less"))
    p_out = min(_sign_p(ours - high, "greater"), _sign_p(ours - low, "less"))
    word = _word(p_tost, p_out)
    inside = int(np.sum((ours >= low) & (ours <= high)))
    why = (
        f"{inside} of {n} samples inside the reference {value:.6g} ± {margin:g} "
        f"(ours from {np.min(ours):.6g} to {np.max(ours):.6g})"
    )
    effect = float(np.median(ours)) - value
    return Verdict(word, SIGN_TOST, n, effect, None, _pick(word, p_tost, p_out), why)


def _exact(effect: float, n: int, why: str, closed: bool) -> Verdict:
    """An exact comparison: the sign of ``effect`` decides (0 within ``np.isclose`` is
    equal); ``closed``: equal supports (a band or a bound that includes its edge)."""
    if _near(effect, 0.0):
        word = SUPPORTS if closed else INCONCLUSIVE
    else:
        word = SUPPORTS if effect > 0 else CONTRADICTS
    return Verdict(word, EXACT, n, effect, None, None, why)


def _disagree(name: str, x: np.ndarray) -> str:
    if len(x) < 2:
        return ""
    if np.all(x == x[0]):
        return ""
    return (
        f"deterministic, yet the {len(x)} runs of {name} differ bit for bit "
        f"(from {np.min(x)!r} to {np.max(x)!r})"
    )


def _deterministic(claim: Claim, ours: np.ndarray, base: np.ndarray | None) -> Verdict:
    """A deterministic claim: two or more runs that agree bit for bit, compared exactly with
    no test; one run is never decisive."""
    n = len(ours)
    compared = base if claim.kind == "better" else None  # the baseline's samples
    arms = [("ours", ours)] + ([("the baseline", compared)] if compared is not None else [])
    for name, x in arms:
        problem = _disagree(name, x)
        if problem:
            return Verdict(FAILED, NO_TEST, n, reason=problem)
    for name, x in arms:
        if len(x) < DETERMINISTIC_RUNS:
            return Verdict(
                INCONCLUSIVE,
                NO_TEST,
                n,
                reason=f"deterministic, but {name} has {len(x)} run(s): "
                f"{DETERMINISTIC_RUNS} runs must agree bit for bit",
            )
    value = float(ours[0])
    why = f"deterministic: exact comparison of {n} runs that agree bit for bit"
    if compared is not None:
        sign = 1.0 if claim.higher_is_better else -1.0
        return _exact(sign * (value - float(compared[0])), n, why, closed=False)
    if claim.kind == "matches":
        effect = value - _bound(claim)
        verdict = _exact(_tolerance(claim) - abs(effect), n, why, closed=True)
        return dataclasses.replace(verdict, effect=effect)
    sign = 1.0 if claim.kind == "at_least" else -1.0
    return _exact(sign * (value - _bound(claim)), n, why, closed=True)


def _non_finite(name: str, x: np.ndarray) -> str:
    bad = x[~np.isfinite(x)]
    return f"{len(bad)} non-finite value(s) in {name} ({', '.join(map(str, bad[:3]))})"


def _outside(claim: Claim, name: str, x: np.ndarray) -> str:
    low, high = claim.feasible
    bad = x[((x < low) & ~_near(x, low)) | ((x > high) & ~_near(x, high))]
    if not len(bad):
        return ""
    return (
        f"{len(bad)} sample(s) of {name} outside the metric's range [{low:g}, {high:g}] "
        f"({', '.join(f'{v:.6g}' for v in bad[:3])})"
    )


def _at_edge(claim: Claim, arms: Sequence[np.ndarray], cap: float | None) -> str:
    """Continuous samples at the run's cap or on a finite edge of the metric's range (a
    floor or a ceiling): censored values, whose mean a t-test would misread. '' when
    none."""
    if claim.samples != "continuous":
        return ""
    edges = [*zip(claim.feasible, ("floor", "ceiling"), strict=True)]
    if cap is not None:
        edges.insert(0, (cap, "cap"))
    for edge, name in edges:
        if not np.isfinite(edge):
            continue
        count = sum(int(np.sum(_near(x, edge))) for x in arms)
        if count:
            return (
                f"{count} sample(s) at the {name} {edge:g} (censored): no t-test on capped values"
            )
    return ""


def _undeclared_counts(claim: Claim, arms: Sequence[np.ndarray]) -> None:
    """Refuses continuous samples that are all 0/1: outcomes the claim must declare."""
    if claim.samples != "continuous":
        return
    values = np.concatenate(list(arms))
    if len(values) and np.all((values == 0.0) | (values == 1.0)):
        raise ValueError(
            f"claim {claim.name!r}: every sample is 0 or 1 but the claim declares continuous "
            "samples; declare samples='binary' (0/1 outcomes) or samples='proportion' with "
            "its trials"
        )


def verdict(
    claim: Claim,
    ours: np.ndarray,
    baseline: np.ndarray | None = None,
    cap: float | None = None,
) -> Verdict:
    """The verdict on ``claim`` given our samples (and, for ``"better"``, the baseline's).

    Args:
      claim: the claim; its ``kind`` and ``samples`` pick the test (module docstring).
      ours: our samples, one per unit of replication (``pool``).
      baseline: the baseline's samples (the same units in the same order when the claim
        is ``paired``); required when ``claim.kind == "better"``.
      cap: the value of a sample the run's cap stopped (``Claim.cap`` of the run's
        config); such samples are censored.

    Raises:
      ValueError: a ``"better"`` claim without baseline samples, a paired claim whose two
        sample lists differ in length, or continuous samples that are all 0/1 (undeclared
        outcomes).
    """
    ours = np.asarray(ours, dtype=np.float64).ravel()
    base = None if baseline is None else np.asarray(baseline, dtype=np.float64).ravel()
    kind = claim.kind
    if kind == "better" and base is None:
        raise ValueError(f"claim {claim.name!r} compares with a baseline; pass its samples")
    n = len(ours)
    if n == 0:
        return Verdict(FAILED, NO_TEST, 0, reason="no samples")
    arms = (("ours", ours), ("the baseline", base if kind == "better" else None))
    for name, x in arms:
        if x is None:
            continue
        if not np.all(np.isfinite(x)):
            return Verdict(FAILED, NO_TEST, n, reason=_non_finite(name, x))
        problem = _outside(claim, name, x) or _bad_counts(claim, x)
        if problem:
            return Verdict(FAILED, NO_TEST, n, reason=problem)
    compared = [ours] + ([base] if kind == "better" and base is not None else [])
    _undeclared_counts(claim, compared)
    if kind != "better" and claim.bound is None:
        return Verdict(INCONCLUSIVE, NO_TEST, n, reason="diagnostic: nothing to compare with")
    if claim.deterministic:
        return _deterministic(claim, ours, base)
    fewest = min(n, len(base)) if kind == "better" and base is not None else n
    if fewest < MIN_SAMPLES:
        return Verdict(
            INCONCLUSIVE, NO_TEST, n, reason=f"{fewest} sample(s) < {MIN_SAMPLES}: never decisive"
        )
    censored = _at_edge(claim, compared, cap)
    if kind == "better" and base is not None:
        return _better(claim, ours, base, censored)
    if kind == "matches":
        return _matches(claim, ours, censored)
    if kind == "draw":
        if claim.samples != "continuous":
            raise ValueError(f"claim {claim.name!r}: test 'draw' needs continuous samples")
        return _draw(claim, ours)
    return _one_sided(claim, ours, censored)
