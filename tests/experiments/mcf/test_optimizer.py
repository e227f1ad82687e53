"""mcf_qm9's optimiser (a ``jaxlab.train.make_optimizer`` entry) against the paper's recipe
written with optax directly: global-norm clip 2, then AdamW on a linear warm-up from 0 and a
cosine decay to 0 at ``num_steps``."""

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
import pytest

from jaxlab.train import make_optimizer
from jaxlab_experiments.mcf.mcf_qm9 import config as mcf_config
from jaxlab_experiments.mcf.mcf_qm9.train import optimizer_spec


def _reference(lr, warmup, total, clip):
    schedule = optax.warmup_cosine_decay_schedule(0.0, lr, max(warmup, 1), max(total, warmup + 1))
    return optax.chain(optax.clip_by_global_norm(clip), optax.adamw(schedule))


@pytest.mark.parametrize("warmup,total", [(2, 6), (0, 3), (5, 3)])
def test_updates_equal_the_recipe_bit_for_bit(warmup, total):
    c = ml_collections.ConfigDict(
        dict(learning_rate=1e-2, warmup_steps=warmup, num_steps=total, clip_global_norm=2.0)
    )
    ours, ref = make_optimizer(optimizer_spec(c)), _reference(1e-2, warmup, total, 2.0)
    params = {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)}
    s_ours, s_ref = ours.init(params), ref.init(params)
    for step in range(total + 2):
        key = jax.random.key(step)
        g = jax.tree.map(lambda p, k=key: 3.0 * jax.random.normal(k, p.shape), params)
        u_ours, s_ours = ours.update(g, s_ours, params)
        u_ref, s_ref = ref.update(g, s_ref, params)
        for a, b in zip(jax.tree.leaves(u_ours), jax.tree.leaves(u_ref), strict=True):
            np.testing.assert_array_equal(a, b)


def test_every_preset_clips_at_two():
    for preset in ("smoke", "quick", "paper"):
        assert optimizer_spec(mcf_config.get_config(preset))["clip_global_norm"] == 2.0
