"""The verdict rule against ``scipy.stats`` on hand-made samples (and closed forms where
scipy's answer is undefined: n < 3, zero variance, non-finite values)."""

import numpy as np
import pytest
from scipy import stats

from jaxlab.report import verdict
from jaxlab.report.power import PowerAt
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
    p_tost = max(
        stats.ttest_1samp(OURS, 1.5, alternative="greater").pvalue,
        stats.ttest_1samp(OURS, 2.5, alternative="less").pvalue,
    )
    assert result.word == "supports" and result.test == verdict.TOST
    np.testing.assert_allclose(result.p, p_tost)
    np.testing.assert_allclose(result.effect, OURS.mean() - 2.0)
    # Far outside the band: the one-sided test that the mean is below paper − tol decides.
    far = verdict.verdict(claim, BASE, None)
    assert far.word == "contradicts"
    np.testing.assert_allclose(far.p, stats.ttest_1samp(BASE, 1.5, alternative="less").pvalue)
    # Inside the band but too noisy to show equivalence (the issue's GADC Texas case).
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
    # Faster than the allowed overhead is fine (the issue's SLWI case).
    overhead = Claim("x", metric="m", paper=2.4, tolerance=2.6, test="at_most")
    assert verdict.verdict(overhead, np.array([-10.0, -9.0, -11.0]), None).word == "supports"


def _twice(value: float) -> np.ndarray:
    """Two runs of a deterministic quantity that agree bit for bit."""
    return np.array([value, value])


def test_fewer_than_three_samples_is_never_decisive_unless_deterministic():
    # A deterministic claim is compared exactly, with no test, once two runs agree.
    up = Claim("x", metric="m", baseline="b")
    single = verdict.verdict(up, np.array([5.0]), np.array([1.0]))
    assert single.word == "inconclusive" and single.p is None and "< 3" in single.reason
    two = verdict.verdict(up, OURS, BASE[:2])  # the baseline has only two
    assert two.word == "inconclusive"
    exact = Claim("x", metric="m", baseline="b", deterministic=True)
    assert verdict.verdict(exact, _twice(5.0), _twice(1.0)).word == "supports"
    assert verdict.verdict(exact, _twice(1.0), _twice(5.0)).word == "contradicts"
    assert verdict.verdict(exact, _twice(3.0), _twice(3.0)).word == "inconclusive"
    band = Claim("x", metric="m", paper=840.0, tolerance=400.0, deterministic=True)
    assert verdict.verdict(band, _twice(900.0), None).word == "supports"
    assert verdict.verdict(band, _twice(440.0), None).word == "supports"  # closed band
    assert verdict.verdict(band, _twice(300.0), None).word == "contradicts"
    floor = Claim("x", metric="m", paper=2.0, test="at_least", deterministic=True)
    assert verdict.verdict(floor, _twice(2.0), None).word == "supports"  # ≥ includes =
    assert verdict.verdict(floor, _twice(1.5), None).word == "contradicts"
    # Runs of a deterministic claim must agree: otherwise the row fails, with the reason.
    many = verdict.verdict(floor, np.array([2.0, 2.0, 1.9, 2.0]), None)
    assert many.word == "failed" and "differ bit for bit" in many.reason


def test_zero_variance_takes_the_exact_sign_test_not_an_exact_comparison():
    paired = Claim("x", metric="m", baseline="b", paired=True)
    base = np.arange(1.0, 7.0)
    shifted = verdict.verdict(paired, base + 1.0, base)  # six equal differences
    assert shifted.test == verdict.SIGN and shifted.word == "supports"
    np.testing.assert_allclose(shifted.p, stats.binomtest(6, 6, 0.5).pvalue)
    three = verdict.verdict(paired, base[:3] + 1.0, base[:3])  # p = 0.25: not decisive
    assert three.word == "inconclusive" and three.p == 0.25
    assert verdict.verdict(paired, base, base).word == "inconclusive"
    welch = Claim("x", metric="m", baseline="b")
    both = verdict.verdict(welch, np.full(3, 2.0), np.full(4, 1.0))
    assert both.test == verdict.MANN_WHITNEY
    np.testing.assert_allclose(
        both.p, stats.mannwhitneyu(np.full(3, 2.0), np.full(4, 1.0), alternative="two-sided").pvalue
    )
    # One arm constant, the other not: Welch is defined and scipy decides.
    one = verdict.verdict(welch, np.full(5, 2.0), BASE)
    np.testing.assert_allclose(
        one.p, stats.ttest_ind(np.full(5, 2.0), BASE, equal_var=False).pvalue
    )
    matches = Claim("x", metric="m", paper=2.0, tolerance=0.0)
    assert verdict.verdict(matches, np.full(4, 2.0), None).word == "inconclusive"
    assert verdict.verdict(matches, np.full(6, 2.2), None).word == "contradicts"
    at_least = Claim("x", metric="m", paper=1.0, test="at_least")
    assert verdict.verdict(at_least, np.full(3, 1.1), None).test == verdict.SIGN


def test_the_issues_four_hand_made_cases():
    # 1. [0.95] * 3 against "at least 0.95" (a float mean of 0.9499999999999998).
    floor = Claim("x", metric="m", paper=0.95, test="at_least")
    assert verdict.verdict(floor, np.array([0.95, 0.95, 0.95]), None).word != "contradicts"
    exact_floor = Claim("x", metric="m", paper=0.95, test="at_least", deterministic=True)
    assert verdict.verdict(exact_floor, np.array([0.95, 0.95, 0.95]), None).word == "supports"
    # 2. A deterministic claim whose samples disagree.
    det = Claim("x", metric="m", paper=0.7, tolerance=0.1, deterministic=True)
    result = verdict.verdict(det, np.array([0.5, 0.9, 0.76]), None)
    assert result.word == "failed" and "differ bit for bit" in result.reason
    # 3. 0/1 outcomes, 4 of 5 against 0 of 5 on the same seeds: the exact sign (McNemar)
    #    test, p = 0.125, not a paired t-test.
    binary = Claim("x", metric="m", baseline="b", paired=True, samples="binary")
    ours, base = np.array([1.0, 1.0, 1.0, 1.0, 0.0]), np.zeros(5)
    sign = verdict.verdict(binary, ours, base)
    assert sign.word != "supports" and sign.test == verdict.SIGN
    np.testing.assert_allclose(sign.p, stats.binomtest(4, 4, 0.5).pvalue)  # 0.125
    # 4. Coverage of 20 in 20 against a nominal 0.95: exact binomial, p = 0.95^20 = 0.36.
    coverage = Claim("x", metric="m", threshold=0.95, test="at_least", samples="binary")
    cov = verdict.verdict(coverage, np.ones(20), None)
    assert cov.word != "supports" and cov.test == verdict.BINOMIAL
    np.testing.assert_allclose(cov.p, stats.binomtest(20, 20, 0.95, alternative="greater").pvalue)


def test_exact_tests_match_scipy():
    # Unpaired 0/1 outcomes: Fisher's exact test on the 2×2 table.
    unpaired = Claim("x", metric="m", baseline="b", samples="binary")
    ours, base = np.array([1.0] * 9 + [0.0]), np.array([1.0] * 2 + [0.0] * 8)
    fisher = verdict.verdict(unpaired, ours, base)
    ref = stats.fisher_exact([[9, 1], [2, 8]])
    assert fisher.test == verdict.FISHER and fisher.word == "supports"
    np.testing.assert_allclose(fisher.p, ref.pvalue)
    assert verdict.verdict(unpaired, base, ours).word == "contradicts"
    # Paired 0/1: McNemar's exact test = the sign test on the discordant pairs.
    paired = Claim("x", metric="m", baseline="b", paired=True, samples="binary")
    ours = np.array([1.0] * 9 + [0.0] * 3)
    base = np.array([0.0] * 8 + [1.0] * 2 + [0.0, 1.0])
    mcnemar = verdict.verdict(paired, ours, base)  # 8 discordant pairs for, 2 against
    np.testing.assert_allclose(mcnemar.p, stats.binomtest(8, 10, 0.5).pvalue)
    assert mcnemar.word == "inconclusive"
    strong = verdict.verdict(paired, np.ones(12), np.array([0.0] * 11 + [1.0]))
    np.testing.assert_allclose(strong.p, stats.binomtest(11, 11, 0.5).pvalue)
    assert strong.word == "supports"
    # Proportions of k independent trials: a binomial test on the pooled counts.
    rate = Claim("x", metric="m", threshold=0.5, test="at_least", samples="proportion", trials=10)
    shares = np.array([0.7, 0.8, 0.6, 0.9])
    binom = verdict.verdict(rate, shares, None)
    ref = stats.binomtest(30, 40, 0.5, alternative="greater")
    np.testing.assert_allclose(binom.p, ref.pvalue)
    ci = stats.binomtest(30, 40).proportion_ci(0.90, method="exact")  # two-sided 90 %
    np.testing.assert_allclose(binom.ci, (ci.low - 0.5, ci.high - 0.5))
    assert binom.ci_level == 0.90
    # Proportions whose trials share data: one trial per sample (conservative).
    shared = Claim("x", metric="m", threshold=0.5, test="at_least", samples="proportion")
    np.testing.assert_allclose(
        verdict.verdict(shared, shares, None).p,
        stats.binomtest(3, 4, 0.5, alternative="greater").pvalue,
    )
    # Exact binomial TOST.
    band = Claim("x", metric="m", threshold=0.5, tolerance=0.2, samples="proportion", trials=50)
    tost = verdict.verdict(band, np.full(8, 0.5), None)
    p = max(
        stats.binomtest(200, 400, 0.3, alternative="greater").pvalue,
        stats.binomtest(200, 400, 0.7, alternative="less").pvalue,
    )
    assert tost.test == verdict.BINOMIAL_TOST and tost.word == "supports"
    np.testing.assert_allclose(tost.p, p)
    # The one-sample sign test (continuous, no spread): ties with the bound are left out.
    at_most = Claim("x", metric="m", threshold=1.0, test="at_most")
    sign = verdict.verdict(at_most, np.full(6, 0.5), None)
    np.testing.assert_allclose(sign.p, stats.binomtest(0, 6, 0.5, alternative="less").pvalue)
    assert sign.word == "supports"


def test_count_samples_are_checked():
    binary = Claim("x", metric="m", baseline="b", samples="binary")
    bad = verdict.verdict(binary, np.array([0.0, 0.5, 1.0]), np.zeros(3))
    assert bad.word == "failed" and "neither 0 nor 1" in bad.reason
    trials = Claim("x", metric="m", threshold=0.5, test="at_least", samples="proportion", trials=4)
    assert verdict.verdict(trials, np.array([0.3, 0.5, 0.75]), None).word == "failed"
    with pytest.raises(ValueError, match="trials"):
        Claim("x", metric="m", threshold=0.5, test="at_least", trials=3)


def test_cis_are_at_the_tests_level():
    tost = verdict.verdict(Claim("x", metric="m", paper=2.0, tolerance=0.5), OURS, None)
    ref = stats.ttest_1samp(OURS, 2.0).confidence_interval(0.90)
    np.testing.assert_allclose(tost.ci, (ref.low - 2.0, ref.high - 2.0))
    assert tost.ci_level == 0.90
    one = verdict.verdict(Claim("x", metric="m", paper=1.5, test="at_least"), OURS, None)
    ref = stats.ttest_1samp(OURS, 1.5).confidence_interval(0.90)
    np.testing.assert_allclose(one.ci, (ref.low - 1.5, ref.high - 1.5))
    welch = verdict.verdict(Claim("x", metric="m", baseline="b"), OURS, BASE)
    assert welch.ci_level == 0.95
    # A "matches" supports row has its whole CI inside the band.
    for tol in (0.3, 0.5, 1.0):
        result = verdict.verdict(Claim("x", metric="m", paper=2.1, tolerance=tol), OURS, None)
        if result.word == "supports":
            assert -tol <= result.ci[0] and result.ci[1] <= tol


def test_draw_supports_only_by_equivalence_within_its_margin():
    # Bimodal keys (23.2 / 24.8): the sign TOST of the median against 24.84 ± margin.
    keys = np.array([23.2, 24.8, 24.9, 23.3, 24.7, 24.8, 23.2, 24.9])
    wide = Claim("x", metric="m", threshold=24.84, tolerance=2.0, test="draw")
    result = verdict.verdict(wide, keys, None)
    # All 8 inside 24.84 ± 2: p = max of the two one-sided sign tests = 0.5^8.
    assert result.word == "supports" and result.test == verdict.SIGN_TOST
    np.testing.assert_allclose(result.p, stats.binomtest(8, 8, 0.5, alternative="greater").pvalue)
    # A margin of 0.3: only the 24.8 mode is inside (5 of 8), not equivalence.
    narrow = Claim("x", metric="m", threshold=24.84, tolerance=0.3, test="draw")
    assert verdict.verdict(narrow, keys, None).word == "inconclusive"
    far = Claim("x", metric="m", threshold=30.0, tolerance=1.0, test="draw")
    assert verdict.verdict(far, keys, None).word == "contradicts"
    with pytest.raises(ValueError, match="needs a tolerance"):
        Claim("x", metric="m", threshold=1.0, test="draw")


def test_draw_with_more_spread_or_fewer_keys_is_not_easier_to_support():
    # The loophole: a wider spread (or fewer keys) widened a prediction interval and so
    # made "the value is a plausible draw" easier. Under the sign TOST it is harder.
    claim = Claim("x", metric="m", threshold=100.0, tolerance=5.0, test="draw")
    rng = np.random.default_rng(0)
    tight = 100.0 + rng.uniform(-2.0, 2.0, size=6)
    assert verdict.verdict(claim, tight, None).word == "supports"
    spread = 100.0 + np.array([-30.0, 25.0, -1.0, 1.0, 40.0, -20.0])  # mean ≈ 102.5
    assert verdict.verdict(claim, spread, None).word == "inconclusive"
    assert verdict.verdict(claim, tight[:4], None).word == "inconclusive"  # p = 1/16 > α


def test_thresholds_bounds_and_diagnostics():
    claim = Claim("x", metric="m", paper=2.4, threshold=5.0, test="at_most")
    assert claim.bound == 5.0 and claim.paper == 2.4
    assert Claim("x", metric="m", paper=2.5, tolerance=1.0, test="at_least").bound == 1.5
    ranged = Claim("x", metric="m", baseline="b", bounds=(0.0, 1.0))
    out = verdict.verdict(ranged, np.array([0.5, 1.2, 0.7]), np.array([0.1, 0.2, 0.3]))
    assert out.word == "failed" and "outside the metric's range" in out.reason
    with pytest.raises(ValueError, match="by construction"):
        Claim("x", metric="m", baseline="b", setting="holds by construction")
    built = Claim(
        "x", metric="m", baseline="b", by_construction=True, setting="holds by construction"
    )
    assert built.is_diagnostic("quick")
    weak = Claim("x", metric="m", baseline="b", setting="small", power=0.47)
    assert weak.setting_with_power.startswith("small; power at quick 0.47 (< 0.8)")
    assert Claim("x", metric="m", baseline="b", power=0.9).setting_with_power == ""
    power = PowerAt("paired t", 10, 1.0, "a pilot run", sd=1.0)
    paper_only = Claim(
        "x",
        metric="m",
        baseline="b",
        decided_at=("paper",),
        decided_at_reason="quick is too small",
        paper_power=power,
    )
    assert paper_only.is_diagnostic("quick") and not paper_only.is_diagnostic("paper")
    why = paper_only.diagnostic_reason("quick")
    assert "quick is too small" in why and f"power there {power.value:.2f}" in why
    assert paper_only.diagnostic_reason("paper") == ""
    with pytest.raises(ValueError, match="decided_at needs decided_at_reason and paper_power"):
        Claim("x", metric="m", baseline="b", decided_at=("paper",))
    with pytest.raises(ValueError, match="decided_at needs"):
        Claim("x", metric="m", baseline="b", decided_at=("paper",), decided_at_reason="r")


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


def test_pool_needs_one_sample_per_seed_or_a_named_unit():
    batched = [{"m": [1.0, 2.0, 3.0]}]  # one call, three batched seeds
    np.testing.assert_array_equal(verdict.pool(batched, "m"), [1.0, 2.0, 3.0])
    per_seed = [{"m": 1.0}, {"m": 2.0}]
    np.testing.assert_array_equal(verdict.pool(per_seed, "m"), [1.0, 2.0])
    rounds = [{"m": [1.0, 2.0]}, {"m": [3.0, 4.0]}]  # two samples per seed
    with pytest.raises(ValueError, match="unit_of_replication"):
        verdict.pool(rounds, "m")
    np.testing.assert_array_equal(verdict.pool(rounds, "m", "timing rounds"), [1, 2, 3, 4])
    with pytest.raises(KeyError, match="no metric 'q'"):
        verdict.pool(batched, "q")
