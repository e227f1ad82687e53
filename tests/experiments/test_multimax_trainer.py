"""The MultiMax experiments' optimiser entries (experiments/multimax/trainer.py) and their
paper presets' schedules."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.report import registry

trainer = pytest.importorskip("jaxlab_experiments.multimax.trainer")


def test_inverse_sqrt_warms_up_linearly_then_decays_as_fairseq():
    schedule = trainer.inverse_sqrt_schedule(1e-7, 5e-4, 4000)
    np.testing.assert_allclose(float(schedule(0)), 1e-7, rtol=1e-5)
    np.testing.assert_allclose(float(schedule(2000)), 1e-7 + (5e-4 - 1e-7) / 2, rtol=1e-5)
    np.testing.assert_allclose(float(schedule(4000)), 5e-4, rtol=1e-5)
    np.testing.assert_allclose(float(schedule(16000)), 2.5e-4, rtol=1e-5)


def test_paper_lm_optimizer_keeps_multimax_scalars_out_of_weight_decay():
    config = registry.get_experiment("multimax_lm").get_config("paper")
    tx = trainer.multimax_optimizer(config)
    params = {"w": jnp.ones(3), "multimax_b": jnp.ones(2)}
    state = tx.init(params)
    zero = jax.tree.map(jnp.zeros_like, params)
    updates, _ = tx.update(zero, state, params)
    assert float(jnp.abs(updates["w"]).sum()) > 0  # decayed
    assert float(jnp.abs(updates["multimax_b"]).sum()) == 0  # not decayed


def test_paper_vit_schedule_is_deit():
    config = registry.get_experiment("multimax_vit").get_config("paper")
    rate = config.optimizer.learning_rate
    assert config.num_steps == 300 * (1_281_167 // 1024)
    assert rate.warmup_steps == 5 * (1_281_167 // 1024)
    assert rate.peak_value == pytest.approx(1e-3)
    assert (rate.init_value, rate.end_value) == (1e-6, 1e-5)
