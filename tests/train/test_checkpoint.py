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
    metadata = next(
        p for p in (tmp_path / "checkpoints").rglob("_METADATA") if p.parent.name != "1"
    )
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


def test_a_run_without_a_key_restores_none(tmp_path):
    checkpointer = Checkpointer(tmp_path)
    checkpointer.save(3, _state())
    checkpointer.wait()
    checkpointer.close()
    state, key, step = Checkpointer(tmp_path).restore(_state(width=3))
    assert key is None and step == 3
    np.testing.assert_array_equal(state["w"], [0.0, 1.0, 2.0])


def test_a_raw_key_comes_back_raw(tmp_path):
    raw = jax.random.key_data(jax.random.key(7))
    checkpointer = Checkpointer(tmp_path)
    checkpointer.save(1, _state(), raw)
    checkpointer.wait()
    _, key, _ = Checkpointer(tmp_path).restore(_state(), jnp.zeros_like(raw))
    np.testing.assert_array_equal(key, raw)


class _Position:
    """An input whose position is a counter (what grain's orbax handler saves)."""

    def __init__(self, at: int = 0):
        self.at = at

    def get_state(self) -> bytes:
        return str(self.at).encode()

    def set_state(self, state: bytes) -> None:
        self.at = int(state.decode())

    def start_prefetch(self) -> None:
        pass


def test_the_input_position_is_saved_per_step(tmp_path):
    checkpointer = Checkpointer(tmp_path, keep=3)
    position = _Position()
    for step in (1, 2):
        position.at = 10 * step
        checkpointer.save(step, _state(), data=position)
        position.at += 1  # read ahead after the save: not part of the checkpoint
    checkpointer.wait()
    checkpointer.close()
    saved = tmp_path / "checkpoints" / "2" / "data" / "process_0-of-1.json"
    assert saved.read_text() == "20"
    restored = _Position()
    _, key, step = Checkpointer(tmp_path).restore(_state(), data=restored)
    assert (restored.at, key, step) == (20, None, 2)


def test_keep_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="keep must be >= 1"):
        Checkpointer(tmp_path, keep=0)
