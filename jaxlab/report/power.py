"""Seed counts from a power calculation, made before a run (``scipy.stats`` only).

A comparative claim's seed count is chosen so that a t-test at level ``alpha`` detects the
effect worth reporting (the paper's effect, or the smallest one worth a row) with
probability ``power``, given the spread of a pilot run. The calculation goes in the
experiment config's docstring; seeds are never raised after a verdict is seen.

    n = seeds_for_power(effect=2.0, sd=1.5)               # two-sided, paired / one-sample
    n = seeds_for_power(effect=2.0, sd=1.5, two_sample=True)   # Welch, n per arm
"""

from __future__ import annotations

import math

from scipy import stats


def t_test_power(n: int, effect: float, sd: float, *, alpha: float = 0.05,
                 two_sample: bool = False, one_sided: bool = False) -> float:
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


def seeds_for_power(effect: float, sd: float, *, alpha: float = 0.05, power: float = 0.8,
                    two_sample: bool = False, one_sided: bool = False,
                    minimum: int = 3, maximum: int = 1000) -> int:
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
        if t_test_power(n, effect, sd, alpha=alpha, two_sample=two_sample,
                        one_sided=one_sided) >= power:
            return n
    return maximum
