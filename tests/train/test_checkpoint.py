"""Checkpointer errors: one line naming the directory and the remedy, never orbax's pages."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.train.checkpoint import Checkpointer, CheckpointError


def _state(width: int = 3):
    return {"w": jnp.arange(width, dtype=jnp.float32), "b": jnp.zeros((), jnp.float32)}


def _save(workdir, state):
    checkpointer = Checkpointer(workdir)
    checkpointer.save(1, state, jax.random.key(0))
    checkpointer.wait()
    checkpointer.close()


def _one_line_with_remedy(error: CheckpointError, workdir) -> None:
    message = str(error)
    assert "\n" not in message and len(message) < 600
    directory = str(workdir / "checkpoints")
    assert f"delete {directory} or pass another --workdir" in message


def test_roundtrip(tmp_path):
    _save(tmp_path, _state())
    state, key, step = Checkpointer(tmp_path).restore(_state(), jax.random.key(5))
    np.testing.assert_array_equal(state["w"], [0.0, 1.0, 2.0])
    assert step == 1
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(jax.random.key(0)))


def test_truncated_file_is_one_line(tmp_path):
    _save(tmp_path, _state())
    metadata = next(p for p in (tmp_path / "checkpoints").rglob("_METADATA")
                    if p.parent.name != "1")
    metadata.write_bytes(metadata.read_bytes()[: metadata.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="cannot restore the checkpoint at step 1") as info:
        Checkpointer(tmp_path).restore(_state(), jax.random.key(0))
    _one_line_with_remedy(info.value, tmp_path)
    assert info.value.__cause__ is not None  # orbax's own error, for --debug


def test_checkpoint_of_another_model_is_one_line(tmp_path):
    _save(tmp_path, _state(3))
    other = {"layer": _state(5)}
    with pytest.raises(CheckpointError, match="another model or experiment") as info:
        Checkpointer(tmp_path).restore(other, jax.random.key(0))
    _one_line_with_remedy(info.value, tmp_path)

