"""The README's paper-preset results: claim rows decided at the paper preset, beside quick.

``jaxlab reproduce --preset paper`` stamps each ``results/<experiment>.json`` row with the
commit it ran at (:func:`stamp_commit`); ``jaxlab report --preset paper`` renders the
committed ``docs/results/paper/*.json`` into the README block between
``<!-- results:paper:start -->`` and ``<!-- results:paper:end -->`` (:func:`block`),
which sits after the quick block (:func:`put_block` adds it there when it is missing): a
tally table of quick against paper verdict counts on the experiments with paper results,
then the paper preset's claim rows (papers without paper results left out).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from jaxlab.report import markdown, readme

PRESET = "paper"
WORDS = ("supports", "contradicts", "inconclusive")
"""The verdicts the tally table compares."""

Results = dict[str, list[dict[str, Any]]]


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Tallied claims (diagnostics left out) per verdict of :data:`WORDS`."""
    tallied = markdown.tallied(rows)
    return {w: sum(r.get("verdict") == w for r in tallied) for w in WORDS}


def tally(quick: Results, paper: Results) -> list[tuple[str, dict[str, int], dict[str, int]]]:
    """(experiment, quick counts, paper counts) for each experiment with paper results, in
    name order; an experiment without quick results counts zero there."""
    return [(name, counts(quick.get(name, [])), counts(paper[name])) for name in sorted(paper)]


def tally_table(quick: Results, paper: Results) -> str:
    """The markdown table of :func:`tally`, with a total row."""
    head = " | ".join(f"{w} quick / paper" for w in WORDS)
    lines = [f"| experiment | {head} |", "|---" * (len(WORDS) + 1) + "|"]
    entries = tally(quick, paper)
    total_q = {w: sum(q[w] for _, q, _ in entries) for w in WORDS}
    total_p = {w: sum(p[w] for _, _, p in entries) for w in WORDS}
    for name, q, p in [*entries, ("**total**", total_q, total_p)]:
        lines.append(f"| {name} | " + " | ".join(f"{q[w]} / {p[w]}" for w in WORDS) + " |")
    return "\n".join(lines)


def _commits(paper: Results) -> str:
    found = sorted({str(r["commit"]) for rows in paper.values() for r in rows if r.get("commit")})
    unstamped = sorted(n for n, rows in paper.items() if not any(r.get("commit") for r in rows))
    text = f"Ran at commit {', '.join(found)}." if found else ""
    if unstamped:
        text += f" No recorded commit: {', '.join(unstamped)}."
    return text.strip()


def block(quick: Results, paper: Results) -> str:
    """The README's paper block: the commits, the tally table, then the claim rows."""
    if not paper:
        return f"*No committed `{PRESET}` results yet.*"
    return "\n".join(
        [
            _commits(paper),
            "",
            "Verdict counts, quick against paper, on the experiments with paper results "
            "(tallied claims; diagnostics left out):",
            "",
            tally_table(quick, paper),
            "",
            readme.results_block(paper, PRESET, only_run=True),
        ]
    )


def render_readme(text: str, preset: str, results_root: str | os.PathLike) -> str:
    """``text`` with the README block of ``preset`` generated from
    ``<results_root>/<preset>/*.json`` (the paper block also reads the quick results).

    Raises:
      ValueError: the README has no place for the block.
    """
    results = readme.load_results(Path(results_root) / preset)
    if preset == PRESET:
        return put_block(text, block(readme.load_results(Path(results_root) / "quick"), results))
    return readme.replace_block(text, readme.results_block(results, preset), preset)


def put_block(text: str, content: str) -> str:
    """``text`` with the paper block set to ``content``; a missing block is added right
    after the quick block.

    Raises:
      ValueError: neither the paper block nor the quick block is in ``text``.
    """
    start, end = readme.markers(PRESET)
    if start not in text or end not in text:
        quick_end = readme.markers("quick")[1]
        if quick_end not in text:
            raise ValueError(f"README has no {start} ... {end} markers and no {quick_end}")
        head, tail = text.split(quick_end, 1)
        text = f"{head}{quick_end}\n\n{start}\n{end}{tail}"
    return readme.replace_block(text, content, PRESET)


def head_commit(cwd: str | os.PathLike = ".") -> str | None:
    """``git rev-parse HEAD`` in ``cwd``, with ``-dirty`` when tracked files differ from
    it; None outside a git checkout."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{sha}-dirty" if dirty else sha


def stamp_commit(results_dir: str | os.PathLike, names: list[str], commit: str | None) -> None:
    """Sets ``commit`` on every row of ``<results_dir>/<name>.json`` for ``names`` that
    exist; nothing when ``commit`` is None."""
    if commit is None:
        return
    for name in names:
        path = Path(results_dir) / f"{name}.json"
        if path.is_file():
            rows = json.loads(path.read_text())
            path.write_text(json.dumps([{**r, "commit": commit} for r in rows], indent=1) + "\n")
