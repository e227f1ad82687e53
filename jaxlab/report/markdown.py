"""``REPORT.md``, ``results.json`` and the claim plots of a ``reproduce`` run."""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from jaxlab.report import provenance
from jaxlab.report import verdict as verdict_lib

LEGEND = (
    "Verdicts (every test at α = 0.05, from `scipy.stats`). Each row compares ours with a "
    "baseline of the same run or with its **threshold**, fixed before the run; the paper's "
    "number, with its table or figure, is printed apart and decides nothing unless it is "
    "the threshold. *better* rows: a **paired t-test** on the per-seed differences when both "
    "arms share seeds, else a **Welch t-test**, two-sided; *supports* when significant in "
    "the claim's direction, *contradicts* when significant against it. *matches* rows: "
    "**TOST** equivalence to the threshold within ± the tolerance (*supports*: equivalence "
    "shown and the whole 90 % CI inside the band; *contradicts*: the mean significantly "
    "outside it). *at least* / *at most* rows: a **one-sided t-test** against the threshold "
    "(*contradicts*: significant the other way). *draw* rows (a reference run's single "
    "value): an **exact sign TOST** of our median against the value ± the claim's margin, "
    "distribution-free; *supports* only when equivalence is shown. Samples that are 0/1 "
    "outcomes or proportions are tested exactly: the **exact sign (McNemar) test** when "
    "paired, **Fisher's exact test** otherwise, an **exact binomial test** (or binomial "
    "TOST) against a threshold; continuous samples that are all 0/1 are refused. Samples at "
    "the run's cap or on a floor or ceiling of the metric's range are censored: the **exact "
    "sign test** (its TOST for a band) or **Mann–Whitney U**, never a t-test; so do "
    "continuous samples without spread. Otherwise *inconclusive*. Only a **deterministic** "
    "row (an exact, seed-free quantity) is compared **exactly**, with no test, once two runs "
    "agree bit for bit; one run is *inconclusive*. Any other row with fewer than 3 samples "
    "is never decisive. NaN or inf, or a sample outside the metric's range → *failed*. The "
    "effect is signed in the claim's direction (ours − baseline, or distance to the "
    "threshold) with its CI at the test's level: **95 %** for the two-sided tests, **90 %** "
    "for TOST and the one-sided tests (1 − 2α); p is the p-value of the deciding test. n "
    "counts seeds unless the row names its unit of replication. A row without a power "
    "calculation from a pilot, or with power below 0.8, says so. Diagnostics (quantities the "
    "paper does not claim, claims true by construction, claims no preset's sample count can "
    "decide, and claims only the paper preset can decide, with its power there) are listed "
    "apart with the reason and never tallied."
)


def _num(value: float | None) -> float | None:
    """A JSON-safe number: ``None`` for a missing or non-finite value."""
    return None if value is None or not np.isfinite(value) else float(value)


def _stats(samples: np.ndarray) -> tuple[float | None, float | None, list[float | None]]:
    std = float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0
    return _num(float(np.mean(samples))), _num(std), [_num(v) for v in samples]


def _empty_row(
    experiment, claim, record: dict[str, Any], preset: str | None = None
) -> dict[str, Any]:
    return {
        "paper_id": experiment.paper.id if experiment.paper else "",
        "experiment": experiment.name,
        "claim": claim.name,
        "metric": claim.metric,
        "kind": claim.kind,
        "paper": claim.paper,
        "paper_source": claim.paper_source,
        "threshold": claim.bound,
        "threshold_source": claim.threshold_source,
        "tolerance": claim.tolerance,
        "ours_mean": None,
        "ours_std": None,
        "num_seeds": 0,
        "unit_of_replication": claim.unit_of_replication,
        "ours_samples": [],
        "setting": claim.setting_with_power,
        "power": claim.power,
        "verdict": verdict_lib.FAILED,
        "test": verdict_lib.NO_TEST,
        "p_value": None,
        "effect": None,
        "ci_low": None,
        "ci_high": None,
        "ci_level": None,
        "reason": "",
        "samples": claim.samples,
        "deterministic": claim.deterministic,
        "by_construction": claim.by_construction,
        "timing": claim.timing,
        "diagnostic": claim.is_diagnostic(preset),
        "diagnostic_reason": claim.diagnostic_reason(preset),
        "baseline": claim.baseline,
        "baseline_mean": None,
        "baseline_std": None,
        "baseline_samples": [],
        "unit": claim.unit,
        "error": record["error"],
        "wall_s": _finite(record.get("seconds")),
        "budget_s": _finite(record.get("budget")),
    }


def claim_row(
    experiment, claim, record: dict[str, Any], preset: str | None = None
) -> dict[str, Any]:
    """The row of one claim: our (and the baseline's) samples, the test and its verdict.
    ``preset`` (else ``record["preset"]``) decides whether a claim with ``decided_at`` is
    tallied or a diagnostic."""
    preset = preset or record.get("preset")
    row = _empty_row(experiment, claim, record, preset)
    if record["error"] is not None:
        return row
    # A deterministic claim's samples are runs of a seed-free quantity, not seeds.
    unit = claim.unit_of_replication
    seeds = None if claim.deterministic else record.get("num_seeds")
    try:
        ours = verdict_lib.pool(record["results"], claim.metric, unit, seeds)
        base = (
            verdict_lib.pool(record["results"], claim.baseline, unit, seeds)
            if claim.baseline
            else None
        )
    except (KeyError, ValueError) as error:
        row["error"] = str(error)
        return row
    row["ours_mean"], row["ours_std"], row["ours_samples"] = _stats(ours)
    row["num_seeds"] = len(ours)
    if base is not None:
        row["baseline_mean"], row["baseline_std"], row["baseline_samples"] = _stats(base)
    cap = None
    if claim.cap is not None and preset is not None:
        cap = float(claim.cap(experiment.get_config(preset)))
    row["cap"] = cap
    try:
        result = verdict_lib.verdict(claim, ours, base, cap)
    except ValueError as error:  # paired arms of different lengths, undeclared 0/1 samples
        row["error"] = str(error)
        return row
    ci_low, ci_high = result.ci if result.ci is not None else (None, None)
    row.update(
        verdict=result.word,
        test=result.test,
        p_value=_num(result.p),
        effect=_num(result.effect),
        ci_low=_num(ci_low),
        ci_high=_num(ci_high),
        ci_level=result.ci_level if result.ci is not None else None,
        reason=result.reason,
    )
    return row


def claim_rows(records: list[dict[str, Any]], preset: str | None = None) -> list[dict[str, Any]]:
    """One machine-readable row per claim (the ``results.json`` schema)."""
    return [
        claim_row(record["experiment"], claim, record, preset)
        for record in records
        for claim in record["experiment"].claims
    ]


def committed_samples(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """metric → its samples, read back from an experiment's committed rows (ours and the
    baselines'; ``None`` — a non-finite value — as NaN)."""
    samples: dict[str, list[float]] = {}
    for row in rows:
        for key, values in (
            (row["metric"], row.get("ours_samples")),
            (row.get("baseline"), row.get("baseline_samples")),
        ):
            if key and values:
                samples.setdefault(key, [np.nan if v is None else float(v) for v in values])
    return samples


def rejudge(experiment, rows: list[dict[str, Any]], preset: str) -> list[dict[str, Any]]:
    """The rows of ``experiment``'s current claims, judged on the samples of its committed
    ``rows`` (``committed_samples``) with the current verdict rule: no experiment runs.
    Timings and errors are carried over from the committed rows; the seed count is the
    preset's ``num_seeds``, so a metric with more samples than seeds needs its unit."""
    first = rows[0] if rows else {}
    errors = {row.get("error") for row in rows} - {None}
    record = {
        "experiment": experiment,
        "results": [committed_samples(rows)],
        "num_seeds": int(experiment.get_config(preset).num_seeds),
        "error": errors.pop() if errors and not committed_samples(rows) else None,
        "seconds": first.get("wall_s"),
        "budget": first.get("budget_s"),
    }
    return claim_rows([record], preset)


def _finite(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 1)


def _fmt(mean: float | None, std: float | None, unit: str = "") -> str:
    if mean is None:
        return "—"
    text = f"{mean:.4g}"
    if std:
        text += f" ± {std:.2g}"
    return text + unit


def paper_cell(row: dict[str, Any]) -> str:
    """The paper's number (with its table or figure), then the threshold the test used
    (``≥`` / ``≤`` a bound, ``±`` the band of ``matches``) when it is not the paper's
    number."""
    unit = row.get("unit") or ""
    paper = "—" if row["paper"] is None else f"{row['paper']:.4g}{unit}"
    if row["paper"] is not None and row.get("paper_source"):
        paper += f" ({row['paper_source']})"
    threshold, kind = row.get("threshold"), row.get("kind")
    if threshold is None:
        if row["paper"] is not None and kind == "matches" and row.get("tolerance") is not None:
            return f"{row['paper']:.4g} ± {row['tolerance']:.3g}{unit}"
        return paper
    if kind == "matches":
        test = f"{threshold:.4g} ± {row['tolerance']:.3g}{unit}"
    elif kind == "draw":
        test = f"a draw of {threshold:.4g}{unit}"
    else:
        test = f"{'≥' if kind == 'at_least' else '≤'} {threshold:.4g}{unit}"
    if row["paper"] is not None and np.isclose(threshold, row["paper"]) and kind == "matches":
        return test + (f" ({row['paper_source']})" if row.get("paper_source") else "")
    return f"{paper}; test {test}"


def ours_cell(row: dict[str, Any]) -> str:
    """Mean ± std, the number of samples (and their unit when not seeds), and the
    deterministic flag."""
    text = _fmt(row["ours_mean"], row["ours_std"], row["unit"])
    unit = row.get("unit_of_replication") or "seeds"
    notes = []
    if row["num_seeds"]:
        notes.append(f"n={row['num_seeds']}" + ("" if unit == "seeds" else f" {unit}"))
    if row.get("deterministic"):
        notes.append("deterministic")
    if row.get("by_construction"):
        notes.append("by construction")
    return text + (f" ({', '.join(notes)})" if notes else "")


def baseline_cell(row: dict[str, Any], name: bool = True) -> str:
    if not row["baseline"]:
        return "—"
    value = _fmt(row["baseline_mean"], row["baseline_std"], row["unit"])
    return f"`{row['baseline']}` {value}" if name else value


def test_cell(row: dict[str, Any]) -> str:
    """The deciding test with its p-value and effect [CI at the test's level] (``—`` for
    rows written before rows recorded their test)."""
    test = row.get("test")
    if test is None:
        return "—"
    if test == verdict_lib.NO_TEST:
        return row.get("reason") or "—"
    effect = row["effect"]
    if test == verdict_lib.EXACT:
        return f"exact, effect {effect:+.4g}" if effect is not None else "exact"
    text = f"{test}, p = {row['p_value']:.2g}"
    if effect is not None:
        text += f", effect {effect:+.3g}"
        if row["ci_low"] is not None and row["ci_high"] is not None:
            level = row.get("ci_level", 0.95) or 0.95
            text += f" [{level:.0%} CI {row['ci_low']:.3g}, {row['ci_high']:.3g}]"
    return text


def verdict_cell(row: dict[str, Any]) -> str:
    if row["verdict"] != verdict_lib.FAILED:
        return row["verdict"]
    why = row.get("error") or row.get("reason")
    return f"failed: {why}" if why else "failed"


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.2))
    ax = fig.subplots()
    y = np.arange(len(rows))
    ax.barh(
        y,
        [r["ours_mean"] for r in rows],
        xerr=[r["ours_std"] or 0 for r in rows],
        height=0.35,
        label="ours",
        color="tab:blue",
    )
    base = [r["baseline_mean"] if r["baseline_mean"] is not None else np.nan for r in rows]
    ax.barh(
        y + 0.35,
        base,
        xerr=[r["baseline_std"] or 0 for r in rows],
        height=0.35,
        label="baseline (same run)",
        color="tab:gray",
    )
    paper = [r["paper"] if r["paper"] is not None else np.nan for r in rows]
    ax.scatter(paper, y, marker="x", color="tab:red", zorder=3, label="paper")
    ax.set_yticks(y + 0.17, [r["metric"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="best")
    ax.set_title(rows[0]["experiment"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def claim_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: one row per claim (paper, ours, baseline, test, setting, verdict)."""
    lines = [
        "| experiment | claim | paper; threshold | ours (mean ± std, n) | baseline (same run) "
        "| test: p, effect [CI] | setting | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['experiment']} | {row['claim']} (`{row['metric']}`) | {paper_cell(row)} "
            f"| {ours_cell(row)} | {baseline_cell(row)} | {test_cell(row)} "
            f"| {diagnostic_setting(row)} | {verdict_cell(row)} |"
        )
    return lines


def tallied(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that count (diagnostics are reported apart)."""
    return [r for r in rows if not r.get("diagnostic")]


def diagnostics(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("diagnostic")]


def claim_tables(rows: list[dict[str, Any]]) -> list[str]:
    """The claims' table, then (when there are any) the diagnostics' table."""
    lines = claim_table(tallied(rows))
    if diagnostics(rows):
        lines += ["", DIAGNOSTICS_HEADING, ""]
        lines += claim_table(diagnostics(rows))
    return lines


DIAGNOSTICS_HEADING = "Diagnostics (not tallied; each row's setting ends with why it is here):"


def diagnostic_setting(row: dict[str, Any]) -> str:
    """A diagnostic row's setting followed by why it is a diagnostic."""
    why = row.get("diagnostic_reason") or ""
    setting = row.get("setting") or ""
    if not why:
        return setting
    return f"{setting}; **why a diagnostic:** {why}" if setting else f"**why a diagnostic:** {why}"


def _seconds(value: float | None) -> str:
    return "—" if value is None or not np.isfinite(value) else f"{value:.0f} s"


def _paper_page(paper, records, rows, out: Path, preset: str) -> list[str]:
    lines = [f"# {paper.citation}" if paper else "# (no paper)", ""]
    if paper:
        if paper.summary:
            lines += [f"Claim: {paper.summary}.", ""]
        if paper.code:
            lines += [f"Reference code: {paper.code}", ""]
    lines += [
        f"Preset `{preset}`; regenerate with `jaxlab reproduce --preset {preset} "
        f"--paper {paper.id if paper else ''}`.",
        "",
    ]
    names = [r["experiment"].name for r in records]
    lines += claim_tables([r for r in rows if r["experiment"] in names]) + ["", LEGEND, ""]
    for record in records:
        name = record["experiment"].name
        plotted = [r for r in rows if r["experiment"] == name and r["ours_mean"] is not None]
        if plotted:
            _plot(plotted, out / "plots" / f"{name}.png")
            lines.append(f"![{name}](plots/{name}.png)")
        figures = sorted((out / "workdirs" / name).glob("seed*/*.png"))
        lines += [f"![{f.stem}]({f.relative_to(out).as_posix()})" for f in figures[:4]]
        lines += [
            "",
            f"`{name}`: {_seconds(record.get('seconds'))} "
            f"(declared CPU budget {_seconds(record.get('budget'))}).",
            "",
        ]
    return lines


def summary_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Number of tallied claims (diagnostics left out) per verdict word."""
    return {w: sum(r["verdict"] == w for r in tallied(rows)) for w in verdict_lib.WORDS}


def write_report(
    records: list[dict[str, Any]], out: str | os.PathLike, preset: str, wall_seconds: float
) -> list[dict[str, Any]]:
    """Writes ``REPORT.md``, one ``<paper_id>.md`` per paper, ``results.json`` (every claim)
    and ``results/<experiment>.json`` (one file per experiment, for ``jaxlab report``) with
    its ``results/provenance/<experiment>.json`` (``jaxlab.report.provenance``), and
    ``plots/*.png`` under ``out``."""
    import jax

    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    for record in records:  # the seed count pool enforces (one sample per seed)
        if record["error"] is None and "num_seeds" not in record:
            record["num_seeds"] = int(record["experiment"].get_config(preset).num_seeds)
    rows = claim_rows(records, preset)
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    for record in records:
        name = record["experiment"].name
        mine = [r for r in rows if r["experiment"] == name]
        (out / "results" / f"{name}.json").write_text(json.dumps(mine, indent=1) + "\n")
        if "provenance" in record:
            provenance.write(out / "results", name, preset, record["provenance"])

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# jaxlab reproduction report — preset `{preset}`",
        "",
        f"Generated {now} by `jaxlab reproduce --preset {preset}` on {platform.machine()} "
        f"({os.cpu_count()} CPUs, JAX {jax.__version__}, backend {jax.default_backend()}). "
        f"Wall time: **{wall_seconds / 60:.1f} min**.",
        "",
        LEGEND + " Our settings are small unless the row says the data is the paper's.",
        "",
    ]
    if not records:
        lines.append("No experiment is registered yet.")
    by_paper: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        paper = record["experiment"].paper
        by_paper.setdefault(paper.id if paper else "", []).append(record)
    if by_paper:
        lines += [
            "| paper | experiments | supports | contradicts | inconclusive | failed "
            "| wall time | declared budget |",
            "|---|---|---|---|---|---|---|---|",
        ]
    for paper_id, paper_records in by_paper.items():
        paper = paper_records[0]["experiment"].paper
        names = {r["experiment"].name for r in paper_records}
        paper_rows = [r for r in rows if r["experiment"] in names]
        page = f"{paper_id or 'unassigned'}.md"
        (out / page).write_text(
            "\n".join(_paper_page(paper, paper_records, rows, out, preset)) + "\n"
        )
        counts = summary_counts(paper_rows)
        wall = sum(r.get("seconds", 0.0) for r in paper_records)
        budget = sum(r.get("budget", 0.0) for r in paper_records)
        title = paper.title if paper else "(no paper)"
        lines.append(
            f"| [{title}]({page}) | {len(paper_records)} | {counts['supports']} "
            f"| {counts['contradicts']} | {counts['inconclusive']} | {counts['failed']} "
            f"| {_seconds(wall)} | {_seconds(budget)} |"
        )
    counts = summary_counts(rows)
    lines += [
        "",
        f"{len(tallied(rows))} claims: {counts['supports']} supports, "
        f"{counts['contradicts']} contradicts, {counts['inconclusive']} inconclusive, "
        f"{counts['failed']} failed; {len(diagnostics(rows))} diagnostics (not tallied).",
        "",
    ]
    for record in records:
        if record["error"]:
            lines.append(f"- `{record['experiment'].name}` failed: {record['error']}")
    (out / "REPORT.md").write_text("\n".join(lines) + "\n")
    return rows
