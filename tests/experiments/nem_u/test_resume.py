"""NEM-U's SimCLR and decoder loops (``jaxlab.train.fit``): a loop stopped after a checkpoint
and called again ends as one run without checkpoints (the reference), and a finished loop
called again runs no step and returns the same parameters and last loss."""

import shutil

import jax
import numpy as np

from jaxlab.train import Checkpointer
from jaxlab_experiments.nem_u.nem_explanations import config as nem_config
from jaxlab_experiments.nem_u.nem_explanations.train import trainers


def _config():
    c = nem_config.get_config("smoke")
    c.simclr_steps = 5
    c.nem_steps = 5
    c.checkpoint_every = 2
    return c


def _equal(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_killed_and_finished_loops_end_as_an_uninterrupted_run(tmp_path):
    config = _config()
    train_encoder, train_decoder = trainers(config)
    key_enc, key_dec = jax.random.split(jax.random.key(0, impl="rbg"))
    data = jax.random.uniform(jax.random.key(1), (32, config.canvas_size, config.canvas_size, 1))
    enc, simclr_loss = train_encoder(key_enc, data)  # no checkpoints: the reference
    theta, nem_loss, mask_mean = train_decoder(key_dec, enc, data)
    assert np.isfinite(simclr_loss) and np.isfinite(nem_loss) and np.isfinite(mask_mean)

    folder = tmp_path / "encoder"
    _equal(train_encoder(key_enc, data, str(folder)), (enc, simclr_loss))
    assert Checkpointer(folder).latest_step() == 5
    shutil.rmtree(folder / "checkpoints" / "5")  # killed after the checkpoint at step 4
    assert Checkpointer(folder).latest_step() == 4
    _equal(train_encoder(key_enc, data, str(folder)), (enc, simclr_loss))
    _equal(train_encoder(key_enc, data, str(folder)), (enc, simclr_loss))  # finished

    folder = tmp_path / "decoder"
    _equal(train_decoder(key_dec, enc, data, str(folder)), (theta, nem_loss, mask_mean))
    shutil.rmtree(folder / "checkpoints" / "5")
    _equal(train_decoder(key_dec, enc, data, str(folder)), (theta, nem_loss, mask_mean))
