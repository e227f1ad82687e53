"""``jaxlab plan``: an experiment's main program compiled ahead of time at a preset's shapes.

Before anyone pays for an accelerator, ``main(name, preset="paper", devices=8)`` compiles
the experiment's main program on an N-device mesh of fake CPU devices from abstract inputs
(``jax.ShapeDtypeStruct`` with shardings; ``jit(...).lower(...).compile()``, nothing is
allocated) and prints:

- memory per device (``compiled.memory_analysis()``: arguments, outputs, temporaries);
- FLOPs and bytes accessed per call of the program (``compiled.cost_analysis()``, per
  device: XLA reports the partitioned, per-device program);
- calls per run, runs, runs per call and per device;
- a *roofline estimate* of the wall time on named accelerator classes:
  ``calls × max(flops / (peak × utilisation), bytes / bandwidth)`` per device, with the
  published peaks below and an assumed utilisation (40 %). It ignores communication, the
  host, the input pipeline and evaluation: a lower-bound-style estimate, said to be one.

Protocol: an experiment opts in by defining in its ``train.py``::

    def plan_program(config, mesh) -> PlanSpec

whose ``fn`` is the program one step of a run executes (XLA's cost analysis counts a loop
body once, so the program is one step, not a whole scan), with ``abstract_args`` placed on
``mesh`` (see :func:`abstract`). XLA:CPU's fake devices stand in for the accelerators: the
memory figures are XLA:CPU's buffer assignment (close to, not equal to, a GPU's or TPU's).

An experiment whose main program is host code (numpy, scikit-learn, causal-learn; no
accelerator program to compile) returns a ``PlanSpec`` with ``host_program`` set to what
dominates its time (see :meth:`PlanSpec.host`): ``jaxlab plan`` then prints "host program:
no accelerator compile; <host_program>" and the runs, not a memory table or a roofline.

Fake CPU devices must be set before JAX starts, so :func:`main` re-runs itself in a
subprocess (``python -m jaxlab.train.plan``, ``XLA_FLAGS=--xla_force_host_platform_device_
count=N``) unless this process already has exactly N CPU devices.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax

from jaxlab.train.mesh import mesh_from_config

#: Assumed share of the peak FLOP/s a well-tuned program reaches (stated in the output).
UTILISATION = 0.4


class Accelerator(NamedTuple):
    """Published per-chip figures of an accelerator class (dense, no sparsity)."""

    name: str
    peak_flops: float  # FLOP/s at JAX's default precision for float32 matmuls (see below)
    bandwidth: float  # HBM bytes/s
    memory: float  # HBM bytes
    source: str


#: float32 matmuls at JAX's default precision run on TF32 tensor cores on A100/H100 and as
#: one bf16 pass on TPUs, so those are the peaks used for this library's float32 programs.
ACCELERATORS = (
    Accelerator("H100 SXM", 494.7e12, 3.35e12, 80e9,
                "NVIDIA H100 Tensor Core GPU datasheet: TF32 494.7 TFLOP/s dense "
                "(BF16 989.4), HBM3 3.35 TB/s, 80 GB"),
    Accelerator("A100 80GB SXM", 156e12, 2.039e12, 80e9,
                "NVIDIA A100 Tensor Core GPU datasheet: TF32 156 TFLOP/s dense "
                "(BF16 312), HBM2e 2,039 GB/s, 80 GB"),
    Accelerator("TPU v5e", 197e12, 819e9, 16e9,
                "Google Cloud TPU v5e documentation: 197 TFLOP/s bf16, HBM2 819 GB/s, 16 GB"),
)


@dataclasses.dataclass(frozen=True)
class PlanSpec:
    """An experiment's main program, as ``plan_program(config, mesh)`` returns it.

    Attributes:
      fn: one step of the main program (jitted or not); for batched runs, one step of
        ``runs_per_call`` runs at once.
      abstract_args: ``fn``'s positional arguments as ``jax.ShapeDtypeStruct`` (with
        shardings on the mesh; see :func:`abstract`).
      steps_per_run: calls of ``fn`` per run (a run's optimisation steps).
      num_runs: runs of the preset (seeds × grid points × methods).
      note: what ``fn`` is and what the plan leaves out, one line.
      runs_per_call: runs advanced by one call (the run batch of ``batch_runs``).
      host_program: set (to what dominates the time) when the main program is host code
        with no accelerator program: nothing is compiled and ``fn`` is ``None``.
    """

    fn: Callable[..., Any] | None
    abstract_args: tuple[Any, ...]
    steps_per_run: int
    num_runs: int
    note: str
    runs_per_call: int = 1
    host_program: str | None = None

    @classmethod
    def host(cls, dominated_by: str, steps_per_run: int, num_runs: int, note: str) -> PlanSpec:
        """The plan of a host program: ``dominated_by`` says what takes its time."""
        return cls(fn=None, abstract_args=(), steps_per_run=steps_per_run, num_runs=num_runs,
                   note=note, host_program=dominated_by)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What :func:`plan` measured (bytes and FLOPs per device)."""

    name: str
    preset: str
    devices: int
    mesh_shape: dict[str, int]
    argument_bytes: int
    output_bytes: int
    temp_bytes: int
    flops_per_call: float
    bytes_per_call: float
    calls: int
    spec: PlanSpec

    @property
    def memory_bytes(self) -> int:
        return self.argument_bytes + self.output_bytes + self.temp_bytes

    @property
    def total_flops(self) -> float:
        """Over all devices and calls."""
        return self.flops_per_call * self.devices * self.calls

    def hours(self, accelerator: Accelerator, utilisation: float = UTILISATION) -> float:
        """Roofline estimate: ``calls × max(flops / (peak·util), bytes / bandwidth)``."""
        per_call = max(self.flops_per_call / (accelerator.peak_flops * utilisation),
                       self.bytes_per_call / accelerator.bandwidth)
        return self.calls * per_call / 3600.0


def abstract(tree: Any, sharding: jax.sharding.Sharding) -> Any:
    """Every leaf of ``tree`` (arrays or ``ShapeDtypeStruct``s, e.g. from ``jax.eval_shape``)
    as a ``jax.ShapeDtypeStruct`` with ``sharding``: abstract inputs, nothing allocated."""
    return jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree)


def plan(name: str, preset: str = "paper") -> Plan:
    """Compiles ``name``'s main program at ``preset`` on this process's devices.

    Raises:
      ValueError: the experiment's ``train.py`` defines no ``plan_program``.
    """
    from jaxlab.report import registry  # the harness imports the report only here

    experiment = registry.get_experiment(name)
    module = importlib.import_module(f"{experiment.module}.train")
    return plan_module(module, experiment.get_config(preset), name)


def plan_module(module: Any, config: Any, name: str = "") -> Plan:
    """:func:`plan` of an experiment's ``train`` module and config.

    Raises:
      ValueError: ``module`` has no ``plan_program``.
    """
    plan_program = getattr(module, "plan_program", None)
    if plan_program is None:
        raise ValueError(
            f"experiment {name!r} cannot be planned: its train.py defines no "
            "plan_program(config, mesh) -> jaxlab.train.plan.PlanSpec")
    mesh = mesh_from_config(config)
    spec = plan_program(config, mesh)
    calls = spec.steps_per_run * math.ceil(spec.num_runs / spec.runs_per_call)
    if spec.host_program is not None:
        return Plan(name=name, preset=config.preset, devices=mesh.size,
                    mesh_shape=dict(mesh.shape), argument_bytes=0, output_bytes=0, temp_bytes=0,
                    flops_per_call=0.0, bytes_per_call=0.0, calls=calls, spec=spec)
    compiled = jax.jit(spec.fn).lower(*spec.abstract_args).compile()
    memory = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    return Plan(name=name, preset=config.preset, devices=mesh.size, mesh_shape=dict(mesh.shape),
                argument_bytes=int(memory.argument_size_in_bytes),
                output_bytes=int(memory.output_size_in_bytes),
                temp_bytes=int(memory.temp_size_in_bytes),
                flops_per_call=float(cost.get("flops", 0.0)),
                bytes_per_call=float(cost.get("bytes accessed", 0.0)),
                calls=calls, spec=spec)


def report(p: Plan, utilisation: float = UTILISATION) -> str:
    """The printed plan (markdown)."""
    gb, mb = 1e9, 1e6
    spec = p.spec
    per_device = math.ceil(min(spec.runs_per_call, spec.num_runs) / p.mesh_shape.get("runs", 1))
    head = [
        f"# plan: {p.name} --preset {p.preset} on {p.devices} devices, mesh {p.mesh_shape}",
        "",
        f"program: {spec.note}",
        "",
    ]
    if spec.host_program is not None:
        return "\n".join([
            *head, f"host program: no accelerator compile; {spec.host_program}",
            f"steps per run: {spec.steps_per_run}; runs: {spec.num_runs}; calls: {p.calls}"])
    lines = [
        *head,
        "| memory per device | MB |",
        "|---|---:|",
        f"| arguments | {p.argument_bytes / mb:.1f} |",
        f"| outputs | {p.output_bytes / mb:.1f} |",
        f"| temporaries | {p.temp_bytes / mb:.1f} |",
        f"| total | {p.memory_bytes / mb:.1f} |",
        "",
        f"FLOPs per call and device: {p.flops_per_call:.3e}; bytes accessed: "
        f"{p.bytes_per_call:.3e}",
        f"steps per run: {spec.steps_per_run}; runs: {spec.num_runs}; runs per call: "
        f"{spec.runs_per_call} ({per_device} per device); calls: {p.calls}",
        f"total FLOPs (all devices): {p.total_flops:.3e}",
        "",
        f"Roofline estimate (not a measurement): calls × max(FLOPs / (peak × {utilisation:.0%}"
        "), bytes / bandwidth) per device; no communication, host or input time.",
        "",
        "| accelerator | fits (memory/device) | hours |",
        "|---|---|---:|",
    ]
    for acc in ACCELERATORS:
        fits = "yes" if p.memory_bytes <= acc.memory else f"no (> {acc.memory / gb:.0f} GB)"
        lines.append(f"| {acc.name} | {fits} | {p.hours(acc, utilisation):.3g} |")
    lines += ["", "Sources: " + "; ".join(acc.source for acc in ACCELERATORS) + "."]
    return "\n".join(lines)


def main(name: str, preset: str = "paper", devices: int = 8) -> int:
    """Prints the plan of ``name`` at ``preset`` on ``devices`` fake CPU devices; exit code.

    Runs in this process when it already has exactly ``devices`` CPU devices (as under
    the tests), else in a subprocess started with that many (JAX fixes its devices when
    it starts). Returns 0, or 2 (with a message on stderr) for an experiment without
    ``plan_program`` or an unknown one.
    """
    if devices < 1:
        raise ValueError(f"devices must be >= 1, got {devices}")
    if jax.default_backend() != "cpu" or jax.device_count() != devices:
        env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices))
        flags = [f for f in env.get("XLA_FLAGS", "").split()
                 if not f.startswith("--xla_force_host_platform_device_count")]
        env["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={devices}"])
        command = [sys.executable, "-m", "jaxlab.train.plan", name, "--preset", preset,
                   "--devices", str(devices)]
        return subprocess.run(command, env=env, check=False).returncode
    try:
        print(report(plan(name, preset)), flush=True)
    except (ValueError, KeyError) as error:
        print(f"jaxlab plan: {error}", file=sys.stderr)
        return 2
    return 0


def _cli(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxlab.train.plan")
    parser.add_argument("name")
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--devices", type=int, default=8)
    args = parser.parse_args(argv)
    return main(args.name, args.preset, args.devices)


if __name__ == "__main__":
    sys.exit(_cli())
