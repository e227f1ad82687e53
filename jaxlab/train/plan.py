"""Plans: an experiment's programs compiled ahead of time at a preset's shapes, and what
they would cost on an accelerator.

:func:`plan_module` compiles the programs an experiment declares (``plan_program(config,
mesh) -> PlanSpec`` in its ``train.py``) on the config's mesh from abstract inputs
(``jax.ShapeDtypeStruct`` with shardings; ``jit(...).lower(...).compile()``, nothing is
allocated) and measures, per device and call:

- memory (``compiled.memory_analysis()``: arguments, outputs, temporaries);
- FLOPs and bytes accessed (``compiled.cost_analysis()``, the partitioned per-device
  program), with every loop body multiplied by its trip count (XLA counts a body once;
  :mod:`jaxlab.train.hlo_cost` reads the counts from the compiled HLO). On an accelerator
  the FLOPs are read from the HLO's dots, convolutions and cuBLAS/cuDNN calls, which XLA's
  figure leaves out;
- the precision the matrix products run at (bf16, TF32, fp32, fp8; from the unoptimised
  HLO), which sets the peak used for that program.

From these a :class:`Plan` gives two estimates per accelerator class, kept apart because
each holds under its own assumption: *compute-bound* hours, ``calls × FLOPs / (peak of the
program's precision × utilisation)``, and *memory-bound* hours, ``calls × bytes /
bandwidth``. The bytes are XLA:CPU's count (its fusion decisions, not a GPU's or TPU's), so
the memory-bound figure is the weaker one. Neither counts communication, the host or the
input pipeline.

A :class:`PlanSpec` may carry further programs (evaluation, sampling) in ``programs``; each
is compiled and costed as its own program, with its own calls per run. Run batches padded
to the mesh's ``runs`` axis are reported as a padding share.

:mod:`jaxlab.train.plan_measure` runs the planned programs on the present devices
(``jaxlab plan --measure K``) and measures the host input pipeline.

``jaxlab plan`` and the README's table (:mod:`jaxlab.report.plans`) print these plans.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import jax

from jaxlab.train import hlo_cost
from jaxlab.train.mesh import RUNS_AXIS, mesh_from_config

#: Assumed share of the peak FLOP/s a well-tuned program reaches (stated in the output).
UTILISATION = 0.4

#: The precision classes a program's matrix products run at (see :mod:`jaxlab.train.hlo_cost`).
PRECISIONS = ("fp8", "int8", "bf16", "tf32", "fp32", "fp64")


@dataclasses.dataclass(frozen=True)
class Accelerator:
    """Published per-chip figures of an accelerator class (dense, no sparsity).

    Attributes:
      name: the class.
      peaks: FLOP/s by precision class (:data:`PRECISIONS`).
      bandwidth: HBM bytes/s.
      memory: HBM bytes.
      source: the datasheet the figures are from.
    """

    name: str
    peaks: Mapping[str, float]
    bandwidth: float
    memory: float
    source: str

    def peak(self, precision: str) -> float:
        """FLOP/s of the matrix units at ``precision`` (``"tf32"`` when unknown)."""
        return self.peaks.get(precision, self.peaks["tf32"])

    @property
    def peak_flops(self) -> float:
        """The peak of float32 matrix products at JAX's default precision (TF32)."""
        return self.peak("tf32")


# Dense (no structured sparsity) tensor-core / MXU peaks from the vendors' datasheets:
# - NVIDIA H100 Tensor Core GPU datasheet (SXM5): FP8 1,978.9 TFLOP/s, INT8 1,978.9 TOPS,
#   BF16/FP16 989.4, TF32 494.7, FP64 tensor core 66.9, FP32 (CUDA cores) 66.9 TFLOP/s;
#   HBM3 3.35 TB/s; 80 GB. (The datasheet's headline figures are twice these, with sparsity.)
# - NVIDIA H200 Tensor Core GPU datasheet (SXM): the H100's compute figures; HBM3e 4.8 TB/s;
#   141 GB.
# - NVIDIA A100 Tensor Core GPU datasheet (80 GB SXM): BF16/FP16 312 TFLOP/s, INT8 624 TOPS,
#   TF32 156, FP64 tensor core 19.5, FP32 19.5 TFLOP/s; HBM2e 2,039 GB/s; 80 GB. No FP8
#   units: FP8 runs at the BF16 rate.
# - Google Cloud TPU v5e documentation: 197 TFLOP/s bf16, 394 TOPS int8; HBM2 819 GB/s; 16 GB.
#   The MXU has no FP8 or TF32 mode: float32 matrix products at JAX's default precision run
#   as one bf16 pass (197), ``precision="highest"`` as six (197 / 6); FP8 runs at the bf16
#   rate; float64 is emulated (counted at the fp32 rate, an upper bound).
ACCELERATORS = (
    Accelerator(
        "H100 SXM",
        {
            "fp8": 1978.9e12,
            "int8": 1978.9e12,
            "bf16": 989.4e12,
            "tf32": 494.7e12,
            "fp32": 66.9e12,
            "fp64": 66.9e12,
        },
        3.35e12,
        80e9,
        "NVIDIA H100 Tensor Core GPU datasheet (SXM5, dense): FP8 1,978.9, BF16 989.4, "
        "TF32 494.7, FP32 66.9 TFLOP/s; HBM3 3.35 TB/s; 80 GB",
    ),
    Accelerator(
        "H200 SXM",
        {
            "fp8": 1978.9e12,
            "int8": 1978.9e12,
            "bf16": 989.4e12,
            "tf32": 494.7e12,
            "fp32": 66.9e12,
            "fp64": 66.9e12,
        },
        4.8e12,
        141e9,
        "NVIDIA H200 Tensor Core GPU datasheet (SXM, dense): the H100's tensor cores (FP8 "
        "1,978.9, BF16 989.4, TF32 494.7, FP32 66.9 TFLOP/s); HBM3e 4.8 TB/s; 141 GB",
    ),
    Accelerator(
        "A100 80GB SXM",
        {
            "fp8": 312e12,
            "int8": 624e12,
            "bf16": 312e12,
            "tf32": 156e12,
            "fp32": 19.5e12,
            "fp64": 19.5e12,
        },
        2.039e12,
        80e9,
        "NVIDIA A100 Tensor Core GPU datasheet (80 GB SXM, dense): BF16 312, TF32 156, "
        "FP32 19.5 TFLOP/s (no FP8: at the BF16 rate); HBM2e 2,039 GB/s; 80 GB",
    ),
    Accelerator(
        "TPU v5e",
        {
            "fp8": 197e12,
            "int8": 394e12,
            "bf16": 197e12,
            "tf32": 197e12,
            "fp32": 197e12 / 6,
            "fp64": 197e12 / 6,
        },
        819e9,
        16e9,
        "Google Cloud TPU v5e documentation: 197 TFLOP/s bf16 (float32 at JAX's "
        "default precision: one bf16 pass; highest: six), 394 TOPS int8; HBM2 819 "
        "GB/s; 16 GB",
    ),
)


@dataclasses.dataclass(frozen=True)
class InputPipeline:
    """The host work that feeds one call of a program: ``example(rng)`` decodes and
    augments one synthetic example on the host (one core), ``examples_per_call`` of them
    feed a call; ``what`` names the work (``"DeiT RandAugment of 224² images"``)."""

    example: Callable[[Any], Any]
    examples_per_call: int
    what: str


@dataclasses.dataclass(frozen=True)
class PlanSpec:
    """An experiment's programs, as ``plan_program(config, mesh)`` returns them.

    Attributes:
      fn: one step of the main program (jitted or not); for batched runs, one step of
        ``runs_per_call`` runs at once. Loops inside it (a scan over inner steps) are
        counted with their trip counts.
      abstract_args: ``fn``'s positional arguments as ``jax.ShapeDtypeStruct`` (with
        shardings on the mesh; see :func:`abstract`).
      steps_per_run: calls of ``fn`` per run (a run's optimisation steps).
      num_runs: runs of the preset (seeds × grid points × methods).
      note: what ``fn`` is and what the plan leaves out, one line.
      runs_per_call: runs advanced by one call (the run batch of ``batch_runs``).
      host_program: set (to what dominates the time) when the main program is host code
        with no accelerator program: nothing is compiled and ``fn`` is ``None``.
      name: the program's name in the plan (``"train"``, ``"eval"``, ``"sample"``).
      programs: further programs of the run (evaluation, sampling), each a ``PlanSpec``
        whose ``steps_per_run`` is its calls per run.
      lanes: runs one call computes, padding included (default: the leading size of the
        arguments split over the mesh's ``runs`` axis, else ``runs_per_call``).
      loop_trips: the trip count assumed for a loop whose count XLA cannot know (a
        ``while_loop`` to convergence; its cap); ``None`` counts such a loop once.
      input_pipeline: the host decoding and augmentation each call needs (measured by
        ``jaxlab plan --measure``), if any.

    A program that is a whole run (a ``lax.scan`` over its steps) has ``steps_per_run=1``:
    its loop is counted at its trip count, once. :func:`plan_spec` refuses a program whose
    outermost loop runs ``steps_per_run > 1`` times, which would count that loop twice.
    """

    fn: Callable[..., Any] | None
    abstract_args: tuple[Any, ...]
    steps_per_run: int
    num_runs: int
    note: str
    runs_per_call: int = 1
    host_program: str | None = None
    name: str = "train"
    programs: tuple[PlanSpec, ...] = ()
    lanes: int | None = None
    loop_trips: int | None = None
    input_pipeline: InputPipeline | None = None

    @classmethod
    def host(cls, dominated_by: str, steps_per_run: int, num_runs: int, note: str) -> PlanSpec:
        """The plan of a host program: ``dominated_by`` says what takes its time."""
        return cls(
            fn=None,
            abstract_args=(),
            steps_per_run=steps_per_run,
            num_runs=num_runs,
            note=note,
            host_program=dominated_by,
        )


@dataclasses.dataclass(frozen=True)
class Plan:
    """What :func:`plan_module` measured for one program (bytes and FLOPs per device and
    call, loops multiplied by their trip counts), and the plans of its further programs.

    Attributes:
      flops_per_call, bytes_per_call: with the loop repeats; ``xla_flops_per_call`` and
        ``xla_bytes_per_call`` are XLA's own figures (bodies once).
      precision_flops: matrix-product FLOPs by precision class (each body once; shares).
      loop_trips: the trip count of each loop (``None``: unknown, counted as
        ``spec.loop_trips`` or once).
      lanes: runs one call computes, padding included.
      programs: the plans of ``spec.programs``.
    """

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
    xla_flops_per_call: float = 0.0
    xla_bytes_per_call: float = 0.0
    precision_flops: Mapping[str, float] = dataclasses.field(default_factory=dict)
    loop_trips: tuple[int | None, ...] = ()
    lanes: int = 1
    programs: tuple[Plan, ...] = ()

    @property
    def memory_bytes(self) -> int:
        return self.argument_bytes + self.output_bytes + self.temp_bytes

    @property
    def total_flops(self) -> float:
        """Over all devices and calls (this program)."""
        return self.flops_per_call * self.devices * self.calls

    @property
    def precision(self) -> str:
        """The precision of most of the matrix-product FLOPs (``"tf32"`` without any)."""
        if not self.precision_flops:
            return "tf32"
        return max(self.precision_flops, key=lambda k: self.precision_flops[k])

    @property
    def padding_share(self) -> float:
        """The share of the computed runs that are padding (copies, not work)."""
        spec = self.spec
        computed = math.ceil(spec.num_runs / spec.runs_per_call) * self.lanes
        return max(0.0, 1.0 - spec.num_runs / computed) if computed else 0.0

    def _seconds_per_flop(self, accelerator: Accelerator, utilisation: float) -> float:
        """Per FLOP, the matrix products split by their precision's peak."""
        total = sum(self.precision_flops.values())
        if not total:
            return 1.0 / (accelerator.peak("tf32") * utilisation)
        return sum(
            share / total / (accelerator.peak(kind) * utilisation)
            for kind, share in self.precision_flops.items()
        )

    def compute_hours(
        self,
        accelerator: Accelerator,
        utilisation: float = UTILISATION,
        *,
        all_programs: bool = False,
    ) -> float:
        """``calls × FLOPs / (peak of the program's precision × utilisation)``."""
        own = (
            self.calls
            * self.flops_per_call
            * self._seconds_per_flop(accelerator, utilisation)
            / 3600.0
        )
        extra = (
            sum(p.compute_hours(accelerator, utilisation, all_programs=True) for p in self.programs)
            if all_programs
            else 0.0
        )
        return own + extra

    def memory_hours(self, accelerator: Accelerator, *, all_programs: bool = False) -> float:
        """``calls × bytes accessed / bandwidth`` (XLA:CPU's bytes)."""
        own = self.calls * self.bytes_per_call / accelerator.bandwidth / 3600.0
        extra = (
            sum(p.memory_hours(accelerator, all_programs=True) for p in self.programs)
            if all_programs
            else 0.0
        )
        return own + extra

    def hours(
        self,
        accelerator: Accelerator,
        utilisation: float = UTILISATION,
        *,
        all_programs: bool = False,
    ) -> float:
        """The roofline estimate: per call, the larger of the compute- and memory-bound
        times, ``calls × max(flops / (peak·util), bytes / bandwidth)``."""
        per_call = max(
            self.flops_per_call * self._seconds_per_flop(accelerator, utilisation),
            self.bytes_per_call / accelerator.bandwidth,
        )
        extra = (
            sum(p.hours(accelerator, utilisation, all_programs=True) for p in self.programs)
            if all_programs
            else 0.0
        )
        return self.calls * per_call / 3600.0 + extra

    def all_plans(self) -> list[Plan]:
        """This plan and its programs' plans, depth first."""
        return [self, *(q for p in self.programs for q in p.all_plans())]

    @property
    def peak_memory_bytes(self) -> int:
        """The largest per-device memory of any of the run's programs."""
        return max(p.memory_bytes for p in self.all_plans())


def abstract(tree: Any, sharding: jax.sharding.Sharding) -> Any:
    """Every leaf of ``tree`` (arrays or ``ShapeDtypeStruct``s, e.g. from ``jax.eval_shape``)
    as a ``jax.ShapeDtypeStruct`` with ``sharding``: abstract inputs, nothing allocated."""
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree)


def plan_module(module: Any, config: Any, name: str = "") -> Plan:
    """Compiles the programs of an experiment's ``train`` module at ``config`` on this
    process's devices (the config's mesh).

    Raises:
      ValueError: ``module`` has no ``plan_program``.
    """
    plan_program = getattr(module, "plan_program", None)
    if plan_program is None:
        raise ValueError(
            f"experiment {name!r} cannot be planned: its train.py defines no "
            "plan_program(config, mesh) -> jaxlab.train.plan.PlanSpec"
        )
    mesh = mesh_from_config(config)
    return plan_spec(plan_program(config, mesh), mesh, config.preset, name)


def _lanes(spec: PlanSpec) -> int:
    """``spec.lanes``, else the leading size of the arguments split over the ``runs`` axis
    (the run batch as computed, padding included), else ``runs_per_call``."""
    if spec.lanes is not None:
        return spec.lanes
    for leaf in jax.tree.leaves(spec.abstract_args):
        sharding_spec = getattr(getattr(leaf, "sharding", None), "spec", None)
        first = sharding_spec[0] if sharding_spec else None
        axes = first if isinstance(first, tuple) else (first,)
        if RUNS_AXIS in axes and tuple(getattr(leaf, "shape", None) or ()):
            return max(int(leaf.shape[0]), spec.runs_per_call)
    return spec.runs_per_call


def _backend(mesh: jax.sharding.Mesh) -> str:
    return str(mesh.devices.flat[0].platform)


def plan_spec(spec: PlanSpec, mesh: jax.sharding.Mesh, preset: str = "", name: str = "") -> Plan:
    """The :class:`Plan` of ``spec`` (and of its ``programs``) on ``mesh``."""
    calls = spec.steps_per_run * math.ceil(spec.num_runs / spec.runs_per_call)
    programs = tuple(plan_spec(p, mesh, preset, name) for p in spec.programs)
    common: dict[str, Any] = dict(
        name=name,
        preset=preset,
        devices=mesh.size,
        mesh_shape=dict(mesh.shape),
        calls=calls,
        spec=spec,
        lanes=_lanes(spec),
        programs=programs,
    )
    if spec.host_program is not None:
        return Plan(
            argument_bytes=0,
            output_bytes=0,
            temp_bytes=0,
            flops_per_call=0.0,
            bytes_per_call=0.0,
            **common,
        )
    if spec.fn is None:
        raise ValueError(f"{name}: PlanSpec {spec.name!r} has neither fn nor host_program")
    lowered = jax.jit(spec.fn).lower(*spec.abstract_args)
    compiled = lowered.compile()
    memory: Any = compiled.memory_analysis()
    cost: Any = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    flops, traffic = float(cost.get("flops", 0.0)), float(cost.get("bytes accessed", 0.0))
    text = compiled.as_text() or ""
    loops = hlo_cost.loop_correction(text, spec.loop_trips)
    outer = hlo_cost.outer_loop_trips(text)
    if spec.steps_per_run > 1 and spec.steps_per_run in outer:
        raise ValueError(
            f"{name}: program {spec.name!r} loops {spec.steps_per_run} times itself and is "
            f"called steps_per_run={spec.steps_per_run} times per run: a program that is "
            "the whole run has steps_per_run=1 (its loops are counted at their trip counts)"
        )
    counted = flops + loops.extra_flops
    if _backend(mesh) != "cpu":  # library GEMMs and convolutions: not in XLA's figure
        counted = max(counted, loops.flops)
    try:
        hlo: Any = lowered.compiler_ir("hlo")
        precision = hlo_cost.matmul_flops_by_dtype(hlo.as_hlo_text())
    except Exception:  # a backend without HLO text: TF32 (the float32 default) is assumed
        precision = {}
    return Plan(
        argument_bytes=int(memory.argument_size_in_bytes),
        output_bytes=int(memory.output_size_in_bytes),
        temp_bytes=int(memory.temp_size_in_bytes),
        flops_per_call=counted,
        bytes_per_call=traffic + loops.extra_bytes,
        xla_flops_per_call=flops,
        xla_bytes_per_call=traffic,
        precision_flops=precision,
        loop_trips=loops.trips,
        **common,
    )
