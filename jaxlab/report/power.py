"""Seed counts from a power calculation, made before a run (``scipy`` only).

A claim's seed count is chosen so that the test its verdict runs (``jaxlab.report.verdict``)
at level ``alpha`` detects the effect worth reporting (the paper's effect, or the smallest
one worth a row) with probability ``power``, given the spread of a pilot run. The
calculation goes in the experiment config's docstring; seeds are never raised after a
verdict is seen. Match the test:

- ``"better"`` (paired or Welch t-test, two-sided): ``t_test_power(...)`` — the default is
  two-sided; ``two_sample=True`` for Welch;
- ``"at_least"`` / ``"at_most"`` (one-sided t-test): ``t_test_power(..., one_sided=True)``;
- ``"matches"`` (TOST): ``tost_power``;
- 0/1 outcomes paired (exact sign test): ``sign_test_power``; against a nominal rate
  (exact binomial test): ``binomial_power``.

    n = seeds_for_power(effect=2.0, sd=1.5)               # two-sided, paired / one-sample
    n = seeds_for_power(effect=2.0, sd=1.5, two_sample=True)   # Welch, n per arm
"""

from __future__ import annotations

import dataclasses
import math

from scipy import integrate, stats

POWER_TESTS = ("paired t", "welch", "one-sided t", "tost", "sign", "binomial")


def t_test_power(
    n: int,
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    two_sample: bool = False,
    one_sided: bool = False,
) -> float:
    """Power of a t-test with ``n`` samples (per arm when ``two_sample``).

    One-sample / paired: noncentrality ``δ = effect / sd · √n`` with ``n − 1`` degrees of
    freedom; two-sample with equal arms: ``δ = effect / (sd · √(2/n))``, ``2n − 2`` degrees.
    ``sd`` is the standard deviation of one sample (of the per-seed differences for a
    paired test).
    """
    if n < 2:
        return 0.0
    if sd <= 0:
        raise ValueError(f"sd must be > 0, got {sd}")
    if two_sample:
        df, delta = 2 * n - 2, abs(effect) / (sd * math.sqrt(2.0 / n))
    else:
        df, delta = n - 1, abs(effect) / sd * math.sqrt(n)
    tail = alpha if one_sided else alpha / 2
    crit = stats.t.ppf(1 - tail, df)
    upper = stats.nct.sf(crit, df, delta)
    # P(T < −crit | δ) = P(T > crit | −δ): scipy's nct.cdf is NaN far in the tail.
    return float(upper if one_sided else upper + stats.nct.sf(crit, df, -delta))


def seeds_for_power(
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    two_sample: bool = False,
    one_sided: bool = False,
    minimum: int = 3,
    maximum: int = 1000,
) -> int:
    """The smallest seed count (≥ ``minimum``) whose t-test reaches ``power``.

    Returns ``maximum`` when even that many seeds fall short (the effect is too small for
    any budget: say so instead of running).

    Example:
      >>> seeds_for_power(effect=1.0, sd=1.0)   # paired, d = 1
      10
    """
    if effect == 0:
        return maximum
    for n in range(max(minimum, 2), maximum + 1):
        if (
            t_test_power(n, effect, sd, alpha=alpha, two_sample=two_sample, one_sided=one_sided)
            >= power
        ):
            return n
    return maximum


def tost_power(
    n: int, difference: float, tolerance: float, sd: float, *, alpha: float = 0.05
) -> float:
    """Power of the one-sample TOST (two one-sided t-tests at ``alpha`` against
    ±``tolerance``) with ``n`` samples when the true mean is ``difference`` from the centre.

    Exact: given the sample sd s, equivalence is shown when the mean lies in
    ``±(tolerance − c·s/√n)`` (c the one-sided critical t, n − 1 degrees of freedom); the
    power is that normal probability averaged over ``(n − 1)s²/sd² ~ χ²(n − 1)``.
    """
    if n < 2:
        return 0.0
    if sd <= 0:
        raise ValueError(f"sd must be > 0, got {sd}")
    df = n - 1
    crit = stats.t.ppf(1 - alpha, df)
    se = sd / math.sqrt(n)

    def given(v: float) -> float:
        half = tolerance - crit * sd * math.sqrt(v / df) / math.sqrt(n)
        if half <= 0:
            return 0.0
        inside = stats.norm.cdf((half - difference) / se) - stats.norm.cdf(
            (-half - difference) / se
        )
        return float(inside * stats.chi2.pdf(v, df))

    # Equivalence needs s < tolerance·√n / c: no mass beyond that.
    top = df * (tolerance * math.sqrt(n) / (crit * sd)) ** 2
    value, _ = integrate.quad(given, 0.0, top, limit=200)
    return float(min(1.0, max(0.0, value)))


def sign_test_power(
    n: int,
    p_for: float,
    *,
    alpha: float = 0.05,
    p_against: float | None = None,
    two_sided: bool = True,
) -> float:
    """Power of the exact sign test (McNemar's for paired 0/1 outcomes) over ``n`` pairs.

    Each pair favours the claim with probability ``p_for``, goes against it with
    ``p_against`` (default ``1 − p_for``), else ties (left out by the test). Exact: the sum,
    over every count of for/against pairs, of its multinomial probability when the test
    rejects in the claim's direction.
    """
    p_against = 1.0 - p_for if p_against is None else p_against
    p_tie = max(0.0, 1.0 - p_for - p_against)
    power = 0.0
    for discordant in range(1, n + 1):
        ties = stats.binom.pmf(n - discordant, n, p_tie)
        if ties == 0:
            continue
        share = p_for / (p_for + p_against) if p_for + p_against > 0 else 0.0
        level = alpha / 2 if two_sided else alpha
        k = _smallest_upper(discordant, 0.5, level)
        power += ties * stats.binom.sf(k - 1, discordant, share)
    return float(power)


def binomial_power(
    trials: int,
    null_rate: float,
    true_rate: float,
    *,
    alpha: float = 0.05,
    alternative: str = "greater",
) -> float:
    """Power of the one-sided exact binomial test of ``null_rate`` over ``trials`` trials
    when the true rate is ``true_rate`` (``"greater"``: the claim is rate ≥ ``null_rate``)."""
    if alternative == "greater":
        k = _smallest_upper(trials, null_rate, alpha)
        return float(stats.binom.sf(k - 1, trials, true_rate))
    # The mirror image: failures in place of successes.
    k = _smallest_upper(trials, 1.0 - null_rate, alpha)
    return float(stats.binom.sf(k - 1, trials, 1.0 - true_rate))


def _smallest_upper(n: int, rate: float, level: float) -> int:
    """The smallest k with P(X ≥ k) < ``level`` for X ~ Binomial(n, rate) (the exact test's
    rejection region; n + 1 when there is none)."""
    for k in range(n + 1):
        if stats.binom.sf(k - 1, n, rate) < level:
            return k
    return n + 1


@dataclasses.dataclass(frozen=True)
class PowerAt:
    """The power of a claim's test at one preset, from a pilot's spread (``Claim.paper_power``:
    at the paper preset, for a claim ``decided_at`` it only).

    Attributes:
      test: the test the verdict runs there: ``"paired t"``, ``"welch"``, ``"one-sided t"``
        (``t_test_power``), ``"tost"`` (``tost_power``), ``"sign"`` (``sign_test_power``,
        two-sided) or ``"binomial"`` (``binomial_power``, one-sided ``"greater"``).
      n: the samples at that preset (per arm for ``"welch"``; trials for ``"binomial"``).
      effect: the effect worth reporting: the difference of means (t-tests), the true
        distance from the band's centre (``"tost"``), the chance a pair favours the claim
        (``"sign"``), the true rate (``"binomial"``).
      pilot: where the spread (or the rates) come from, in a few words: a run that is not
        the judged one.
      sd: the pilot's standard deviation of one sample (t-tests, TOST).
      tolerance: the band's half-width (``"tost"``).
      against: the chance a pair goes against the claim (``"sign"``; ``None``:
        ``1 − effect``).
      null_rate: the bound (``"binomial"``).
    """

    test: str
    n: int
    effect: float
    pilot: str
    sd: float = 0.0
    tolerance: float = 0.0
    against: float | None = None
    null_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.test not in POWER_TESTS:
            raise ValueError(f"test must be one of {POWER_TESTS}, got {self.test!r}")
        if not self.pilot:
            raise ValueError("a power calculation names its pilot")

    @property
    def value(self) -> float:
        """The power (0 for fewer than 2 samples: never decisive)."""
        if self.n < 2:
            return 0.0
        if self.test in ("paired t", "welch", "one-sided t"):
            return t_test_power(
                self.n,
                self.effect,
                self.sd,
                two_sample=self.test == "welch",
                one_sided=self.test == "one-sided t",
            )
        if self.test == "tost":
            return tost_power(self.n, self.effect, self.tolerance, self.sd)
        if self.test == "sign":
            return sign_test_power(self.n, self.effect, p_against=self.against)
        return binomial_power(self.n, self.null_rate, self.effect)
