"""Hand-made cases of the verdict rule's loopholes, each refused or decided by the right
test (references from ``scipy.stats``): samples censored at a cap under a t-test,
undeclared 0/1 outcomes, a deterministic claim with one run, batched seeds pooled, and a
claim decided only at the paper preset without its reason and power there."""

import ml_collections
import numpy as np
import pytest
from scipy import stats

from jaxlab.report import markdown, registry, verdict
from jaxlab.report.power import PowerAt
from jaxlab.report.registry import Claim, Experiment, Paper

CAP = 801.0  # a jump step that never came counts as the run length + 1
JUMPED = np.array([371.0, 328.0, 297.0, 358.0, 801.0])  # ours; one seed never jumped
NEVER = np.full(5, CAP)  # the baseline never jumped on any seed


def test_capped_samples_take_the_sign_test_not_a_t_test():
    claim = Claim(
        "x",
        metric="m",
        baseline="b",
        paired=True,
        higher_is_better=False,
        bounds=(0.0, np.inf),
        cap=lambda config: config.num_steps + 1,
    )
    # Read as values, the capped differences look significant to a paired t-test ...
    assert stats.ttest_rel(JUMPED, NEVER).pvalue < 0.05
    result = verdict.verdict(claim, JUMPED, NEVER, cap=CAP)
    # ... but 4 pairs jumped first and one tied at the cap: the sign test, p = 2 · 0.5^4.
    assert result.test == verdict.SIGN and result.word == "inconclusive"
    np.testing.assert_allclose(result.p, stats.binomtest(4, 4, 0.5).pvalue)
    assert "cap 801" in result.reason and "censored" in result.reason
    # Eight pairs that all jumped first decide it.
    more = verdict.verdict(claim, np.full(8, 300.0), np.full(8, CAP), cap=CAP)
    assert more.word == "supports" and more.test == verdict.SIGN
    # Without the cap's value the same numbers go to the t-test: the cap must be declared.
    assert verdict.verdict(claim, JUMPED, NEVER).test == verdict.PAIRED


def test_samples_at_an_edge_of_the_range_are_censored():
    # Unpaired arms with a ceiling: Mann-Whitney U (valid with ties at a common cap).
    ceiling = Claim("x", metric="m", baseline="b", bounds=(0.0, 1.0))
    ours, base = np.array([1.0, 1.0, 0.97, 1.0, 0.99]), np.array([0.6, 0.7, 0.65, 0.8, 0.75])
    result = verdict.verdict(ceiling, ours, base)
    assert result.test == verdict.MANN_WHITNEY and "ceiling 1" in result.reason
    ref = stats.mannwhitneyu(ours, base, alternative="two-sided").pvalue
    np.testing.assert_allclose(result.p, ref)
    assert result.word == "supports"
    # A bound against a floor: the sign test against the bound, not the one-sided t-test.
    floor = Claim("x", metric="m", threshold=0.1, test="at_least", bounds=(0.0, 1.0))
    at_floor = verdict.verdict(floor, np.array([0.0, 0.3, 0.4, 0.5, 0.2]), None)
    assert at_floor.test == verdict.SIGN
    np.testing.assert_allclose(at_floor.p, stats.binomtest(4, 5, 0.5, alternative="greater").pvalue)
    # Inside the range, the t-tests run as before.
    inside = verdict.verdict(ceiling, ours * 0.9, base)
    assert inside.test == verdict.WELCH


def test_undeclared_zero_one_samples_are_refused():
    ours, base = np.array([1.0, 1.0, 1.0, 1.0, 0.0]), np.zeros(5)
    undeclared = Claim("x", metric="m", baseline="b", paired=True)
    with pytest.raises(ValueError, match="declare samples='binary'"):
        verdict.verdict(undeclared, ours, base)
    # Declared, the exact sign (McNemar) test: p = 0.125, not supports.
    declared = Claim("x", metric="m", baseline="b", paired=True, samples="binary")
    result = verdict.verdict(declared, ours, base)
    assert result.word == "inconclusive" and result.test == verdict.SIGN
    np.testing.assert_allclose(result.p, 0.125)
    # In a report the refusal is the row's error, and the row fails.
    experiment = Experiment(name="e", claims=(undeclared,), module="unused")
    record = {"experiment": experiment, "results": [{"m": ours, "b": base}], "error": None}
    row = markdown.claim_row(experiment, undeclared, record)
    assert row["verdict"] == "failed" and "declare samples" in row["error"]


def test_a_deterministic_claim_needs_two_runs_that_agree_bit_for_bit():
    claim = Claim("x", metric="m", paper=19.96, tolerance=0.5, deterministic=True)
    one = verdict.verdict(claim, np.array([20.0]), None)
    assert one.word == "inconclusive" and "2 runs must agree" in one.reason
    two = verdict.verdict(claim, np.array([20.0, 20.0]), None)
    assert two.word == "supports" and two.test == verdict.EXACT
    drift = np.array([20.0, np.nextafter(20.0, 21.0)])  # one ulp apart: not bit for bit
    assert np.isclose(drift[0], drift[1])
    differ = verdict.verdict(claim, drift, None)
    assert differ.word == "failed" and "differ bit for bit" in differ.reason
    # The baseline of a deterministic comparison needs its two runs too.
    better = Claim("x", metric="m", baseline="b", deterministic=True)
    assert verdict.verdict(better, np.array([5.0, 5.0]), np.array([9.0])).word == "inconclusive"


def test_batched_seeds_are_one_sample_per_seed():
    six = [{"m": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}]  # one call: 3 seeds × 2 samples each
    with pytest.raises(ValueError, match="6 samples from 3 seeds"):
        verdict.pool(six, "m", seeds=3)
    np.testing.assert_array_equal(verdict.pool(six, "m", seeds=6), np.arange(1.0, 7.0))
    np.testing.assert_array_equal(verdict.pool(six, "m", "splits", seeds=3), np.arange(1.0, 7.0))
    # An arm run on the first seeds only is still one sample per seed.
    np.testing.assert_array_equal(verdict.pool([{"m": [1.0, 2.0]}], "m", seeds=3), [1.0, 2.0])
    # Through a report row: the record's seed count is enforced.
    claim = Claim("x", metric="m", paper=3.0, tolerance=1.0)
    experiment = Experiment(name="e", claims=(claim,), module="unused")
    record = {"experiment": experiment, "results": six, "error": None, "num_seeds": 3}
    row = markdown.claim_row(experiment, claim, record)
    assert row["verdict"] == "failed" and "unit_of_replication" in row["error"]


def test_power_at_the_paper_preset_matches_scipy():
    # Binomial: the smallest k with P(X ≥ k | 0.95) < α over 100 trials, at a true 0.99.
    power = PowerAt("binomial", 100, 0.99, "a pilot", null_rate=0.95)
    k = next(k for k in range(101) if stats.binom.sf(k - 1, 100, 0.95) < 0.05)
    np.testing.assert_allclose(power.value, stats.binom.sf(k - 1, 100, 0.99))
    # Sign test, every pair for the claim with probability 1: rejects whenever n ≥ 6.
    assert PowerAt("sign", 6, 1.0, "a pilot", against=0.0).value == pytest.approx(1.0)
    assert PowerAt("sign", 5, 1.0, "a pilot", against=0.0).value == 0.0  # p ≥ 0.0625
    assert PowerAt("paired t", 1, 1.0, "a pilot", sd=1.0).value == 0.0  # one sample
    with pytest.raises(ValueError, match="names its pilot"):
        PowerAt("sign", 10, 0.5, "")


def _registered_paper_only() -> list[tuple[Experiment, Claim]]:
    return [
        (experiment, claim)
        for experiment in registry.discover().values()
        for claim in experiment.claims
        if claim.decided_at is not None
    ]


def test_every_paper_only_claim_has_its_reason_and_power_at_the_paper_preset():
    found = _registered_paper_only()
    assert found
    for experiment, claim in found:
        where = f"{experiment.name}: {claim.name!r}"
        assert claim.decided_at == ("paper",), where
        assert claim.decided_at_reason and claim.paper_power is not None, where
        # The power is for the paper preset's own sample count.
        paper = experiment.get_config("paper")
        assert claim.paper_power.n == paper.num_seeds, where
        why = claim.diagnostic_reason("quick")
        assert claim.decided_at_reason in why, where
        if claim.paper_power.value < registry.LOW_POWER:
            assert "inconclusive expected there too" in why, where


def test_diagnostic_rows_say_why():
    paper = Paper(id="p", title="t", authors="a")
    claims = (
        Claim("ablation", metric="m", baseline="b", diagnostic=True),
        Claim("built", metric="m", baseline="b", by_construction=True),
        Claim(
            "later",
            metric="m",
            baseline="b",
            decided_at=("paper",),
            decided_at_reason="too few seeds",
            paper_power=PowerAt("sign", 10, 0.4, "a pilot", against=0.0),
        ),
    )
    experiment = Experiment(name="e", claims=claims, paper=paper, module="unused")
    results = [{"m": [2.0, 2.1, 2.2], "b": [1.0, 1.1, 1.2]}]
    record = {"experiment": experiment, "results": results, "error": None}
    rows = markdown.claim_rows([record], "quick")
    reasons = [row["diagnostic_reason"] for row in rows]
    assert "not a claim of the paper" in reasons[0]
    assert "by construction" in reasons[1]
    assert "too few seeds" in reasons[2] and "power there 0.17" in reasons[2]
    lines = markdown.claim_tables(rows)
    assert markdown.DIAGNOSTICS_HEADING in lines
    assert all("why a diagnostic" in line for line in lines[-3:])


def test_a_capped_claim_reads_its_cap_from_the_presets_config(monkeypatch):
    claim = Claim(
        "x",
        metric="m",
        baseline="b",
        paired=True,
        higher_is_better=False,
        bounds=(0.0, np.inf),
        cap=lambda config: config.num_steps + 1,
    )
    experiment = Experiment(name="e", claims=(claim,), module="unused")
    monkeypatch.setattr(
        Experiment, "get_config", lambda self, preset: ml_collections.ConfigDict({"num_steps": 800})
    )
    record = {"experiment": experiment, "results": [{"m": JUMPED, "b": NEVER}], "error": None}
    row = markdown.claim_row(experiment, claim, record, "quick")
    assert row["cap"] == CAP and row["test"] == verdict.SIGN


def test_every_paper_number_names_its_table_or_figure():
    unsourced = [
        f"{experiment.name}: {claim.metric}"
        for experiment in registry.discover().values()
        for claim in experiment.claims
        if claim.paper is not None and not claim.paper_source
    ]
    assert not unsourced, f"paper numbers without paper_source: {unsourced}"
