"""MSCP's pre-training checkpoint: restored by a run of the same config, never by another."""

import jax
import ml_collections
import numpy as np

from jaxlab_experiments.mscp.mscp_passive_data.train import pretrained


def test_pretrained_is_restored_only_for_its_config(tmp_path):
    offset = [0.0]  # read when prepare is traced: a computed result shows the latest

    def prepare(key):
        return {"planner": jax.random.normal(key, (3,)) + offset[0]}

    keys = jax.random.split(jax.random.key(0), 2)
    config = ml_collections.ConfigDict({"fast_compile": False, "pretrain_steps": 4})
    first = np.asarray(pretrained(config, "pre", prepare, keys, None, str(tmp_path))["planner"])
    offset[0] = 100.0
    again = pretrained(config, "pre", prepare, keys, None, str(tmp_path))
    np.testing.assert_array_equal(np.asarray(again["planner"]), first)  # restored
    other = ml_collections.ConfigDict({"fast_compile": False, "pretrain_steps": 5})
    computed = pretrained(other, "pre", prepare, keys, None, str(tmp_path))
    np.testing.assert_allclose(np.asarray(computed["planner"]), first + 100.0, rtol=1e-6)
    assert len(list(tmp_path.glob("pre-*"))) == 2  # each config in a folder of its own
