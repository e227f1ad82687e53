"""Power against a Monte Carlo simulation of the t-test itself (an independent check)."""

import numpy as np
from scipy import stats

from jaxlab.report.power import (
    binomial_power,
    seeds_for_power,
    sign_test_power,
    t_test_power,
    tost_power,
)


def _simulated_power(n, effect, sd, two_sample, trials=4000):
    rng = np.random.default_rng(0)
    if two_sample:
        a = rng.normal(effect, sd, (trials, n))
        b = rng.normal(0.0, sd, (trials, n))
        p = stats.ttest_ind(a, b, axis=1).pvalue
    else:
        p = stats.ttest_1samp(rng.normal(effect, sd, (trials, n)), 0.0, axis=1).pvalue
    return float(np.mean(p < 0.05))


def test_power_matches_simulation():
    for n, two_sample in [(5, False), (12, False), (8, True)]:
        exact = t_test_power(n, 1.0, 1.3, two_sample=two_sample)
        assert abs(exact - _simulated_power(n, 1.0, 1.3, two_sample)) < 0.03


def test_seed_count_is_the_first_reaching_power():
    n = seeds_for_power(0.8, 1.0)
    assert t_test_power(n, 0.8, 1.0) >= 0.8 > t_test_power(n - 1, 0.8, 1.0)
    assert seeds_for_power(0.8, 1.0, two_sample=True) > n
    assert seeds_for_power(1e-6, 1.0, maximum=50) == 50


def test_power_of_a_huge_effect_is_one_not_nan():
    assert 0.9999 < t_test_power(4, 0.05, 0.0088) <= 1.0  # not NaN (scipy nct.cdf's tail)
    assert seeds_for_power(0.05, 0.0088) == 3


def _closed_form_power(n, effect, sd, one_sided=False, alpha=0.05):
    """The t-test's power from its definition, without scipy's noncentral t: T = (Z + δ) /
    √(V/df) with Z ~ N(0, 1), V ~ χ²(df), integrated over V on a grid (numpy only)."""
    from math import erf, gamma, sqrt

    df, delta = n - 1, effect / sd * np.sqrt(n)
    crit = stats.t.ppf(1 - (alpha if one_sided else alpha / 2), df)
    v = np.linspace(1e-9, df + 60 * np.sqrt(2 * df) + 60, 200_001)
    density = v ** (df / 2 - 1) * np.exp(-v / 2) / (2 ** (df / 2) * gamma(df / 2))
    phi = np.vectorize(lambda x: 0.5 * (1 + erf(x / sqrt(2))))
    bound = crit * np.sqrt(v / df)
    inside = 1 - phi(bound - delta) + (0 if one_sided else phi(-bound - delta))
    return float(np.trapezoid(inside * density, v))


def test_power_matches_the_noncentral_t_from_its_definition():
    for n, effect, sd, one_sided in [
        (3, 1.0, 0.8, False),
        (5, 0.6, 1.0, True),
        (10, 0.3, 1.0, False),
    ]:
        exact = t_test_power(n, effect, sd, one_sided=one_sided)
        assert abs(exact - _closed_form_power(n, effect, sd, one_sided)) < 2e-3


def test_two_sided_power_is_below_one_sided():
    assert t_test_power(3, 1.0, 1.0) < t_test_power(3, 1.0, 1.0, one_sided=True)


def test_tost_power_matches_simulation():
    rng = np.random.default_rng(1)
    n, diff, tol, sd, trials = 8, 0.2, 1.0, 0.9, 4000
    x = rng.normal(diff, sd, (trials, n))
    low = stats.ttest_1samp(x, -tol, alternative="greater", axis=1).pvalue
    high = stats.ttest_1samp(x, tol, alternative="less", axis=1).pvalue
    simulated = float(np.mean(np.maximum(low, high) < 0.05))
    assert abs(tost_power(n, diff, tol, sd) - simulated) < 0.03


def test_exact_count_powers_by_enumeration():
    # The sign test over n pairs that all favour the claim: rejects iff 2·0.5^n < α.
    assert sign_test_power(5, 1.0) == 0.0 and sign_test_power(6, 1.0) == 1.0
    # Enumerated: every count of "for" pairs, with the test's own p-value.
    n, q = 9, 0.8
    brute = sum(
        stats.binom.pmf(k, n, q)
        for k in range(n + 1)
        if stats.binomtest(k, n, 0.5).pvalue < 0.05 and k > n / 2
    )
    np.testing.assert_allclose(sign_test_power(n, q), brute)
    # Coverage against 0.95: 20 trials can never reject; 59 can.
    assert binomial_power(20, 0.95, 1.0) == 0.0 and binomial_power(59, 0.95, 1.0) == 1.0
    brute = sum(
        stats.binom.pmf(k, 80, 0.99)
        for k in range(81)
        if stats.binomtest(k, 80, 0.95, alternative="greater").pvalue < 0.05
    )
    np.testing.assert_allclose(binomial_power(80, 0.95, 0.99), brute)
    brute = sum(
        stats.binom.pmf(k, 40, 0.2)
        for k in range(41)
        if stats.binomtest(k, 40, 0.4, alternative="less").pvalue < 0.05
    )
    np.testing.assert_allclose(binomial_power(40, 0.4, 0.2, alternative="less"), brute)
