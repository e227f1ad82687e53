"""``jaxlab plan``: an experiment's programs compiled at a preset's shapes on N fake devices,
and the README's table of every experiment's plan (``jaxlab plan --all``).

``main(name, preset="paper", devices=8)`` prints one experiment's plan
(:func:`jaxlab.train.plan.plan_module`): memory per device, FLOPs and bytes per call with
loop bodies multiplied by their trip counts, the precision of its matrix products, the
padding share of its run batches, and per accelerator class of
:data:`jaxlab.train.plan.ACCELERATORS` the compute-bound and memory-bound hours, in
separate columns, for every program of the run (training, evaluation, sampling), and the
CPU hours of the whole preset on this machine (:func:`cpu_hours`). With ``measure=K`` it
plans on the present devices and runs K calls of each program
(:func:`jaxlab.train.plan_measure.measure`): measured seconds per call beside the
estimate, achieved FLOP/s, share of the peak, and the host input pipeline's rate.

``plan_rows(preset, devices)`` plans every registered experiment in one process with
``devices`` fake CPU devices, and :func:`markdown` renders one row per experiment, with
whether its ``paper`` preset runs today (:func:`runnable`). ``jaxlab plan --all --readme
README.md`` writes the table between ``<!-- plans:<preset> -->`` and
``<!-- /plans:<preset> -->``.

Fake CPU devices must be set before JAX starts, so :func:`main` and :func:`plan_rows` re-run
in a subprocess (``python -m jaxlab.report.plans``, ``XLA_FLAGS=--xla_force_host_platform_
device_count=N``) unless this process already has exactly N CPU devices.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax

from jaxlab.report import registry
from jaxlab.train import plan as plan_lib
from jaxlab.train import plan_measure
from jaxlab.train.plan import ACCELERATORS, UTILISATION, Plan
from jaxlab.train.precision import numerics_scope

#: The longest text of the table's runnable column.
_MISSING_CHARS = 160


def plan(name: str, preset: str = "paper") -> Plan:
    """Compiles ``name``'s programs at ``preset`` on this process's devices, traced at the
    preset's ``matmul_precision`` as its run is (:func:`jaxlab.train.precision.numerics_scope`):
    a float32 program at ``"highest"`` is planned at the fp32 rate, not at TF32's.

    Raises:
      ValueError: the experiment's ``train.py`` defines no ``plan_program``.
      KeyError: no such experiment.
    """
    module, config = _train_module(name, preset)
    with numerics_scope(config):
        return plan_lib.plan_module(module, config, name)


def plan_and_measure(
    name: str, preset: str, steps: int
) -> tuple[Plan, list[plan_measure.Measurement]]:
    """:func:`plan`, then ``steps`` timed calls of each of its programs on the present
    devices (:func:`jaxlab.train.plan_measure.measure`), at the same precision.

    Raises:
      ValueError: no ``plan_program``, or ``steps < 1``.
      KeyError: no such experiment.
    """
    module, config = _train_module(name, preset)
    with numerics_scope(config):
        p = plan_lib.plan_module(module, config, name)
        return p, plan_measure.measure(p, steps)


def _train_module(name: str, preset: str) -> tuple[Any, Any]:
    experiment = registry.get_experiment(name)
    module = importlib.import_module(f"{experiment.module}.train")
    return module, experiment.get_config(preset)


def runnable(name: str) -> str:
    """Whether ``name``'s ``paper`` preset runs today: ``"yes"`` when it is the paper's
    experiment, ``"yes, differs: "`` and how when it runs a stated variant (from the config
    module's ``PAPER_SETTING.difference``), ``"no: "`` and what is missing when the config
    module has no ``PAPER_SETTING`` or no ``dry_run`` (the preset is untested)."""
    experiment = registry.get_experiment(name)
    module = importlib.import_module(f"{experiment.module}.config")
    setting = getattr(module, "PAPER_SETTING", None)
    missing = []
    if setting is None:
        missing.append("no PAPER_SETTING in config.py")
    if getattr(module, "dry_run", None) is None:
        missing.append("no dry_run in config.py (the paper preset is untested)")
    if missing:
        return _clipped("no: " + "; ".join(missing))
    difference = " ".join(str(getattr(setting, "difference", "same")).split())
    return "yes" if difference == "same" else _clipped(f"yes, differs: {difference}")


def _clipped(text: str) -> str:
    if len(text) > _MISSING_CHARS:
        return text[: _MISSING_CHARS - 3].rstrip() + "..."
    return text


def _trips(p: Plan) -> str:
    """The loops' trip counts, equal ones merged (``"5 ×3, 100, ? (once)"``)."""
    if not p.loop_trips:
        return "none"
    assumed = p.spec.loop_trips
    shown = [
        str(t) if t is not None else (f"{assumed} (assumed)" if assumed else "? (once)")
        for t in p.loop_trips
    ]
    counts = {text: shown.count(text) for text in shown}  # in first-seen order
    return ", ".join(text if n == 1 else f"{text} ×{n}" for text, n in counts.items())


def cpu_hours(p: Plan) -> float:
    """The whole preset's programs (every device's share) run on this machine's CPU, at its
    measured matmul rate and copy bandwidth (:func:`jaxlab.train.plan_measure.host_rates`,
    reached in full): ``devices × calls × max(FLOPs / rate, bytes / bandwidth)``."""
    return p.devices * p.hours(plan_measure.host_rates(), 1.0, all_programs=True)


def measured(measurements: Sequence[plan_measure.Measurement]) -> str:
    """The ``--measure`` table: measured seconds per call beside the estimate."""
    device = jax.devices()[0]
    lines = [
        f"Measured on {jax.device_count()} × {device.device_kind} ({device.platform}), "
        "synthetic inputs, after one warm-up call:",
        "",
        "| program | s / call measured | s / call estimated | achieved FLOP/s / device "
        "| share of peak | hours measured (whole preset) | input examples/s/core "
        "| host cores / device |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def fmt(value: float | None, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    for m in measurements:
        lines.append(
            f"| {m.name} | {m.seconds_per_call:.4g} | {fmt(m.estimated_seconds_per_call, '.4g')} "
            f"| {m.flops_per_second:.3e} | {fmt(m.peak_share, '.1%')} | {m.hours:.3g} "
            f"| {fmt(m.input_examples_per_second_per_core, '.3g')} "
            f"| {fmt(m.host_cores_per_device, '.2g')} |"
        )
    return "\n".join(lines)


def report(p: Plan, utilisation: float = UTILISATION) -> str:
    """The printed plan (markdown)."""
    mb, gb = 1e6, 1e9
    spec = p.spec
    per_device = math.ceil(p.lanes / p.mesh_shape.get("runs", 1))
    head = [
        f"# plan: {p.name} --preset {p.preset} on {p.devices} devices, mesh {p.mesh_shape}",
        "",
        f"program: {spec.note}",
        "",
    ]
    if spec.host_program is not None:
        return "\n".join(
            [
                *head,
                f"host program: no accelerator compile; {spec.host_program}",
                f"steps per run: {spec.steps_per_run}; runs: {spec.num_runs}; calls: {p.calls}",
            ]
        )
    lines = [
        *head,
        f"runs: {spec.num_runs}; runs per call: {spec.runs_per_call} ({p.lanes} computed, "
        + (f"{per_device} per device; " if "runs" in p.mesh_shape else "")
        + f"padding {p.padding_share:.0%})",
        "",
        "| program | calls | memory / device MB (args + out + temp) | FLOPs / call / device "
        "| bytes / call / device | loop trips | matmul precision |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    plans = p.all_plans()
    for q in plans:
        if q.spec.host_program is not None:
            lines.append(
                f"| {q.spec.name} | {q.calls} | host program: {q.spec.host_program} "
                "| — | — | — | — |"
            )
            continue
        lines.append(
            f"| {q.spec.name} | {q.calls} | {q.memory_bytes / mb:.1f} ({q.argument_bytes / mb:.1f}"
            f" + {q.output_bytes / mb:.1f} + {q.temp_bytes / mb:.1f}) | {q.flops_per_call:.3e} | "
            f"{q.bytes_per_call:.3e} | {_trips(q)} | {q.precision} |"
        )
    lines += [
        "",
        f"total FLOPs (all devices, all programs): {sum(q.total_flops for q in plans):.3e}",
        "",
        "Estimates, not measurements: compute-bound = calls × FLOPs / (peak of the program's "
        f"precision × {utilisation:.0%}); memory-bound = calls × bytes / bandwidth (XLA:CPU's "
        "bytes accessed); per device; no communication, host or input time.",
        "",
        "| accelerator | fits (memory/device) | compute-bound hours | memory-bound hours |",
        "|---|---|---:|---:|",
    ]
    for acc in ACCELERATORS:
        fits = "yes" if p.peak_memory_bytes <= acc.memory else f"no (> {acc.memory / gb:.0f} GB)"
        lines.append(
            f"| {acc.name} | {fits} | "
            f"{p.compute_hours(acc, utilisation, all_programs=True):.3g} | "
            f"{p.memory_hours(acc, all_programs=True):.3g} |"
        )
    pipeline = spec.input_pipeline
    if pipeline is not None:
        rate = plan_measure.input_rate(pipeline)
        need = ", ".join(
            f"{acc.name} {pipeline.examples_per_call / p.devices / seconds / rate:.2g}"
            for acc in ACCELERATORS
            if (seconds := p.hours(acc, utilisation) * 3600.0 / max(p.calls, 1)) > 0
        )
        lines += [
            "",
            f"Host input ({pipeline.what}): {rate:.3g} examples/s on one core of this machine; "
            f"host cores per device at the estimated train step: {need}.",
        ]
    host = plan_measure.host_rates()
    lines += [
        "",
        f"CPU hours on this machine: {cpu_hours(p):.3g} (every device's share run on "
        f"{host.name}; {host.source}).",
        "",
        "Sources: " + "; ".join(acc.source for acc in ACCELERATORS) + ".",
    ]
    return "\n".join(lines)


def _subprocess_env(devices: int) -> dict[str, str]:
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices))
    flags = [
        f
        for f in env.get("XLA_FLAGS", "").split()
        if not f.startswith("--xla_force_host_platform_device_count")
    ]
    env["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={devices}"])
    return env


def _has_devices(devices: int) -> bool:
    return jax.default_backend() == "cpu" and jax.device_count() == devices


def main(name: str, preset: str = "paper", devices: int = 8, measure: int = 0) -> int:
    """Prints the plan of ``name`` at ``preset`` on ``devices`` fake CPU devices; exit code.

    Runs in this process when it already has exactly ``devices`` CPU devices (as under
    the tests), else in a subprocess started with that many (JAX fixes its devices when
    it starts). With ``measure`` > 0 the plan is compiled on the present devices instead
    (``devices`` is not used) and each program runs ``measure`` timed calls
    (:func:`jaxlab.train.plan_measure.measure`). Returns 0, or 2 (with a message on
    stderr) for an experiment without ``plan_program`` or an unknown one.
    """
    if devices < 1:
        raise ValueError(f"devices must be >= 1, got {devices}")
    if measure > 0:
        try:
            p, measurements = plan_and_measure(name, preset, measure)
        except (ValueError, KeyError) as error:
            print(f"jaxlab plan: {error}", file=sys.stderr)
            return 2
        print(report(p), "", measured(measurements), sep="\n", flush=True)
        return 0
    if not _has_devices(devices):
        command = [
            sys.executable,
            "-m",
            "jaxlab.report.plans",
            name,
            "--preset",
            preset,
            "--devices",
            str(devices),
        ]
        return subprocess.run(command, env=_subprocess_env(devices), check=False).returncode
    try:
        print(report(plan(name, preset)), flush=True)
    except (ValueError, KeyError) as error:
        print(f"jaxlab plan: {error}", file=sys.stderr)
        return 2
    return 0


def _row(name: str, preset: str) -> dict[str, Any]:
    status = runnable(name) if preset == "paper" else ""
    try:
        p = plan(name, preset)
    except Exception as error:  # one experiment's failure is that row's content
        return {"experiment": name, "error": f"{type(error).__name__}: {error}", "runnable": status}
    if p.spec.host_program is not None:
        return {"experiment": name, "host": p.spec.host_program, "runnable": status}
    plans = p.all_plans()
    return {
        "experiment": name,
        "mesh": " × ".join(f"{k} {v}" for k, v in p.mesh_shape.items() if v > 1) or "1 device",
        "program": p.spec.note,
        "programs": [q.spec.name for q in plans],
        "precision": ", ".join(
            dict.fromkeys(q.precision for q in plans if q.spec.host_program is None)
        ),
        "loops": "; ".join(f"{q.spec.name} {_trips(q)}" for q in plans if q.loop_trips),
        "padding": p.padding_share,
        "memory_bytes": p.peak_memory_bytes,
        "total_flops": sum(q.total_flops for q in plans),
        "compute_hours": {a.name: p.compute_hours(a, all_programs=True) for a in ACCELERATORS},
        "memory_hours": {a.name: p.memory_hours(a, all_programs=True) for a in ACCELERATORS},
        "fits": {a.name: p.peak_memory_bytes <= a.memory for a in ACCELERATORS},
        "cpu_hours": cpu_hours(p),
        "runnable": status,
    }


def plan_rows(preset: str = "paper", devices: int = 8) -> list[dict[str, Any]]:
    """One row per registered experiment: ``{"experiment", "error"}`` where planning
    failed, ``{"experiment", "host"}`` for a host program. Runs in a subprocess with
    ``devices`` fake CPU devices unless this process has exactly that many."""
    if _has_devices(devices):
        return [_row(name, preset) for name in registry.discover()]
    command = [
        sys.executable,
        "-m",
        "jaxlab.report.plans",
        "--rows",
        preset,
        "--devices",
        str(devices),
    ]
    done = subprocess.run(
        command, env=_subprocess_env(devices), check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _hours(value: float) -> str:
    return "< 0.01" if value < 0.01 else f"{value:.3g}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[dict[str, Any]], devices: int) -> str:
    """The table: one row per experiment; its last paragraph states how the CPU hours
    are estimated."""
    names = [a.name for a in ACCELERATORS]
    hours = " / ".join(names)
    lines = [
        f"| experiment | mesh ({devices} devices) | programs planned | matmul precision "
        f"| memory / device | total FLOPs | compute-bound h {hours} "
        f"| memory-bound h {hours} | CPU hours on this machine | padding | runnable today |",
        "|---|---|---|---|---:|---:|---|---|---:|---:|---|",
    ]
    for row in rows:
        status = _cell(row.get("runnable") or "—")
        if "error" in row:
            lines.append(
                f"| {row['experiment']} | — | not planned: {_cell(row['error'])} "
                f"| — | — | — | — | — | — | — | {status} |"
            )
            continue
        if "host" in row:
            lines.append(
                f"| {row['experiment']} | — | host program, no accelerator compile: "
                f"{_cell(row['host'])} | — | — | — | — | — | — | — | {status} |"
            )
            continue
        fits = (
            ""
            if all(row["fits"].values())
            else " (does not fit: " + ", ".join(n for n, ok in row["fits"].items() if not ok) + ")"
        )
        programs = row.get("programs") or ["train"]
        extra = f" (+ {', '.join(programs[1:])})" if len(programs) > 1 else ""
        loops = f"; loops: {row['loops']}" if row.get("loops") else ""
        lines.append(
            f"| {row['experiment']} | {row['mesh']} | {_cell(row['program'])}{extra}{loops} | "
            f"{row.get('precision', 'tf32')} | {row['memory_bytes'] / 1e9:.3g} GB{fits} | "
            f"{row['total_flops']:.2g} | "
            f"{' / '.join(_hours(row['compute_hours'][n]) for n in names)} | "
            f"{' / '.join(_hours(row['memory_hours'][n]) for n in names)} | "
            f"{_hours(row['cpu_hours'])} | {row.get('padding', 0.0):.0%} | {status} |"
        )
    host = plan_measure.host_rates()
    lines += [
        "",
        f"CPU hours on this machine: every device's share of the whole preset on {host.name}, "
        f"at its measured rates ({host.source}).",
    ]
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


def _cli(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxlab.report.plans")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--rows", metavar="PRESET", help="print every experiment's row as JSON")
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--measure", type=int, default=0)
    args = parser.parse_args(argv)
    if args.rows:
        print(json.dumps(plan_rows(args.rows, args.devices)))
        return 0
    if args.name is None:
        parser.error("give an experiment NAME or --rows PRESET")
    return main(args.name, args.preset, args.devices, args.measure)


if __name__ == "__main__":
    sys.exit(_cli())
