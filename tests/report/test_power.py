"""Power against a Monte Carlo simulation of the t-test itself (an independent check)."""

import numpy as np
from scipy import stats

from jaxlab.report.power import seeds_for_power, t_test_power


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
    assert 0.9999 < t_test_power(4, 0.05, 0.0088) <= 1.0  # was NaN (scipy nct.cdf tail)
    assert seeds_for_power(0.05, 0.0088) == 3
