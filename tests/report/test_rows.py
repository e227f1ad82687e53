"""Result rows: samples, the deciding test and its numbers; diagnostics apart from the tally;
old rows (written before rows recorded samples) still render in the README block."""

import json

import ml_collections
import numpy as np
import pytest
from scipy import stats

from jaxlab.report import markdown, readme, registry
from jaxlab.report.power import PowerAt
from jaxlab.report.registry import Claim, Experiment, Paper

PAPER = Paper(id="p", title="A paper", authors="A. Author")
CLAIMS = (
    Claim("beats", metric="m", baseline="b", paired=True, paper=3.0),
    Claim("ablation", metric="m", baseline="b", diagnostic=True),
    Claim("broken", metric="nan_metric", paper=1.0, tolerance=0.1),
    Claim("exact", metric="count", baseline="count_b", deterministic=True, higher_is_better=False),
)
EXPERIMENT = Experiment(name="e", claims=CLAIMS, paper=PAPER, module="unused")
RESULTS = [
    {
        "m": [2.0, 2.2, 1.9],
        "b": [1.0, 1.1, 1.05],
        "nan_metric": [np.nan, 1.0, 1.0],
        "count": [5.0, 5.0, 5.0],
        "count_b": [9.0, 9.0, 9.0],
    }
]  # three batched seeds
RECORD = {
    "experiment": EXPERIMENT,
    "results": RESULTS,
    "error": None,
    "seconds": 3.0,
    "budget": 10.0,
}


@pytest.fixture
def three_seeds(monkeypatch):
    """The fake experiment's config: three seeds (``rejudge`` reads ``num_seeds``)."""
    monkeypatch.setattr(
        Experiment, "get_config", lambda self, preset: ml_collections.ConfigDict({"num_seeds": 3})
    )


def _rows():
    return {r["claim"]: r for r in markdown.claim_rows([RECORD])}


def test_rows_record_samples_test_and_numbers():
    rows = _rows()
    beats = rows["beats"]
    assert beats["ours_samples"] == [2.0, 2.2, 1.9] and beats["num_seeds"] == 3
    assert beats["baseline_samples"] == [1.0, 1.1, 1.05]
    ref = stats.ttest_rel([2.0, 2.2, 1.9], [1.0, 1.1, 1.05])
    assert beats["test"] == "paired t-test" and beats["verdict"] == "supports"
    np.testing.assert_allclose(beats["p_value"], ref.pvalue)
    np.testing.assert_allclose([beats["ci_low"], beats["ci_high"]], ref.confidence_interval(0.95))
    assert beats["ci_level"] == 0.95 and beats["unit_of_replication"] == "seeds"
    assert beats["paper"] == 3.0 and beats["kind"] == "better" and "threshold" in beats
    assert beats["deterministic"] is False and beats["diagnostic"] is False
    assert json.loads(json.dumps(list(rows.values()), allow_nan=False))  # strict JSON
    broken = rows["broken"]
    assert broken["verdict"] == "failed" and "non-finite" in broken["reason"]
    assert broken["ours_samples"][0] is None and broken["ours_mean"] is None
    assert all("threshold" in row for row in rows.values())
    exact = rows["exact"]
    assert exact["verdict"] == "supports" and exact["test"] == "exact"
    assert exact["deterministic"] and exact["effect"] == 4.0


def test_diagnostics_are_listed_apart_and_not_tallied():
    rows = list(_rows().values())
    counts = markdown.summary_counts(rows)
    assert counts == {"supports": 2, "contradicts": 0, "inconclusive": 0, "failed": 1}
    lines = markdown.claim_tables(rows)
    split = lines.index(markdown.DIAGNOSTICS_HEADING)
    assert any("ablation" in line for line in lines[split:])
    assert not any("ablation" in line for line in lines[:split])
    assert any("deterministic" in line and "exact" in line for line in lines)
    assert any("failed: 1 non-finite" in line for line in lines)


def test_threshold_and_paper_are_printed_apart():
    claim = Claim(
        "overhead",
        metric="m",
        paper=2.4,
        paper_source="Table 3",
        threshold=5.0,
        test="at_most",
        unit="%",
        unit_of_replication="timing rounds",
    )
    experiment = Experiment(name="e", claims=(claim,), paper=PAPER, module="unused")
    record = {"experiment": experiment, "results": [{"m": [1.0, 2.0, 3.0]}], "error": None}
    row = markdown.claim_rows([record])[0]
    assert row["threshold"] == 5.0 and row["paper"] == 2.4
    assert markdown.paper_cell(row) == "2.4% (Table 3); test ≤ 5%"
    assert "n=3 timing rounds" in markdown.ours_cell(row)
    assert "90% CI" in markdown.test_cell(row)
    undecided = Claim(
        "paper only",
        metric="m",
        baseline="m2",
        decided_at=("paper",),
        decided_at_reason="quick is too small",
        paper_power=PowerAt("paired t", 10, 1.0, "a pilot run", sd=1.0),
    )
    experiment = Experiment(name="e", claims=(undecided,), paper=PAPER, module="unused")
    record = {
        "experiment": experiment,
        "results": [{"m": [2.0] * 3, "m2": [0.5] * 3}],
        "error": None,
    }
    assert markdown.claim_rows([record], "quick")[0]["diagnostic"]
    assert not markdown.claim_rows([record], "paper")[0]["diagnostic"]


def test_rejudge_rewrites_committed_results(tmp_path, monkeypatch, three_seeds):
    monkeypatch.setattr(registry, "discover", lambda: {"e": EXPERIMENT})
    rows = markdown.claim_rows([RECORD])
    stale = [dict(row, verdict="contradicts") for row in rows]
    (tmp_path / "e.json").write_text(json.dumps(stale, allow_nan=False))
    assert readme.rejudge_results(tmp_path, "quick") == ["e"]
    again = json.loads((tmp_path / "e.json").read_text())
    assert [r["verdict"] for r in again] == [r["verdict"] for r in rows]


def test_rejudge_replays_committed_samples(three_seeds):
    rows = markdown.claim_rows([RECORD])
    again = markdown.rejudge(EXPERIMENT, rows, "quick")
    for old, new in zip(rows, again, strict=True):
        assert (old["verdict"], old["p_value"]) == (new["verdict"], new["p_value"])


def test_readme_block_renders_old_and_new_rows(monkeypatch):
    monkeypatch.setattr(
        registry, "discover_papers", lambda: {"p": (PAPER, {"e": EXPERIMENT, "old": None})}
    )
    old = {
        "experiment": "old",
        "claim": "an old claim",
        "metric": "m",
        "paper": 1.0,
        "ours_mean": 1.1,
        "ours_std": 0.1,
        "num_seeds": 1,
        "setting": "",
        "verdict": "supports",
        "baseline": None,
        "baseline_mean": None,
        "baseline_std": None,
        "unit": "%",
        "error": None,
    }
    block = readme.results_block({"e": list(_rows().values()), "old": [old]})
    assert "| old | an old claim | 1% | 1.1 ± 0.1% (n=1) | — | — | supports |" in block
    assert "Diagnostics (not tallied; why, after each claim):" in block
    assert "paired t-test" in block and "(*not a claim of the paper" in block
    assert "4 claims: 3 supports, 0 contradicts, 0 inconclusive, 1 failed; 1 diagnostics" in block
    assert markdown.LEGEND in block
