"""The multimax and Byzantine experiments as pod-scale programs: their ``smoke`` preset on the
suite's 8 fake CPU devices gives the metrics of a 1-device run (``config.mesh`` set to a
1-device layout), and their main program's large arrays are split over all 8 devices.

Tolerances (floating results; counts and verdict inputs that are counts compare exactly):
the runs split over ``runs`` compute each run on one device as on one device, so only the
vectorized width changes (float32 reassociation, rtol 1e-4); data-parallel ``fit`` sums
each step's gradient over 8 devices in another order (rtol 1e-3 after 3 steps).
"""

import jax
import numpy as np
import pytest

from jaxlab.report import registry, runner
from jaxlab.train import mesh_from_config

EXPERIMENTS = registry.discover()
# name: (1-device override, rtol, slow). The slow ones take minutes of compilation on 2
# loaded cores; `pytest -m slow tests/experiments/test_devices.py` runs them.
CASES = {
    "multimax_tradeoff": ("mesh.runs=1", 1e-4, False),
    "byzantine_lr_sensitivity": ("mesh.runs=1", 1e-4, True),
    "byzantine_grid": ("mesh.runs=1", 1e-4, True),
    "multimax_vit": ("mesh.data=1", 1e-3, True),
    "multimax_lm": ("mesh.data=1", 1e-3, True),
}
TIMING = ("agg_ms",)  # wall-clock measurements: never equal between two runs


def params():
    return [pytest.param(name, *case[:2], marks=[pytest.mark.slow] if case[2] else [],
                         id=name) for name, case in CASES.items()]


def split_over_all_devices(tree, mesh) -> bool:
    """Some leaf is split (not replicated) over every device of ``mesh``."""
    for leaf in jax.tree.leaves(tree):
        sharding = getattr(leaf, "sharding", None)
        if sharding is None or not leaf.shape or len(sharding.device_set) != mesh.size:
            continue
        if sharding.shard_shape(leaf.shape)[0] * mesh.size == leaf.shape[0]:
            return True
    return False


@pytest.mark.parametrize(("name", "one_device", "rtol"), params())
def test_eight_devices_equal_one(name, one_device, rtol, tmp_path):
    assert jax.device_count() == 8
    experiment = EXPERIMENTS[name]
    config = experiment.get_config("smoke")
    mesh = mesh_from_config(config)
    assert mesh.size == 8, f"{name}: config.mesh should use every device, got {mesh.shape}"
    train = __import__(f"{experiment.module}.train", fromlist=["plan_program"])
    spec = train.plan_program(config, mesh)
    assert split_over_all_devices(spec.abstract_args, mesh), f"{name}: nothing is split"

    eight, _ = runner.run_experiment(experiment, tmp_path / "eight", preset="smoke")
    one, _ = runner.run_experiment(experiment, tmp_path / "one", preset="smoke",
                                   overrides=[one_device])
    for got, want in zip(eight, one, strict=True):
        assert got.keys() == want.keys()
        for key in got:
            if key.startswith(TIMING):
                continue
            np.testing.assert_allclose(np.asarray(got[key], np.float64),
                                       np.asarray(want[key], np.float64),
                                       rtol=rtol, atol=rtol, err_msg=f"{name}: {key}")
