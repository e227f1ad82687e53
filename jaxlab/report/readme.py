"""The README's reproduction tables, generated from committed per-experiment results.

``jaxlab reproduce`` writes ``reports/<preset>/results/<experiment>.json``; ``jaxlab report
--from reports/<preset>`` copies those files into ``docs/results/<preset>/`` (committed, the
last results the project stands by) and rewrites the block of ``README.md`` between
``<!-- results:<preset>:start -->`` and ``<!-- results:<preset>:end -->`` from them. A test
regenerates the block and fails when the README disagrees with the committed results, or
when the committed results' claims disagree with the registry.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from jaxlab.report import markdown, provenance, registry


def markers(preset: str) -> tuple[str, str]:
    return f"<!-- results:{preset}:start -->", f"<!-- results:{preset}:end -->"


def load_results(results_dir: str | os.PathLike) -> dict[str, list[dict[str, Any]]]:
    """experiment name → its claim rows, from ``<results_dir>/<experiment>.json``."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in sorted(results_dir.glob("*.json"))}


def copy_results(report_dir: str | os.PathLike, results_dir: str | os.PathLike) -> list[str]:
    """Copies ``<report_dir>/results/*.json`` into ``results_dir``, each with its provenance
    record (``jaxlab.report.provenance``; a stale record of the same name is removed);
    returns the names."""
    source = Path(report_dir) / "results"
    if not source.is_dir():
        raise FileNotFoundError(f"no per-experiment results in {source}; run reproduce first")
    target = Path(results_dir) / provenance.FOLDER
    target.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(source.glob("*.json")):
        shutil.copyfile(path, Path(results_dir) / path.name)
        record = source / provenance.FOLDER / path.name
        if record.is_file():
            shutil.copyfile(record, target / path.name)
        else:
            (target / path.name).unlink(missing_ok=True)
        names.append(path.stem)
    return names


def rejudge_results(results_dir: str | os.PathLike, preset: str) -> list[str]:
    """Rewrites each registered experiment's ``<results_dir>/<experiment>.json`` with its
    current claims judged on the committed samples (``markdown.rejudge``); returns the
    names. No experiment runs."""
    experiments = registry.discover()
    names = []
    for name, rows in load_results(results_dir).items():
        if name in experiments:
            judged = markdown.rejudge(experiments[name], rows, preset)
            if commits := {r["commit"] for r in rows if r.get("commit")}:
                judged = [{**r, "commit": ", ".join(sorted(commits))} for r in judged]
            path = Path(results_dir) / f"{name}.json"
            path.write_text(json.dumps(judged, indent=1) + "\n")
            names.append(name)
    return names


def _claim_cell(row: dict[str, Any]) -> str:
    """The claim, and for a diagnostic why it is one."""
    why = row.get("diagnostic_reason")
    return f"{row['claim']} (*{why}*)" if row.get("diagnostic") and why else row["claim"]


def _rows(name: str, rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"| {name} | {_claim_cell(row)} | {markdown.paper_cell(row)} | {markdown.ours_cell(row)} "
        f"| {markdown.baseline_cell(row, name=False)} | {markdown.test_cell(row)} "
        f"| {markdown.verdict_cell(row)} |"
        for row in rows
    ]


HEADER = [
    "| experiment | claim | paper | ours | baseline (same run) "
    "| test: p, effect [95 % CI] | verdict |",
    "|---|---|---|---|---|---|---|",
]


def results_block(
    results: dict[str, list[dict[str, Any]]], preset: str = "quick", only_run: bool = False
) -> str:
    """The markdown block: per paper, one row per claim (ours, the paper's, the test, the
    verdict), then the paper's diagnostics (not tallied); the tally and the legend last.
    Rows written before rows recorded their test (no samples) render with ``—`` there.
    With ``only_run``, papers none of whose experiments has results are left out."""
    lines = []
    for paper, experiments in registry.discover_papers().values():
        if only_run and not any(name in results for name in experiments):
            continue
        lines += [f"#### {paper.title} ({paper.authors})", "", *HEADER]
        extra = []
        for name in experiments:
            if name not in results:
                lines.append(f"| {name} | (not run at `{preset}` yet) | | | | | |")
                continue
            lines += _rows(name, markdown.tallied(results[name]))
            extra += _rows(name, markdown.diagnostics(results[name]))
        if extra:
            lines += ["", "Diagnostics (not tallied; why, after each claim):", "", *HEADER, *extra]
        lines.append("")
    rows = [r for experiment_rows in results.values() for r in experiment_rows]
    counts = markdown.summary_counts(rows)
    lines.append(
        f"{len(markdown.tallied(rows))} claims: {counts['supports']} supports, "
        f"{counts['contradicts']} contradicts, {counts['inconclusive']} inconclusive, "
        f"{counts['failed']} failed; {len(markdown.diagnostics(rows))} diagnostics."
    )
    lines += ["", markdown.LEGEND]
    return "\n".join(lines)


def replace_block(text: str, block: str, preset: str = "quick") -> str:
    """``text`` with the marked block replaced; raises if the markers are missing."""
    start, end = markers(preset)
    if start not in text or end not in text:
        raise ValueError(f"README has no {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{block}\n{end}{tail}"


def stale_claims(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Committed results whose claim list differs from the registry's (or whose experiment
    is gone): one line each."""
    experiments = registry.discover()
    problems = []
    for name, rows in results.items():
        if name not in experiments:
            problems.append(f"{name}: committed results for an unregistered experiment")
            continue
        registered = [c.name for c in experiments[name].claims]
        committed = [r["claim"] for r in rows]
        if registered != committed:
            problems.append(f"{name}: claims {committed} committed, {registered} registered")
    return problems
