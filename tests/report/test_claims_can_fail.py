"""Every tallied claim can fail: its committed samples (``docs/results/quick``), shifted
across its threshold within the metric's feasible range (``Claim.bounds``), give *supports*
on one side and *contradicts* on the other, at the committed number of samples.

The shift keeps the committed spread, clipped to the range (the deviations from the mean;
for a paired claim, of the per-sample differences, split evenly between the arms around
each pair's midpoint) and moves the mean ``MARGIN`` critical values of its t-test past the
threshold, in standard errors (a fixed small step where the samples have no spread). The
range stops at the run's cap (``Claim.cap`` of the quick config); a shifted continuous sample
stops just inside the range's edges and the cap, so only committed samples on an edge (which
the verdict treats as censored: no t-test) make a row censored here. 0/1
outcomes and proportions are replayed at their extremes (all successes / all failures). A
claim fails here when a side cannot be reached inside its range or at its sample count: a
bound at the edge of the range, a band narrower than the committed spread allows, too few
seeds for an exact test to reach α. Such a claim is no test of the paper: fix it, or make it a
diagnostic (``by_construction`` or ``decided_at``). Diagnostics are exempt (never tallied).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from jaxlab.report import markdown, registry, verdict
from jaxlab.report.registry import Claim

MARGIN = 2.0  # the shift, in critical t values × standard errors past the threshold
RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results" / "quick"
PRESET = "quick"

EXPERIMENTS = registry.discover()
CLAIMS = [
    (name, claim)
    for name, experiment in EXPERIMENTS.items()
    for claim in experiment.claims
    if not claim.is_diagnostic(PRESET)
]


def _committed(name: str) -> dict[str, np.ndarray]:
    rows = json.loads((RESULTS / f"{name}.json").read_text())
    return {k: np.asarray(v, dtype=np.float64) for k, v in markdown.committed_samples(rows).items()}


def _step(deviations: np.ndarray, scale: float, two_sided: bool) -> float:
    """``MARGIN`` critical values of the t-test, in standard errors of ``deviations`` (a
    small fixed step when they have no spread)."""
    n = len(deviations)
    sd = float(np.std(deviations, ddof=1)) if n > 1 else 0.0
    if sd == 0 or n < 2:
        return 1e-3 * max(1.0, abs(scale))
    crit = stats.t.ppf(1 - verdict.ALPHA / (2 if two_sided else 1), n - 1)
    return MARGIN * crit * sd / np.sqrt(n)


def _cases(claim: Claim, ours: np.ndarray, base: np.ndarray | None) -> dict:
    """Samples meant to support and to contradict ``claim``: word → (ours, baseline)."""
    up = 1.0 if claim.higher_is_better else -1.0
    if claim.samples != "continuous":
        ones, zeros = np.ones_like(ours), np.zeros_like(ours)
        if claim.kind == "better":
            best, worst = (ones, zeros) if up > 0 else (zeros, ones)
            return {"supports": (best, worst), "contradicts": (worst, best)}
        if claim.kind == "at_least":
            return {"supports": (ones, None), "contradicts": (zeros, None)}
        return {"supports": (zeros, None), "contradicts": (ones, None)}
    if claim.kind == "better":
        if claim.paired:
            diffs, middle = ours - base, (ours + base) / 2
            dev, step = diffs - diffs.mean(), _step(diffs, float(np.mean(base)), True)
            cases = {}
            for word, s in (("supports", 1.0), ("contradicts", -1.0)):
                gap = s * up * step + dev
                cases[word] = (middle + gap / 2, middle - gap / 2)
            return cases
        scale = float(np.mean(base))
        step = 2 * max(_step(ours, scale, True), _step(base, scale, True))
        middle = (ours.mean() + base.mean()) / 2
        return {
            word: (
                middle + s * up * step / 2 + ours - ours.mean(),
                middle - s * up * step / 2 + base - base.mean(),
            )
            for word, s in (("supports", 1.0), ("contradicts", -1.0))
        }
    bound = float(claim.bound)
    dev = ours - ours.mean()
    if claim.kind == "matches":
        tol, step = float(claim.tolerance), _step(ours, bound, False)
        above = bound + tol + step + dev
        below = bound - tol - step + dev
        outside = above if np.all(above <= claim.feasible[1]) else below
        return {"supports": (bound + dev, None), "contradicts": (outside, None)}
    if claim.kind == "draw":
        # Every sample past the margin (the exact sign TOST's other side).
        past = float(claim.tolerance) + float(np.ptp(ours)) + 1e-3 * max(1.0, abs(bound))
        return {"supports": (bound + dev, None), "contradicts": (bound + past + dev, None)}
    sign, step = (1.0 if claim.kind == "at_least" else -1.0), _step(ours, bound, False)
    return {
        "supports": (bound + sign * step + dev, None),
        "contradicts": (bound - sign * step + dev, None),
    }


def _deterministic_cases(claim: Claim, ours: np.ndarray, base: np.ndarray | None) -> dict:
    """A deterministic claim's (agreeing) value moved to either side of its threshold."""
    up = 1.0 if claim.higher_is_better else -1.0
    one = np.ones(len(ours))
    if claim.kind == "better":
        value = float(base[0])
        step = 1e-3 * max(1.0, abs(value))
        return {
            "supports": ((value + up * step) * one, base),
            "contradicts": ((value - up * step) * one, base),
        }
    bound, step = float(claim.bound), 1e-3 * max(1.0, abs(float(claim.bound)))
    if claim.kind == "matches":
        above = bound + float(claim.tolerance) + step
        outside = above if above <= claim.feasible[1] else bound - float(claim.tolerance) - step
        return {"supports": (bound * one, None), "contradicts": (outside * one, None)}
    sign = 1.0 if claim.kind == "at_least" else -1.0
    return {
        "supports": ((bound + sign * step) * one, None),
        "contradicts": ((bound - sign * step) * one, None),
    }


def _inside(edge: float, direction: float) -> float:
    """``edge`` moved a relative 1e-6 into the range (an infinite edge stays)."""
    return edge + direction * 1e-6 * max(1.0, abs(edge)) if np.isfinite(edge) else edge


@pytest.mark.parametrize("name,claim", CLAIMS, ids=[f"{n}:{c.metric}" for n, c in CLAIMS])
def test_claim_can_support_and_contradict(name, claim):
    assert claim.metric != claim.baseline, f"{name}: {claim.name!r} compares a metric with itself"
    samples = _committed(name)
    assert claim.metric in samples, f"{name}: no committed samples of {claim.metric!r}"
    ours = samples[claim.metric]
    base = samples[claim.baseline] if claim.baseline else None
    make = _deterministic_cases if claim.deterministic else _cases
    low, high = claim.feasible
    cap = None
    if claim.cap is not None:
        cap = float(claim.cap(EXPERIMENTS[name].get_config(PRESET)))
        high = min(high, cap)
    if claim.deterministic:  # two runs that agree bit for bit
        ours = np.repeat(ours[:1], 2)
        base = None if base is None else np.repeat(base[:1], 2)
    if claim.samples == "continuous":
        # A continuous sample on an edge is censored (no t-test): shifted samples stop just
        # inside it, so the shift itself never censors a row whose samples are not.
        low, high = _inside(low, 1.0), _inside(high, -1.0)
    for word, (mine, theirs) in make(claim, ours, base).items():
        # Samples shifted past an edge of the range (or the cap) are put at the edge (the
        # spread the range allows there).
        mine = np.clip(mine, low, high)
        theirs = None if theirs is None else np.clip(theirs, low, high)
        result = verdict.verdict(claim, mine, theirs, cap)
        assert result.word == word, (
            f"{name}: {claim.name!r} ({claim.kind}, {result.test}) gives {result.word} on its "
            f"committed samples shifted to {word[:-1]} it, n = {len(ours)} "
            f"({result.reason or f'p = {result.p}'})"
        )


def test_every_tallied_claim_declares_its_range():
    undeclared = [f"{name}: {claim.metric}" for name, claim in CLAIMS if claim.bounds is None]
    assert not undeclared, f"claims without bounds=(low, high): {undeclared}"


def test_the_registry_has_claims():
    assert len(CLAIMS) > 100


def test_committed_samples_judged_now_keep_the_rules():
    """The committed samples, judged by the current rule and claims: no tallied row says
    "by construction"; only deterministic rows are decided "exactly"; a supports row of
    ``matches`` has its whole CI inside the band; every row has a threshold field."""
    for name, experiment in EXPERIMENTS.items():
        rows = json.loads((RESULTS / f"{name}.json").read_text())
        for row in markdown.rejudge(experiment, rows, PRESET):
            where = f"{name}: {row['claim']!r}"
            assert "threshold" in row, where
            if row["diagnostic"]:
                continue
            assert "by construction" not in row["setting"].lower(), where
            if row["test"] == verdict.EXACT:
                assert row["deterministic"], where
            if (
                row["kind"] == "matches"
                and row["verdict"] == "supports"
                and row["ci_low"] is not None
            ):
                tol = row["tolerance"]
                assert -tol <= row["ci_low"] and row["ci_high"] <= tol, where
