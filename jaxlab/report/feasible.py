"""Which experiments' paper presets fit a CPU: those whose planned CPU hours are small.

The figure is the "CPU hours on this machine" column of the README's ``<!-- plans:paper -->``
table (``jaxlab plan --all --preset paper --readme README.md``, :mod:`jaxlab.report.plans`).
It is read from the committed table, not recomputed: :func:`jaxlab.report.plans.cpu_hours`
traces every paper program and measures this machine's rates, which takes minutes and
varies from machine to machine, while the committed table is one fixed answer. Its limits:
the figure is the arithmetic's scale on the machine that wrote the table (per-step launch
and host time are not in it), it is as fresh as the last ``jaxlab plan --readme``, and an
experiment whose row says ``—`` (a host program, no planned accelerator work) is never
feasible.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

THRESHOLD_HOURS = 2.0
"""An experiment is CPU-feasible when its planned CPU hours are at most this."""

COLUMN = "CPU hours on this machine"
BEGIN, END = "<!-- plans:paper -->", "<!-- /plans:paper -->"
_SPLIT = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _SPLIT.split(line.strip().strip("|"))]


def _hours(cell: str) -> float | None:
    """The figure of one cell: ``< 0.01`` reads as 0.01, ``—`` or blank as None."""
    text = cell.replace("<", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def cpu_hours(text: str) -> dict[str, float | None]:
    """experiment → its planned CPU hours (None when the table gives none), from the
    ``plans:paper`` table in ``text``.

    Raises:
      ValueError: ``text`` has no such table, or the table has no CPU-hours column.
    """
    if BEGIN not in text or END not in text:
        raise ValueError(f"no {BEGIN} ... {END} table; run `jaxlab plan --all --readme`")
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    if not rows or COLUMN not in _cells(rows[0]):
        raise ValueError(f"the {BEGIN} table has no column {COLUMN!r}")
    column = _cells(rows[0]).index(COLUMN)
    hours = {}
    for line in rows[2:]:
        cells = _cells(line)
        if len(cells) > column:
            hours[cells[0]] = _hours(cells[column])
    return hours


def feasible(text: str, threshold: float = THRESHOLD_HOURS) -> list[str]:
    """The experiments of the ``plans:paper`` table in ``text`` whose planned CPU hours are
    at most ``threshold``, sorted."""
    return sorted(n for n, h in cpu_hours(text).items() if h is not None and h <= threshold)


def feasible_in(readme: str | os.PathLike, threshold: float = THRESHOLD_HOURS) -> list[str]:
    """:func:`feasible` of the README at ``readme``."""
    return feasible(Path(readme).read_text(), threshold)
