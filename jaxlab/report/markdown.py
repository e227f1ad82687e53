"""``REPORT.md``, ``results.json`` and the claim plots of a ``reproduce`` run."""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from jaxlab.report import verdict as verdict_lib


def claim_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One machine-readable row per claim (the ``results.json`` schema)."""
    rows = []
    for record in records:
        experiment = record["experiment"]
        for claim in experiment.claims:
            row: dict[str, Any] = {
                "paper_id": experiment.paper.id if experiment.paper else "",
                "experiment": experiment.name,
                "claim": claim.name,
                "metric": claim.metric,
                "paper": claim.paper,
                "ours_mean": None,
                "ours_std": None,
                "num_seeds": 0,
                "setting": claim.setting,
                "verdict": verdict_lib.FAILED,
                "baseline": claim.baseline,
                "baseline_mean": None,
                "baseline_std": None,
                "unit": claim.unit,
                "error": record["error"],
                "wall_s": _finite(record.get("seconds")),
                "budget_s": _finite(record.get("budget")),
            }
            if record["error"] is None:
                try:
                    ours = verdict_lib.pool(record["results"], claim.metric)
                    base = (
                        verdict_lib.pool(record["results"], claim.baseline)
                        if claim.baseline
                        else None
                    )
                except KeyError as error:
                    row["error"] = str(error)
                    rows.append(row)
                    continue
                row.update(
                    ours_mean=float(ours.mean()),
                    ours_std=float(ours.std(ddof=1)) if len(ours) > 1 else 0.0,
                    num_seeds=len(ours),
                    verdict=verdict_lib.verdict(claim, ours, base),
                )
                if base is not None:
                    row.update(
                        baseline_mean=float(base.mean()),
                        baseline_std=float(base.std(ddof=1)) if len(base) > 1 else 0.0,
                    )
            rows.append(row)
    return rows


def _finite(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 1)


def _fmt(mean: float | None, std: float | None, unit: str = "") -> str:
    if mean is None:
        return "—"
    text = f"{mean:.4g}"
    if std:
        text += f" ± {std:.2g}"
    return text + unit


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.2))
    y = np.arange(len(rows))
    ax.barh(y, [r["ours_mean"] for r in rows], xerr=[r["ours_std"] for r in rows],
            height=0.35, label="ours", color="tab:blue")
    base = [r["baseline_mean"] if r["baseline_mean"] is not None else np.nan for r in rows]
    ax.barh(y + 0.35, base, xerr=[r["baseline_std"] or 0 for r in rows], height=0.35,
            label="baseline (same run)", color="tab:gray")
    paper = [r["paper"] if r["paper"] is not None else np.nan for r in rows]
    ax.scatter(paper, y, marker="x", color="tab:red", zorder=3, label="paper")
    ax.set_yticks(y + 0.17, [r["metric"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="best")
    ax.set_title(rows[0]["experiment"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _claim_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| experiment | claim | paper | ours (mean ± std, n) | baseline (same run) "
        "| setting | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        paper_num = "—" if row["paper"] is None else f"{row['paper']:.4g}{row['unit']}"
        ours = _fmt(row["ours_mean"], row["ours_std"], row["unit"])
        if row["num_seeds"]:
            ours += f" (n={row['num_seeds']})"
        base = "—"
        if row["baseline"]:
            base = f"`{row['baseline']}` " + _fmt(
                row["baseline_mean"], row["baseline_std"], row["unit"]
            )
        verdict = row["verdict"]
        if verdict == verdict_lib.FAILED:
            verdict = f"failed: {row['error']}"
        lines.append(
            f"| {row['experiment']} | {row['claim']} (`{row['metric']}`) | {paper_num} | {ours} "
            f"| {base} | {row['setting']} | {verdict} |"
        )
    return lines


def _seconds(value: float | None) -> str:
    return "—" if value is None or not np.isfinite(value) else f"{value:.0f} s"


def _paper_page(paper, records, rows, out: Path, preset: str) -> list[str]:
    lines = [f"# {paper.citation}" if paper else "# (no paper)", ""]
    if paper:
        if paper.summary:
            lines += [f"Claim: {paper.summary}.", ""]
        if paper.code:
            lines += [f"Reference code: {paper.code}", ""]
    lines += [f"Preset `{preset}`; regenerate with `jaxlab reproduce --preset {preset} "
              f"--paper {paper.id if paper else ''}`.", ""]
    names = [r["experiment"].name for r in records]
    lines += _claim_table([r for r in rows if r["experiment"] in names]) + [""]
    for record in records:
        name = record["experiment"].name
        plotted = [r for r in rows if r["experiment"] == name and r["ours_mean"] is not None]
        if plotted:
            _plot(plotted, out / "plots" / f"{name}.png")
            lines.append(f"![{name}](plots/{name}.png)")
        figures = sorted((out / "workdirs" / name).glob("seed*/*.png"))
        lines += [f"![{f.stem}]({f.relative_to(out).as_posix()})" for f in figures[:4]]
        lines += ["", f"`{name}`: {_seconds(record.get('seconds'))} "
                  f"(declared CPU budget {_seconds(record.get('budget'))}).", ""]
    return lines


def summary_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Number of claims per verdict word."""
    words = (verdict_lib.SUPPORTS, verdict_lib.CONTRADICTS, verdict_lib.INCONCLUSIVE,
             verdict_lib.FAILED)
    return {w: sum(r["verdict"] == w for r in rows) for w in words}


def write_report(
    records: list[dict[str, Any]], out: str | os.PathLike, preset: str, wall_seconds: float
) -> list[dict[str, Any]]:
    """Writes ``REPORT.md``, one ``<paper_id>.md`` per paper, ``results.json`` (every claim)
    and ``results/<experiment>.json`` (one file per experiment, for ``jaxlab report``), and
    ``plots/*.png`` under ``out``."""
    import jax

    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    rows = claim_rows(records)
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    for record in records:
        name = record["experiment"].name
        mine = [r for r in rows if r["experiment"] == name]
        (out / "results" / f"{name}.json").write_text(json.dumps(mine, indent=1) + "\n")

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# jaxlab reproduction report — preset `{preset}`",
        "",
        f"Generated {now} by `jaxlab reproduce --preset {preset}` on {platform.machine()} "
        f"({os.cpu_count()} CPUs, JAX {jax.__version__}, backend {jax.default_backend()}). "
        f"Wall time: **{wall_seconds / 60:.1f} min**.",
        "",
        "Verdict: *supports* when our mean beats the baseline (or matches the paper's number "
        "within the stated tolerance) by more than twice its standard error; *contradicts* "
        "when it loses by as much; otherwise *inconclusive*. Our settings are small unless "
        "the row says the data is the paper's.",
        "",
    ]
    if not records:
        lines.append("No experiment is registered yet.")
    by_paper: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        paper = record["experiment"].paper
        by_paper.setdefault(paper.id if paper else "", []).append(record)
    if by_paper:
        lines += ["| paper | experiments | supports | contradicts | inconclusive | failed "
                  "| wall time | declared budget |", "|---|---|---|---|---|---|---|---|"]
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
    lines.append("")
    for record in records:
        if record["error"]:
            lines.append(f"- `{record['experiment'].name}` failed: {record['error']}")
    (out / "REPORT.md").write_text("\n".join(lines) + "\n")
    return rows
