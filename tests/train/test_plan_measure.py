"""``jaxlab plan``'s counts and measurements: a loop counted once at its trip count, the
cuBLAS/cuDNN calls of GPU HLO counted from their shapes, the planned programs run on the
present devices (8 fake CPU devices) with their rates related as stated."""

import dataclasses
import importlib
import math
import types

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec

from jaxlab.data import imagenet, wikitext
from jaxlab.report import plans, registry
from jaxlab.train import hlo_cost, mesh_from_config, plan, plan_measure

M, K, T, STEPS, RUNS = 64, 32, 12, 5, 3


def _scan_spec(mesh, steps_per_run=STEPS, **kwargs):
    """``T`` matmuls ``[M, K] @ [K, K]`` in a scan (rows split over ``data``), called
    ``steps_per_run`` times in each of ``RUNS`` runs."""
    rows = NamedSharding(mesh, PartitionSpec("data"))
    rep = NamedSharding(mesh, PartitionSpec())

    def program(x, w):
        return jax.lax.scan(lambda c, _: (c @ w, None), x, None, length=T)[0]

    args = (
        jax.ShapeDtypeStruct((M, K), jnp.float32, sharding=rows),
        jax.ShapeDtypeStruct((K, K), jnp.float32, sharding=rep),
    )
    return plan.PlanSpec(
        fn=program,
        abstract_args=args,
        steps_per_run=steps_per_run,
        num_runs=RUNS,
        note="a scan of matmuls",
        **kwargs,
    )


def _plan(spec_fn):
    config = ml_collections.ConfigDict({"preset": "smoke", "mesh": {"data": -1}})
    return plan.plan_module(types.SimpleNamespace(plan_program=spec_fn), config, "toy")


def test_a_scanned_matmul_called_s_times_counts_each_loop_once():
    p = _plan(lambda config, mesh: _scan_spec(mesh))
    assert p.loop_trips == (T,) and p.calls == STEPS * RUNS
    assert p.total_flops == pytest.approx(2 * M * K * K * T * STEPS * RUNS, rel=1e-3)


def test_on_an_accelerator_the_flops_are_read_from_the_hlo(monkeypatch):
    """The accelerator branch counts the HLO's own instructions: the same closed form."""
    monkeypatch.setattr(plan, "_backend", lambda mesh: "gpu")
    p = _plan(lambda config, mesh: _scan_spec(mesh))
    assert p.total_flops == pytest.approx(2 * M * K * K * T * STEPS * RUNS, rel=1e-2)


def test_a_whole_run_program_called_once_per_step_is_refused():
    """A scan over the run's T steps, declared as T calls: its loop would count twice."""
    with pytest.raises(ValueError, match="steps_per_run=1"):
        _plan(lambda config, mesh: _scan_spec(mesh, steps_per_run=T))


def _gemm(lhs, out, contracting):
    dims = ",".join(f'"{d}"' for d in contracting)
    return (
        f"  %gemm = ({out}, s8[4194304]{{0}}) custom-call({lhs} %a, f32[64,256]{{1,0}} %b), "
        'custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0",'
        '"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":'
        f'{{"lhs_contracting_dimensions":[{dims}],"rhs_contracting_dimensions":["0"],'
        '"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}\n'
    )


def _module(lhs, rhs, line, trips=None):
    """An entry computation of two parameters and ``line``, in a loop of ``trips``."""
    body = (
        f"%body (a: {lhs}, b: {rhs}) -> {lhs} {{\n"
        f"  %a = {lhs} parameter(0)\n  %b = {rhs} parameter(1)\n{line}"
        f"  ROOT %r = {lhs} copy(%a)\n}}\n\n"
    )
    if trips is None:
        return "HloModule m\n\n" + body.replace("%body", "ENTRY %main", 1)
    return (
        "HloModule m\n\n" + body + f"ENTRY %main (a: {lhs}, b: {rhs}) -> {lhs} {{\n"
        f"  %a = {lhs} parameter(0)\n  %b = {rhs} parameter(1)\n"
        f"  ROOT %w = {lhs} while(%a, %b), condition=%c, body=%body, "
        f'backend_config={{"known_trip_count":{{"n":"{trips}"}}}}\n}}\n'
    )


def test_cublas_gemm_custom_calls_are_counted_from_their_shapes():
    lhs, rhs = "f32[128,64]{1,0}", "f32[64,256]{1,0}"
    text = _module(lhs, rhs, _gemm(lhs, "f32[128,256]{1,0}", [1]))
    counted = hlo_cost.loop_correction(text)
    assert counted.matmul_flops == counted.flops == 2 * 128 * 256 * 64
    looped = hlo_cost.loop_correction(_module(lhs, rhs, _gemm(lhs, "f32[128,256]{1,0}", [1]), 7))
    assert looped.trips == (7,) and looped.matmul_flops == 7 * 2 * 128 * 256 * 64
    batched = "f32[8,128,64]{2,1,0}"
    text = _module(batched, rhs, _gemm(batched, "f32[8,128,256]{2,1,0}", [2]))
    assert hlo_cost.loop_correction(text).matmul_flops == 2 * 8 * 128 * 256 * 64


@pytest.mark.parametrize(
    "target, operands, out, forward_out",
    [
        # forward: (input, kernel) -> output
        ("__cudnn$convForward", ("f32[32,16,16,3]", "f32[3,3,3,64]"), "f32[32,14,14,64]", 0),
        # backward input: (output gradient, kernel) -> input gradient
        ("__cudnn$convBackwardInput", ("f32[32,14,14,64]", "f32[3,3,3,64]"), "f32[32,16,16,3]", 1),
        # backward filter: (input, output gradient) -> kernel gradient
        ("__cudnn$convBackwardFilter", ("f32[32,16,16,3]", "f32[32,14,14,64]"), "f32[3,3,3,64]", 2),
    ],
)
def test_cudnn_convolution_custom_calls_are_counted_from_their_shapes(
    target, operands, out, forward_out
):
    """Every kind is ``2 · (32·14·14 outputs · 64 features) · (3·3·3 kernel taps)``."""
    lhs, rhs = operands
    line = (
        f"  %conv = ({out}{{3,2,1,0}}, u8[0]{{0}}) custom-call({lhs}{{3,2,1,0}} %a, "
        f"{rhs}{{3,2,1,0}} %b), window={{size=3x3}}, dim_labels=b01f_01io->b01f, "
        f'custom_call_target="{target}", backend_config={{"conv_result_scale":1}}\n'
    )
    text = _module(f"{lhs}{{3,2,1,0}}", f"{rhs}{{3,2,1,0}}", line)
    assert hlo_cost.loop_correction(text).matmul_flops == 2 * 32 * 14 * 14 * 64 * 3 * 3 * 3


def test_outer_loop_trips_leave_out_nested_loops():
    def program(x):
        def outer(c, _):
            return jax.lax.scan(lambda d, _: (jnp.sin(d), None), c, None, length=3)[0], None

        return jax.lax.scan(outer, x, None, length=4)[0]

    text = jax.jit(program).lower(jnp.zeros(8)).compile().as_text()
    assert hlo_cost.outer_loop_trips(text) == (4,)
    assert hlo_cost.loop_correction(text).trips == (4, 3)


def test_synthetic_inputs_have_the_abstract_shapes_dtypes_and_shardings():
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))
    rows = NamedSharding(mesh, PartitionSpec("data"))
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), 8))
    tree = {
        "x": jax.ShapeDtypeStruct((8, 3), jnp.bfloat16, sharding=rows),
        "y": jax.ShapeDtypeStruct((8,), jnp.int32),
        "k": plan.abstract(keys, rows),
    }
    out = plan_measure.synthetic(tree)
    assert out["x"].dtype == jnp.bfloat16 and out["x"].sharding == rows
    assert float(out["x"].min()) >= 0.0 and float(out["x"].max()) < 1.0
    assert out["y"].shape == (8,) and not np.any(np.asarray(out["y"]))
    assert out["k"].shape == (8,) and jnp.issubdtype(out["k"].dtype, jax.dtypes.prng_key)


def test_measure_runs_every_program_and_relates_its_rates():
    calls = []

    def example(rng):
        calls.append(1)
        return rng.random((4, 4))

    pipeline = plan.InputPipeline(example, examples_per_call=64, what="toy examples")

    def spec_fn(config, mesh):
        evaluation = dataclasses.replace(_scan_spec(mesh), name="eval", steps_per_run=1)
        return _scan_spec(mesh, programs=(evaluation,), input_pipeline=pipeline)

    p = _plan(spec_fn)
    out = plan_measure.measure(p, steps=2, input_examples=3)
    assert [m.name for m in out] == ["train", "eval"] and len(calls) == 4
    host = plan_measure.host_rates()
    for m, q in zip(out, p.all_plans(), strict=True):
        assert m.seconds_per_call > 0
        assert m.flops_per_second == pytest.approx(q.flops_per_call / m.seconds_per_call)
        assert m.peak_share == pytest.approx(m.flops_per_second / host.peak("tf32"))
        assert m.hours == pytest.approx(q.calls * m.seconds_per_call / 3600)
        per_call = max(q.flops_per_call / host.peak("tf32"), q.bytes_per_call / host.bandwidth)
        assert m.estimated_seconds_per_call == pytest.approx(per_call)
    train = out[0]
    assert train.host_cores_per_device == pytest.approx(
        64 / train.seconds_per_call / 8 / train.input_examples_per_second_per_core
    )
    assert out[1].input_examples_per_second_per_core is None
    with pytest.raises(ValueError, match="steps"):
        plan_measure.measure(p, steps=0)
    assert "Host input (toy examples): " in plans.report(p)


def test_jaxlab_plan_measure_prints_measured_beside_estimated(capsys):
    assert plans.main("multimax_tradeoff", "smoke", measure=2) == 0
    out = capsys.readouterr().out
    assert "| program | s / call measured | s / call estimated |" in out
    assert "CPU hours on this machine:" in out
    assert out.count("| train |") == 2


def test_the_input_pipelines_synthetic_examples_have_the_training_shapes():
    rng = np.random.default_rng(0)
    image = imagenet.synthetic_train_example(32, source=(48, 64))(rng)
    assert image["image"].shape == (32, 32, 3) and image["image"].dtype == np.float32
    block = wikitext.synthetic_block_example(16, vocabulary_size=100, line_words=5)(rng)
    assert block["tokens"].shape == (17,) and block["weights"].shape == (16,)
    assert 0 <= block["tokens"].min() and block["tokens"].max() < 100
    assert plan_measure.input_rate(plan.InputPipeline(lambda r: r.random(), 1, "x"), 2) > 0


@pytest.mark.parametrize(
    "name, eval_rows, what",
    [
        ("multimax_vit", 50_000, "JPEG decoding + DeiT RandAugment"),
        ("multimax_lm", (-(-217_646 // 512) - (-245_569 // 512)), "token blocks"),
    ],
)
def test_paper_presets_plan_their_evaluation_and_host_input(name, eval_rows, what):
    """Evaluated rows (ImageNet's 50,000 validation images; WikiText-103's validation and
    test 512-token blocks) in ``eval_batch_size`` calls; a batch of examples per train
    call from the host pipeline. Nothing is compiled."""
    experiment = registry.get_experiment(name)
    config = experiment.get_config("paper")
    module = importlib.import_module(f"{experiment.module}.train")
    spec = module.plan_program(config, mesh_from_config(config))
    (evaluation,) = spec.programs
    assert evaluation.name == "eval" and evaluation.num_runs == spec.num_runs
    assert evaluation.steps_per_run == math.ceil(eval_rows / config.eval_batch_size)
    assert spec.input_pipeline.what == what
    assert spec.input_pipeline.examples_per_call == config.batch_size
