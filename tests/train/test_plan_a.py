"""``jaxlab plan`` for twelve experiments: each defines ``plan_program``, and its ``smoke``
plan compiles on a 2-device mesh (in this process: the config's ``-1`` axis set to 2 of the
suite's 8 fake devices), with the calls its config implies and its large arrays split."""

import importlib
import math

import jax
import pytest

from jaxlab.report import plans, registry
from jaxlab.train import plan

EXPERIMENTS = (
    "adr_gd_attack",
    "adr_gd_random_nets",
    "ccpg_discovery",
    "curbench_text",
    "curbench_vision",
    "diffusion_reproducibility",
    "dpo_dynamics",
    "drstrategy_maze",
    "eureka_two_step",
    "flipad_attribution",
    "flipad_images",
    "gadc_adaptive",
)
HOST_PROGRAMS = ("ccpg_discovery",)
# Long compilations on CPU: `pytest -m slow tests/train/test_plan_a.py`.
SLOW = ("adr_gd_attack", "diffusion_reproducibility", "drstrategy_maze", "eureka_two_step")


def _train_module(name):
    return importlib.import_module(f"{registry.get_experiment(name).module}.train")


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_plan_program_and_mesh_are_declared(name):
    assert callable(getattr(_train_module(name), "plan_program", None)), name
    for preset in ("smoke", "quick", "paper"):
        mesh = registry.get_experiment(name).get_config(preset).get("mesh")
        assert mesh, f"{name} {preset}: no config.mesh"


def _on_two_devices(config) -> int:
    """Sets the config's ``-1`` axis to 2 devices (a fixed layout is kept); its size."""
    layout = {axis: 2 if size == -1 else size for axis, size in config.mesh.to_dict().items()}
    config.mesh = layout
    return math.prod(layout.values())


def _split_over(tree, devices: int) -> bool:
    """Some leaf is split (not replicated) over ``devices`` devices on its leading axis."""
    for leaf in jax.tree.leaves(tree):
        sharding = getattr(leaf, "sharding", None)
        if sharding is None or not leaf.shape or len(sharding.device_set) != devices:
            continue
        if sharding.shard_shape(leaf.shape)[0] * devices == leaf.shape[0]:
            return True
        if len(leaf.shape) > 1 and sharding.shard_shape(leaf.shape)[1] * devices == leaf.shape[1]:
            return True
    return False


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in EXPERIMENTS]
)
def test_smoke_plan_compiles_on_two_devices(name):
    config = registry.get_experiment(name).get_config("smoke")
    devices = _on_two_devices(config)
    p = plan.plan_module(_train_module(name), config, name)
    spec = p.spec
    assert spec.steps_per_run >= 1 and spec.num_runs >= 1, name
    assert p.calls == spec.steps_per_run * math.ceil(spec.num_runs / spec.runs_per_call)
    text = plans.report(p)
    if name in HOST_PROGRAMS:
        assert spec.fn is None and p.flops_per_call == 0.0
        assert "host program: no accelerator compile" in text
        return
    assert p.devices == devices, f"{name}: mesh {p.mesh_shape}"
    assert p.flops_per_call > 0 and p.memory_bytes > 0, name
    if devices > 1:
        assert _split_over(spec.abstract_args, 2), f"{name}: nothing is split over the mesh"
    assert "compute-bound hours | memory-bound hours" in text
