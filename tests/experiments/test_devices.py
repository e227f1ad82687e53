"""Every experiment as a pod-scale program on the suite's 8 fake CPU devices.

- Its main program (the one ``jaxlab plan`` compiles) splits its large arrays over all 8
  devices at the ``smoke`` preset, unless its config declares one device and says why.
- Its ``smoke`` metrics on 8 devices (the suite's shared smoke run, tests/experiments/smoke.py)
  equal a 1-device run (``config.mesh`` overridden to one device, same XLA flags): counts
  exactly, floats within the ``rtol`` stated per experiment. Runs split over ``runs``
  compute each run on one device as on one device, so only the vectorized width changes
  (float32 reassociation); data-parallel ``fit`` sums each gradient over 8 devices in
  another order. Most cases cost a whole extra smoke run, so they are ``slow``
  (``pytest -m slow tests/experiments/test_devices.py``).
"""

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxlab.report import registry
from jaxlab.train import mesh_from_config
from tests.experiments.smoke import smoke_results, xla_flags

EXPERIMENTS = registry.discover()
# Experiments whose config declares one device at smoke (the reason is in the config).
ONE_DEVICE = {"ccpg_discovery", "nem_explanations", "gadc_adaptive"}
# name: (1-device override, rtol, metric-name prefixes that are timings, slow)
CASES = {
    "multimax_tradeoff": ("mesh.runs=1", 1e-4, (), False),
    "byzantine_lr_sensitivity": ("mesh.runs=1", 1e-4, ("agg_ms",), True),
    "byzantine_grid": ("mesh.runs=1", 1e-4, ("agg_ms",), True),
    "multimax_vit": ("mesh.data=1", 1e-3, (), True),
    "multimax_lm": ("mesh.data=1", 1e-3, (), True),
    "flipad_attribution": ("mesh.data=1", 1e-6, (), True),
    "flipad_images": ("mesh.data=1", 1e-6, (), True),
    "dpo_dynamics": ("mesh.runs=1", 1e-6, (), True),
    "icl_nonlinear": ("mesh.runs=1", 1e-6, (), True),
    "eureka_two_step": ("mesh.runs=1", 1e-6, (), True),
    "diffusion_reproducibility": ("mesh.runs=1", 1e-5, (), True),
    "llark_music": ("mesh.runs=1", 1e-6, (), True),
    "drstrategy_maze": ("mesh.runs=1", 1e-5, (), True),
    "mscp_passive_data": ("mesh.runs=1", 1e-5, (), True),
    "slwi_stream": ("mesh.runs=1", 1e-4, ("slwi_time_overhead", "tent_ms_per_step"), True),
    "adr_gd_attack": ("mesh.runs=1", 1e-3, (), True),  # ADR-GD's noise kicks amplify rounding
    "gadc_metattack": ("mesh.runs=1", 1e-6, (), True),
    "gadc_heterophily": ("mesh.runs=1", 1e-6, (), True),
    "curbench_text": ("mesh.runs=1", 1e-6, ("meta_cost_ratio",), True),
    "curbench_vision": ("mesh.runs=1", 1e-6, ("meta_cost_ratio",), True),
    "policy_regret_intervals": ("mesh.runs=1", 1e-6, (), True),
}


def split_over_all_devices(tree, mesh) -> bool:
    """Some leaf is split (not replicated) over every device of ``mesh``."""
    for leaf in jax.tree.leaves(tree):
        sharding = getattr(leaf, "sharding", None)
        if sharding is None or not leaf.shape or len(sharding.device_set) != mesh.size:
            continue
        if sharding.shard_shape(leaf.shape)[0] * mesh.size == leaf.shape[0]:
            return True
    return False


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_main_program_is_split_over_every_device(name):
    assert jax.device_count() == 8
    experiment = EXPERIMENTS[name]
    config = experiment.get_config("smoke")
    mesh = mesh_from_config(config)
    if name in ONE_DEVICE:
        assert mesh.size == 1, f"{name}: declared one device, config.mesh gives {mesh.shape}"
        return
    assert mesh.size == 8, f"{name}: config.mesh should use every device, got {mesh.shape}"
    train = __import__(f"{experiment.module}.train", fromlist=["plan_program"])
    spec = train.plan_program(config, mesh)
    if spec.host_program is None:
        assert split_over_all_devices(spec.abstract_args, mesh), f"{name}: nothing is split"


def run_one_device(name: str, override: str, workdir) -> list[dict]:
    """``jaxlab run NAME --preset smoke --config.<override>`` in a subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "jaxlab.cli", "run", name, "--preset", "smoke", "--json",
         "--workdir", str(workdir), f"--config.{override}"],
        env={**os.environ, "XLA_FLAGS": xla_flags()}, capture_output=True, text=True,
        check=False)
    assert done.returncode == 0, f"{name}: 1-device run failed:\n{done.stderr[-3000:]}"
    return json.loads((workdir / "run.json").read_text())["results"]


@pytest.mark.parametrize(("name", "one_device", "rtol", "timings"), [
    pytest.param(name, *case[:3], marks=[pytest.mark.slow] if case[3] else [], id=name)
    for name, case in CASES.items()])
def test_eight_devices_equal_one(name, one_device, rtol, timings, tmp_path):
    eight = smoke_results(name)
    one = run_one_device(name, one_device, tmp_path)
    assert len(eight) == len(one)
    for got, want in zip(eight, one, strict=True):
        assert got.keys() == want.keys()
        for key in got:
            if key.startswith(timings):
                continue
            np.testing.assert_allclose(np.asarray(got[key], np.float64),
                                       np.asarray(want[key], np.float64),
                                       rtol=rtol, atol=rtol, err_msg=f"{name}: {key}")
