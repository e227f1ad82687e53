"""``jaxlab.train.plan`` and ``jaxlab plan``: programs compiled on 8 fake devices from
abstract inputs; memory, FLOPs (loops times their trip counts), matmul precision, padding and
further programs against closed forms."""

import dataclasses
import types

import jax
import jax.numpy as jnp
import ml_collections
import pytest
from jax.sharding import NamedSharding, PartitionSpec

from jaxlab.report import plans, registry
from jaxlab.train import hlo_cost, make_mesh, plan

N, K, M = 1024, 256, 128


def _matmul_spec(mesh, dtype=jnp.float32, **kwargs):
    rows = NamedSharding(mesh, PartitionSpec("data"))
    rep = NamedSharding(mesh, PartitionSpec())
    args = (
        jax.ShapeDtypeStruct((N, K), dtype, sharding=rows),
        jax.ShapeDtypeStruct((K, M), dtype, sharding=rep),
    )
    return plan.PlanSpec(
        fn=jnp.matmul, abstract_args=args, steps_per_run=10, num_runs=3, note="a matmul", **kwargs
    )


def _plan(spec_fn, preset="smoke"):
    config = ml_collections.ConfigDict({"preset": preset, "mesh": {"data": -1}})
    return plan.plan_module(types.SimpleNamespace(plan_program=spec_fn), config, "toy")


@pytest.mark.devices(8)
def test_a_matmul_plan_counts_its_flops_per_device():
    """Sharded rows: every device does 1/8 of 2·n·k·m FLOPs and holds 1/8 of the rows."""
    p = _plan(lambda config, mesh: _matmul_spec(mesh))
    assert p.devices == 8 and p.calls == 30
    assert p.flops_per_call == pytest.approx(2 * N * K * M / 8, rel=0.01)
    assert p.argument_bytes == 4 * (N * K // 8 + K * M)
    assert p.output_bytes == 4 * N * M // 8
    assert p.precision == "tf32" and p.loop_trips == () and p.padding_share == 0.0
    h100 = plan.ACCELERATORS[0]
    compute = 30 * p.flops_per_call / (494.7e12 * plan.UTILISATION) / 3600
    memory = 30 * p.bytes_per_call / h100.bandwidth / 3600
    assert p.compute_hours(h100) == pytest.approx(compute)
    assert p.memory_hours(h100) == pytest.approx(memory)
    assert p.hours(h100) == pytest.approx(max(compute, memory))
    text = plans.report(p)
    assert "compute-bound hours | memory-bound hours" in text and "| tf32 |" in text


@pytest.mark.parametrize(
    "dtype, precision, peaks",
    [
        (jnp.bfloat16, "bf16", (989.4e12, 989.4e12, 312e12, 197e12)),
        (jnp.float8_e4m3fn, "fp8", (1978.9e12, 1978.9e12, 312e12, 197e12)),
    ],
)
def test_the_peak_is_the_one_of_the_programs_precision(dtype, precision, peaks):
    p = _plan(lambda config, mesh: _matmul_spec(mesh, dtype))
    assert p.precision == precision
    for accelerator, peak in zip(plan.ACCELERATORS, peaks, strict=True):
        assert p.compute_hours(accelerator) == pytest.approx(
            p.calls * p.flops_per_call / (peak * plan.UTILISATION) / 3600
        )


def test_highest_precision_float32_is_rated_at_the_fp32_peak():
    def highest(x, w):
        return jnp.matmul(x, w, precision="highest")

    p = _plan(lambda config, mesh: dataclasses.replace(_matmul_spec(mesh), fn=highest))
    assert p.precision == "fp32"
    assert plan.ACCELERATORS[0].peak(p.precision) == 66.9e12


def test_loop_bodies_count_their_trip_counts():
    """A scan of 7 steps, each a scan of 3 matmuls, then one more matmul: 22 matmuls."""

    def program(x, w):
        def outer(c, _):
            c, _ = jax.lax.scan(lambda c, _: (jnp.tanh(c @ w), None), c, None, length=3)
            return c, None

        y, _ = jax.lax.scan(outer, x, None, length=7)
        return y @ w

    def spec_fn(config, mesh):
        rep = NamedSharding(mesh, PartitionSpec())
        args = (
            jax.ShapeDtypeStruct((32, 64), jnp.float32, sharding=rep),
            jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=rep),
        )
        return plan.PlanSpec(
            fn=program, abstract_args=args, steps_per_run=1, num_runs=1, note="nested scans"
        )

    p = _plan(spec_fn)
    matmul = 2 * 32 * 64 * 64
    assert p.loop_trips == (7, 3)
    assert p.xla_flops_per_call < 3 * matmul  # XLA: each body once
    assert p.flops_per_call == pytest.approx(22 * matmul, rel=0.03)
    assert p.bytes_per_call > 5 * p.xla_bytes_per_call


def test_a_loop_of_unknown_trip_count_counts_the_assumed_trips():
    def program(x, w, n):
        return jax.lax.fori_loop(0, n, lambda i, c: c @ w, x)

    def spec_fn(trips):
        def make(config, mesh):
            rep = NamedSharding(mesh, PartitionSpec())
            args = (
                jax.ShapeDtypeStruct((32, 64), jnp.float32, sharding=rep),
                jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=rep),
                jax.ShapeDtypeStruct((), jnp.int32, sharding=rep),
            )
            return plan.PlanSpec(
                fn=program,
                abstract_args=args,
                steps_per_run=1,
                num_runs=1,
                note="a while loop",
                loop_trips=trips,
            )

        return make

    once, fifty = _plan(spec_fn(None)), _plan(spec_fn(50))
    assert once.loop_trips == (None,) and fifty.loop_trips == (None,)
    assert fifty.flops_per_call == pytest.approx(50 * once.flops_per_call, rel=0.05)
    assert "? (once)" in plans.report(once) and "50 (assumed)" in plans.report(fifty)


@pytest.mark.devices(8)
def test_padded_run_batches_report_their_share():
    """5 runs on a runs-8 mesh: each call computes 8 lanes, 3 of them copies."""

    def spec_fn(config, mesh):
        lanes = NamedSharding(mesh, PartitionSpec("runs"))
        args = (jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=lanes),)
        return plan.PlanSpec(
            fn=lambda x: x * 2,
            abstract_args=args,
            steps_per_run=4,
            num_runs=5,
            runs_per_call=5,
            note="padded runs",
        )

    config = ml_collections.ConfigDict({"preset": "smoke", "mesh": {"runs": -1}})
    p = plan.plan_module(types.SimpleNamespace(plan_program=spec_fn), config, "pad")
    assert p.lanes == 8 and p.padding_share == pytest.approx(3 / 8)
    assert "8 computed, 1 per device; padding 38%" in plans.report(p)
    mesh = make_mesh({"runs": -1})
    explicit = plan.plan_spec(dataclasses.replace(spec_fn(config, mesh), lanes=5), mesh)
    assert explicit.padding_share == 0.0


def test_evaluation_and_sampling_are_programs_of_their_own():
    def spec_fn(config, mesh):
        sample = dataclasses.replace(_matmul_spec(mesh), name="sample", steps_per_run=1000)
        return _matmul_spec(mesh, programs=(sample,))

    p = _plan(spec_fn)
    assert [q.spec.name for q in p.all_plans()] == ["train", "sample"]
    sample = p.programs[0]
    assert sample.calls == 3000 and p.calls == 30
    h100 = plan.ACCELERATORS[0]
    assert p.compute_hours(h100, all_programs=True) == pytest.approx(101 * p.compute_hours(h100))
    text = plans.report(p)
    assert "| sample | 3000 |" in text and "| train | 30 |" in text


def test_an_experiment_without_plan_program_is_refused():
    config = ml_collections.ConfigDict({"preset": "smoke"})
    with pytest.raises(ValueError, match="plan_program"):
        plan.plan_module(types.SimpleNamespace(), config, "none")


def test_the_hlo_reader_parses_instructions_and_computations():
    text = (
        "HloModule m\n\n%body (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
        "  ROOT %t = f32[4]{0} tanh(%p)\n}\n\nENTRY %main (a: f32[4]) -> f32[4] {\n"
        "  %a = f32[4]{0} parameter(0)\n  ROOT %w = (s32[], f32[4]{0}) while(%a), "
        'condition=%c, body=%body, backend_config={"known_trip_count":{"n":"5"}}\n}\n'
    )
    computations, entry = hlo_cost.parse_hlo(text)
    assert entry == "main" and set(computations) == {"body", "main"}
    w = computations["main"][1]
    assert (w.opcode, w.operands, w.shapes) == ("while", ("a",), (("s32", ()), ("f32", (4,))))
    correction = hlo_cost.loop_correction(text)
    assert correction.trips == (5,) and correction.extra_flops == 4 * 4


@pytest.mark.devices(8)
def test_multimax_tradeoff_smoke_plan_on_8_devices(capsys):
    assert plans.main("multimax_tradeoff", "smoke", devices=8) == 0  # in-process: 8 devices
    out = capsys.readouterr().out
    assert "mesh {'runs': 8}" in out and "TPU v5e" in out
    p = plans.plan("multimax_tradeoff", "smoke")
    config = registry.get_experiment("multimax_tradeoff").get_config("smoke")
    assert p.memory_bytes > 0 and p.flops_per_call > 0
    assert p.calls == 2 * config.fit_steps  # all seeds in one call per step
    # the scores [runs, vectors, entries] are split over the 8 devices: one run each
    scores = p.spec.abstract_args[1]
    assert scores.shape[0] == 8 and scores.sharding.spec == PartitionSpec("runs")
    assert p.argument_bytes < 8 * config.num_vectors * config.num_entries * 5
    assert p.lanes == 8
    assert make_mesh({"runs": -1}).size == 8


@pytest.mark.slow
def test_main_reexecutes_itself_with_the_asked_device_count(capfd):
    """This process has 8 devices; a plan on 2 runs in a subprocess with 2 fake devices."""
    assert plans.main("multimax_tradeoff", "smoke", devices=2) == 0
    assert "on 2 devices, mesh {'runs': 2}" in capfd.readouterr().out
    assert plans.main("no_such_experiment", "smoke", devices=2) == 2
