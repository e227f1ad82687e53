"""``jaxlab.train.plan``: an experiment's step compiled on 8 fake devices from abstract
inputs; memory and FLOPs against closed forms where they exist."""

import types

import jax
import jax.numpy as jnp
import ml_collections
import pytest
from jax.sharding import NamedSharding, PartitionSpec

from jaxlab.report import registry
from jaxlab.train import make_mesh, plan


def test_a_matmul_plan_counts_its_flops_per_device():
    """Sharded rows: every device does 1/8 of 2·n·k·m FLOPs and holds 1/8 of the rows."""
    n, k, m = 1024, 256, 128

    def plan_program(config, mesh):
        rows = NamedSharding(mesh, PartitionSpec("data"))
        rep = NamedSharding(mesh, PartitionSpec())
        args = (jax.ShapeDtypeStruct((n, k), jnp.float32, sharding=rows),
                jax.ShapeDtypeStruct((k, m), jnp.float32, sharding=rep))
        return plan.PlanSpec(fn=jnp.matmul, abstract_args=args, steps_per_run=10, num_runs=3,
                             note="a matmul")

    config = ml_collections.ConfigDict({"preset": "smoke", "mesh": {"data": -1}})
    p = plan.plan_module(types.SimpleNamespace(plan_program=plan_program), config, "matmul")
    assert p.devices == 8 and p.calls == 30
    assert p.flops_per_call == pytest.approx(2 * n * k * m / 8, rel=0.01)
    assert p.argument_bytes == 4 * (n * k // 8 + k * m)
    assert p.output_bytes == 4 * n * m // 8
    h100 = plan.ACCELERATORS[0]
    assert p.hours(h100) == pytest.approx(30 * max(
        p.flops_per_call / (h100.peak_flops * plan.UTILISATION),
        p.bytes_per_call / h100.bandwidth) / 3600)
    assert "roofline" in plan.report(p).lower()


def test_an_experiment_without_plan_program_is_refused():
    config = ml_collections.ConfigDict({"preset": "smoke"})
    with pytest.raises(ValueError, match="plan_program"):
        plan.plan_module(types.SimpleNamespace(), config, "none")


def test_multimax_tradeoff_smoke_plan_on_8_devices(capsys):
    assert plan.main("multimax_tradeoff", "smoke", devices=8) == 0  # in-process: 8 devices
    out = capsys.readouterr().out
    assert "mesh {'runs': 8}" in out and "TPU v5e" in out
    p = plan.plan("multimax_tradeoff", "smoke")
    config = registry.get_experiment("multimax_tradeoff").get_config("smoke")
    assert p.memory_bytes > 0 and p.flops_per_call > 0
    assert p.calls == 2 * config.fit_steps  # all seeds in one call per step
    # the scores [runs, vectors, entries] are split over the 8 devices: one run each
    scores = p.spec.abstract_args[1]
    assert scores.shape[0] == 8 and scores.sharding.spec == PartitionSpec("runs")
    assert p.argument_bytes < 8 * config.num_vectors * config.num_entries * 5
    assert make_mesh({"runs": -1}).size == 8


@pytest.mark.slow
def test_main_reexecutes_itself_with_the_asked_device_count(capfd):
    """This process has 8 devices; a plan on 2 runs in a subprocess with 2 fake devices."""
    assert plan.main("multimax_tradeoff", "smoke", devices=2) == 0
    assert "on 2 devices, mesh {'runs': 2}" in capfd.readouterr().out
    assert plan.main("no_such_experiment", "smoke", devices=2) == 2
