"""``jaxlab plan`` for the GADC, ICL, LLark, MC-Ensemble, MCF, MSCP, NEM, policy-comparison
and SLWI experiments: each defines ``plan_program``, and its smoke plan compiles on a
2-device mesh (the suite's first 2 fake CPU devices) with the runs or the batch split as
its ``config.mesh`` says."""

import jax
import pytest

from jaxlab.report import plans, registry
from jaxlab.train import mesh_from_config, plan

EXPERIMENTS = registry.discover()
FAST = ("gadc_feature_noise", "gadc_metattack", "nem_explanations", "slwi_stream")
# Long compilations (the slowest of the plan tests on CPU): `pytest -m slow` runs them
SLOW = (
    "gadc_heterophily",
    "icl_nonlinear",
    "llark_music",
    "mc_ensemble_ood",
    "mcf_qm9",
    "mscp_passive_data",
    "policy_regret_intervals",
)
NAMES = [*FAST, *(pytest.param(name, marks=pytest.mark.slow) for name in SLOW)]


def split_axes(args) -> set[str]:
    """The mesh axes some abstract argument's leading dimension is split over."""
    axes = set()
    for leaf in jax.tree.leaves(args):
        spec = getattr(getattr(leaf, "sharding", None), "spec", ())
        if spec and spec[0] is not None:
            axes.add(spec[0])
    return axes


@pytest.mark.devices(2)
@pytest.mark.parametrize("name", NAMES)
def test_smoke_plan_compiles_on_two_devices(name):
    experiment = EXPERIMENTS[name]
    config = experiment.get_config("smoke")
    module = __import__(f"{experiment.module}.train", fromlist=["plan_program"])
    mesh = mesh_from_config(config, devices=jax.devices()[:2])
    spec = module.plan_program(config, mesh)
    assert isinstance(spec, plan.PlanSpec)
    assert spec.steps_per_run >= 1 and spec.num_runs >= spec.runs_per_call >= 1
    # every axis the layout spreads over more than one device splits some argument
    wide = {axis for axis, size in mesh.shape.items() if size > 1}
    assert split_axes(spec.abstract_args) == wide, (name, mesh.shape)
    compiled = jax.jit(spec.fn).lower(*spec.abstract_args).compile()
    memory = compiled.memory_analysis()
    assert memory.argument_size_in_bytes + memory.temp_size_in_bytes > 0
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    assert cost["flops"] > 0


@pytest.mark.devices(8)
def test_plan_report_of_a_runs_experiment_on_8_devices(capsys):
    """The whole ``jaxlab plan`` path in-process (the suite has 8 devices): 2 smoke
    replications, padded to 8 lanes (75 % padding), one per device; 5 grid points of one call
    each; the Newton loops counted with their trip counts."""
    assert plans.main("policy_regret_intervals", "smoke", devices=8) == 0
    out = capsys.readouterr().out
    assert "mesh {'runs': 8}" in out
    assert "runs: 10; runs per call: 2 (8 computed, 1 per device; padding 75%)" in out
    assert "| train | 5 |" in out
