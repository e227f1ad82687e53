"""The README's table of every experiment's preset planned on N devices (``jaxlab plan --all``).

``table(preset, devices)`` plans each registered experiment with
:func:`jaxlab.train.plan.plan` in one process that has ``devices`` fake CPU devices (a
subprocess, as ``jaxlab plan`` starts one), and renders one markdown row per experiment:
mesh, program, memory per device, total FLOPs, and the roofline estimate of the hours on
each accelerator class of :data:`jaxlab.train.plan.ACCELERATORS`. ``jaxlab plan --all
--readme README.md`` writes it between ``<!-- plans:<preset> -->`` and
``<!-- /plans:<preset> -->``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jax

from jaxlab.report import registry
from jaxlab.train import plan as plan_lib


def _row(name: str, preset: str) -> dict[str, Any]:
    try:
        p = plan_lib.plan(name, preset)
    except Exception as error:  # one experiment's failure is that row's content
        return {"experiment": name, "error": f"{type(error).__name__}: {error}"}
    if p.spec.host_program is not None:
        return {"experiment": name, "host": p.spec.host_program}
    return {
        "experiment": name,
        "mesh": " × ".join(f"{k} {v}" for k, v in p.mesh_shape.items() if v > 1) or "1 device",
        "program": p.spec.note,
        "memory_bytes": p.memory_bytes,
        "total_flops": p.total_flops,
        "hours": {a.name: p.hours(a) for a in plan_lib.ACCELERATORS},
        "fits": {a.name: p.memory_bytes <= a.memory for a in plan_lib.ACCELERATORS},
    }


def plan_rows(preset: str = "paper", devices: int = 8) -> list[dict[str, Any]]:
    """One row per registered experiment: ``{"experiment", "error"}`` where planning
    failed, ``{"experiment", "host"}`` for a host program. Runs in a subprocess with
    ``devices`` fake CPU devices unless this process has exactly that many."""
    if jax.default_backend() == "cpu" and jax.device_count() == devices:
        return [_row(name, preset) for name in registry.discover()]
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices))
    command = [sys.executable, "-m", "jaxlab.report.plans", preset, str(devices)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _hours(value: float) -> str:
    return "< 0.01" if value < 0.01 else f"{value:.3g}"


def markdown(rows: list[dict[str, Any]], devices: int) -> str:
    """The table: one row per experiment."""
    names = [a.name for a in plan_lib.ACCELERATORS]
    lines = [f"| experiment | mesh ({devices} devices) | program planned | memory / device "
             f"| total FLOPs | est. hours {' / '.join(names)} |",
             "|---|---|---|---:|---:|---|"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['experiment']} | — | not planned: {row['error']} | — | — | — |")
            continue
        if "host" in row:
            lines.append(f"| {row['experiment']} | — | host program, no accelerator compile: "
                         f"{row['host']} | — | — | — |")
            continue
        fits = "" if all(row["fits"].values()) else " (does not fit: " + ", ".join(
            n for n, ok in row["fits"].items() if not ok) + ")"
        lines.append(
            f"| {row['experiment']} | {row['mesh']} | {row['program']} | "
            f"{row['memory_bytes'] / 1e9:.3g} GB{fits} | {row['total_flops']:.2g} | "
            f"{' / '.join(_hours(row['hours'][n]) for n in names)} |")
    return "\n".join(lines)


def write_readme(readme: str | os.PathLike, table_md: str, preset: str = "paper") -> None:
    """Replaces the README's ``plans:<preset>`` block with ``table_md``.

    Raises:
      ValueError: the README has no such block.
    """
    path = Path(readme)
    begin, end = f"<!-- plans:{preset} -->", f"<!-- /plans:{preset} -->"
    text = path.read_text()
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path} has no block {begin} ... {end}")
    path.write_text(pattern.sub(lambda _: f"{begin}\n{table_md}\n{end}", text))


if __name__ == "__main__":
    print(json.dumps(plan_rows(sys.argv[1], int(sys.argv[2]))))
