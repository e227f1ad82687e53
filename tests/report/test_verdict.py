"""The verdict rule against ``scipy.stats`` on hand-made samples (and closed forms where
scipy's answer is undefined: n < 3, zero variance, non-finite values)."""

import numpy as np
import pytest
from scipy import stats

from jaxlab.report import verdict
from jaxlab.report.registry import Claim

OURS = np.array([2.0, 2.3, 1.8, 2.1, 2.4])
BASE = np.array([1.1, 1.0, 1.3, 0.8, 1.2])


def test_welch_matches_scipy_and_follows_the_direction():
    up = Claim("x", metric="m", baseline="b")
    result = verdict.verdict(up, OURS, BASE)
    ref = stats.ttest_ind(OURS, BASE, equal_var=False)
    assert result.word == "supports" and result.test == verdict.WELCH and result.n == 5
    np.testing.assert_allclose(result.p, ref.pvalue)
    np.testing.assert_allclose(result.effect, OURS.mean() - BASE.mean())
    np.testing.assert_allclose(result.ci, tuple(ref.confidence_interval(0.95)))
    down = Claim("x", metric="m", baseline="b", higher_is_better=False)
    flipped = verdict.verdict(down, OURS, BASE)
    assert flipped.word == "contradicts"
    np.testing.assert_allclose(flipped.effect, -(OURS.mean() - BASE.mean()))
    low, high = ref.confidence_interval(0.95)
    np.testing.assert_allclose(flipped.ci, (-high, -low))
    np.testing.assert_allclose(flipped.p, ref.pvalue)


def test_welch_inconclusive_when_p_is_above_alpha():
    noisy = np.array([0.0, 3.0, 1.5, 2.5, -0.5])
    result = verdict.verdict(Claim("x", metric="m", baseline="b"), noisy, BASE)
    assert stats.ttest_ind(noisy, BASE, equal_var=False).pvalue > 0.05
    assert result.word == "inconclusive" and result.ci[0] < 0 < result.ci[1]


def test_paired_matches_scipy_and_removes_shared_variance():
    split = np.array([60.0, 75.0, 68.0, 80.0, 71.0])
    base, ours = split, split + np.array([0.4, 0.6, 0.5, 0.45, 0.55])
    unpaired = verdict.verdict(Claim("x", metric="m", baseline="b"), ours, base)
    paired_claim = Claim("x", metric="m", baseline="b", paired=True)
    paired = verdict.verdict(paired_claim, ours, base)
    ref = stats.ttest_rel(ours, base)
    assert unpaired.word == "inconclusive"
    assert paired.word == "supports" and paired.test == verdict.PAIRED
    np.testing.assert_allclose(paired.p, ref.pvalue)
    np.testing.assert_allclose(paired.ci, tuple(ref.confidence_interval(0.95)))
    assert verdict.verdict(paired_claim, base, ours).word == "contradicts"
    with pytest.raises(ValueError, match="one baseline per sample"):
        verdict.verdict(paired_claim, ours, base[:3])


def test_tost_matches_two_one_sided_scipy_tests():
    claim = Claim("x", metric="m", paper=2.0, tolerance=0.5)
    result = verdict.verdict(claim, OURS, None)
    p_tost = max(stats.ttest_1samp(OURS, 1.5, alternative="greater").pvalue,
                 stats.ttest_1samp(OURS, 2.5, alternative="less").pvalue)
    assert result.word == "supports" and result.test == verdict.TOST
    np.testing.assert_allclose(result.p, p_tost)
    np.testing.assert_allclose(result.effect, OURS.mean() - 2.0)
    # Far outside the band: the one-sided test that the mean is below paper − tol decides.
    far = verdict.verdict(claim, BASE, None)
    assert far.word == "contradicts"
    np.testing.assert_allclose(far.p, stats.ttest_1samp(BASE, 1.5, alternative="less").pvalue)
    # Inside the band but too noisy to show equivalence (the GADC Texas case).
    texas = np.array([66.7, 88.9, 77.8, 61.1, 94.4, 72.2, 83.3, 66.7, 88.9, 77.8])
    wide = Claim("x", metric="m", paper=77.8, tolerance=3.0)
    assert verdict.verdict(wide, texas, None).word == "inconclusive"


def test_at_least_and_at_most_are_one_sided():
    at_least = Claim("x", metric="m", paper=1.5, test="at_least")
    result = verdict.verdict(at_least, OURS, None)
    ref = stats.ttest_1samp(OURS, 1.5, alternative="greater")
    assert result.word == "supports" and result.test == verdict.ONE_SIDED
    np.testing.assert_allclose(result.p, ref.pvalue)
    np.testing.assert_allclose(result.effect, OURS.mean() - 1.5)
    assert verdict.verdict(at_least, BASE, None).word == "contradicts"
    # The tolerance shifts the threshold: ≥ 2.5 − 1.0.
    shifted = Claim("x", metric="m", paper=2.5, tolerance=1.0, test="at_least")
    assert verdict.verdict(shifted, OURS, None).word == "supports"
    # Over-coverage is not a failure of an "at least 0.95" claim.
    coverage = Claim("x", metric="m", paper=0.95, test="at_least")
    assert verdict.verdict(coverage, np.array([0.99, 0.98, 1.0, 0.97]), None).word == "supports"
    at_most = Claim("x", metric="m", paper=1.5, test="at_most", higher_is_better=False)
    low = verdict.verdict(at_most, BASE, None)
    assert low.word == "supports"
    np.testing.assert_allclose(low.p, stats.ttest_1samp(BASE, 1.5, alternative="less").pvalue)
    np.testing.assert_allclose(low.effect, 1.5 - BASE.mean())
    assert verdict.verdict(at_most, OURS, None).word == "contradicts"
    # Faster than the allowed overhead is fine (the SLWI case).
    overhead = Claim("x", metric="m", paper=2.4, tolerance=2.6, test="at_most")
    assert verdict.verdict(overhead, np.array([-10.0, -9.0, -11.0]), None).word == "supports"


def test_fewer_than_three_samples_is_never_decisive_unless_deterministic():
    # A deterministic claim is compared exactly at any n (no test).
    up = Claim("x", metric="m", baseline="b")
    single = verdict.verdict(up, np.array([5.0]), np.array([1.0]))
    assert single.word == "inconclusive" and single.p is None and "< 3" in single.reason
    two = verdict.verdict(up, OURS, BASE[:2])  # the baseline has only two
    assert two.word == "inconclusive"
    exact = Claim("x", metric="m", baseline="b", deterministic=True)
    assert verdict.verdict(exact, np.array([5.0]), np.array([1.0])).word == "supports"
    assert verdict.verdict(exact, np.array([1.0]), np.array([5.0])).word == "contradicts"
    assert verdict.verdict(exact, np.array([1.0]), np.array([1.0])).word == "inconclusive"
    band = Claim("x", metric="m", paper=840.0, tolerance=400.0, deterministic=True)
    assert verdict.verdict(band, np.array([900.0]), None).word == "supports"
    assert verdict.verdict(band, np.array([440.0]), None).word == "supports"  # closed band
    assert verdict.verdict(band, np.array([300.0]), None).word == "contradicts"
    floor = Claim("x", metric="m", paper=1.0, test="at_least", deterministic=True)
    assert verdict.verdict(floor, np.array([1.0]), None).word == "supports"  # ≥ includes =
    assert verdict.verdict(floor, np.array([0.5]), None).word == "contradicts"
    assert verdict.verdict(floor, np.array([1.5, 1.0]), None).word == "supports"
    many = verdict.verdict(floor, np.array([1.0, 1.0, 0.9, 1.0]), None)  # one miss of four
    assert many.word == "contradicts" and many.test == verdict.EXACT


def test_zero_variance_is_compared_exactly():
    paired = Claim("x", metric="m", baseline="b", paired=True)
    base = np.array([1.0, 2.0, 3.0])
    shifted = verdict.verdict(paired, base + 1.0, base)
    assert shifted.word == "supports" and shifted.test == verdict.EXACT and shifted.p == 0.0
    assert verdict.verdict(paired, base, base).word == "inconclusive"
    welch = Claim("x", metric="m", baseline="b")
    assert verdict.verdict(welch, np.full(3, 2.0), np.full(4, 1.0)).word == "supports"
    assert verdict.verdict(welch, np.full(3, 1.0), np.full(4, 1.0)).word == "inconclusive"
    # One arm constant, the other not: Welch is defined and scipy decides.
    one = verdict.verdict(welch, np.full(5, 2.0), BASE)
    np.testing.assert_allclose(one.p, stats.ttest_ind(np.full(5, 2.0), BASE,
                                                      equal_var=False).pvalue)
    matches = Claim("x", metric="m", paper=1.0, tolerance=0.0)
    assert verdict.verdict(matches, np.ones(4), None).word == "supports"
    assert verdict.verdict(matches, np.full(4, 1.2), None).word == "contradicts"
    at_least = Claim("x", metric="m", paper=1.0, test="at_least")
    assert verdict.verdict(at_least, np.full(3, 1.1), None).word == "supports"


def test_non_finite_values_fail_with_a_reason():
    up = Claim("x", metric="m", baseline="b")
    nan = verdict.verdict(up, np.array([1.0, np.nan, 2.0]), BASE)
    assert nan.word == "failed" and "non-finite" in nan.reason and "ours" in nan.reason
    inf = verdict.verdict(up, OURS, np.array([1.0, np.inf, 2.0]))
    assert inf.word == "failed" and "baseline" in inf.reason
    paper = Claim("x", metric="m", paper=1.0, tolerance=0.1)
    assert verdict.verdict(paper, np.array([np.nan]), None).word == "failed"
    assert verdict.verdict(up, np.array([]), BASE).word == "failed"


def test_diagnostic_without_a_comparison_is_reported_not_judged():
    claim = Claim("x", metric="m", diagnostic=True)
    result = verdict.verdict(claim, OURS, None)
    assert result.word == "inconclusive" and "diagnostic" in result.reason


def test_claims_that_cannot_be_tallied_are_refused():
    with pytest.raises(ValueError, match="neither a baseline nor a paper"):
        Claim("x", metric="m")
    with pytest.raises(ValueError, match="needs a baseline"):
        Claim("x", metric="m", paper=1.0, test="better")
    with pytest.raises(ValueError, match="needs a paper number"):
        Claim("x", metric="m", baseline="b", test="at_least")
    with pytest.raises(ValueError, match="needs a tolerance"):
        Claim("x", metric="m", paper=1.0)
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        Claim("x", metric="m", paper=1.0, tolerance=-1.0)
    with pytest.raises(ValueError, match="test must be one of"):
        Claim("x", metric="m", paper=1.0, test="equal")
    with pytest.raises(ValueError, match="pass its samples"):
        verdict.verdict(Claim("x", metric="m", baseline="b"), OURS, None)


def test_pool_flattens_batched_seeds_in_order():
    results = [{"m": [1.0, 2.0]}, {"m": 3.0}]
    np.testing.assert_array_equal(verdict.pool(results, "m"), [1.0, 2.0, 3.0])
    with pytest.raises(KeyError, match="no metric 'q'"):
        verdict.pool(results, "q")
