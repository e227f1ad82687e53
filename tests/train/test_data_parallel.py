"""MCF training on the 8 fake CPU devices (a ``data`` mesh) and in bfloat16.

Reference: the same steps on one device in float32 (an independent run of the same math).
Both training tests compile a PerceiverIO train step twice (≈ 40–120 s on the shared
CPU), so they are marked slow (``make reproduce`` runs them).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.chem import SIZES, MCFDenoiser
from jaxlab.chem.training import init_state, make_train_step
from jaxlab.diffusion import cosine_beta_schedule
from jaxlab.train import fit, make_mesh, make_optimizer, put_batch


def _batch(b=16, n=6, c=11, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((b, n), np.float32)
    mask[::3, -2:] = 0.0  # some padded atoms
    pos = rng.normal(size=(b, n, 3)).astype(np.float32) * mask[..., None]
    pos -= pos.sum(1, keepdims=True) / mask.sum(1)[:, None, None] * mask[..., None]
    coords = rng.normal(size=(b, n, c)).astype(np.float32) * mask[..., None]
    return {"atom_coords": coords, "positions": pos, "mask": mask}


def _train(model, mesh, steps=2):
    batch = _batch()
    schedule = {
        "name": "warmup_cosine_decay_schedule",
        "init_value": 0.0,
        "peak_value": 1e-3,
        "warmup_steps": 1,
        "decay_steps": max(steps, 2),
    }
    optimizer = make_optimizer(
        {"name": "adamw", "learning_rate": schedule, "clip_global_norm": 2.0}
    )
    state = init_state(model, optimizer, {k: v[:1] for k, v in batch.items()}, jax.random.key(0))
    step = make_train_step(model, optimizer, cosine_beta_schedule(100), 0.9)
    state, history = fit(
        state=state,
        train_step=step,
        batch_at=lambda s: batch,
        num_steps=steps,
        key=jax.random.key(1),
        log_every=1,
        mesh=mesh,
        progress=False,
    )
    return state, [row["loss"] for row in history]


@pytest.mark.devices(8)
@pytest.mark.slow
def test_data_parallel_training_matches_one_device():
    assert len(jax.local_devices()) == 8  # tests/conftest.py
    model = MCFDenoiser(SIZES["micro"])
    mesh = make_mesh({"data": 8})
    sharded, losses = _train(model, mesh)
    single, ref_losses = _train(model, None)
    leaf = jax.tree.leaves(sharded.params)[0]
    assert len(leaf.sharding.device_set) == 8  # the state lives on all 8 devices
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    # The all-reduce sums in another order; Adam's first steps move each weight by about
    # ±lr whatever the gradient's size, so a near-zero gradient's rounding can flip a step:
    # parameters agree to a fraction of lr = 1e-3, the losses (above) to float32 rounding.
    for a, b in zip(jax.tree.leaves(sharded.params), jax.tree.leaves(single.params), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=5e-4)


@pytest.mark.slow
def test_bfloat16_training_tracks_float32():
    bf16, losses = _train(MCFDenoiser(SIZES["micro"], dtype=jnp.bfloat16), None)
    _, ref_losses = _train(MCFDenoiser(SIZES["micro"]), None)
    assert all(leaf.dtype == jnp.float32 for leaf in jax.tree.leaves(bf16.params))
    assert np.all(np.isfinite(losses))
    np.testing.assert_allclose(losses, ref_losses, rtol=0.05)


@pytest.mark.devices(8)
def test_bad_inputs():
    with pytest.raises(ValueError, match="cannot be split"):
        put_batch(_batch(b=12), make_mesh({"data": 8}))  # 12 rows do not split over 8 devices
