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


def write_report(
    records: list[dict[str, Any]], out: str | os.PathLike, preset: str, wall_seconds: float
) -> list[dict[str, Any]]:
    """Writes ``REPORT.md``, ``results.json`` and ``plots/*.png`` under ``out``."""
    import jax

    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    rows = claim_rows(records)
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")

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
        by_paper.setdefault(record["experiment"].paper, []).append(record)
    for paper, paper_records in by_paper.items():
        lines += [f"## {paper}", ""]
        lines += [
            "| experiment | claim | paper | ours (mean ± std, n) | baseline (same run) "
            "| setting | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for record in paper_records:
            name = record["experiment"].name
            for row in (r for r in rows if r["experiment"] == name):
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
                    f"| {name} | {row['claim']} (`{row['metric']}`) | {paper_num} | {ours} "
                    f"| {base} | {row['setting']} | {verdict} |"
                )
        lines.append("")
        for record in paper_records:
            name = record["experiment"].name
            plotted = [r for r in rows if r["experiment"] == name and r["ours_mean"] is not None]
            if plotted:
                _plot(plotted, out / "plots" / f"{name}.png")
                lines.append(f"![{name}](plots/{name}.png)")
            figures = sorted((out / "workdirs" / name).glob("seed_*/*.png"))
            lines += [f"![{f.stem}]({f.relative_to(out).as_posix()})" for f in figures[:4]]
            seconds = record.get("seconds", float("nan"))
            budget = record.get("budget", float("nan"))
            lines += ["", f"`{name}`: {seconds:.0f} s (declared CPU budget {budget:.0f} s).", ""]
    (out / "REPORT.md").write_text("\n".join(lines) + "\n")
    return rows
