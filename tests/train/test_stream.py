"""Streamed input in the train loop: ``DeviceStream`` over a grain loader, its position in
the checkpoint, and a run interrupted mid-way that resumes on the same examples."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxlab.data.streaming import make_loader
from jaxlab.train import Checkpointer, DeviceStream, device_batches, fit, make_mesh
from jaxlab.train.prefetch import _Stateless
from tests.train import toy

BATCH = 8


def _source(n: int = 96) -> list[dict[str, np.ndarray]]:
    """Records of the toy problem, each with its index ``id``."""
    data = toy.make_data(0, n)
    return [{"x": data["x"][i], "y": data["y"][i], "id": np.int32(i)} for i in range(n)]


def _stream(mesh=None, seed: int = 3, n: int = 96) -> DeviceStream:
    return DeviceStream(make_loader(_source(n), [], global_batch=BATCH, seed=seed), mesh)


def _step_with_ids(state, batch, key):
    """The toy step; its metrics also name the examples of the batch, position by position."""
    state, metrics = toy.train_step(state, {"x": batch["x"], "y": batch["y"]}, key)
    ids = batch["id"].astype(np.float32)
    return state, {**metrics, **{f"id{i}": ids[i] for i in range(BATCH)}}


class _Killed(Exception):
    pass


class _DiesAfter(DeviceStream):
    """A stream whose process "dies" when step ``limit`` asks for its batch."""

    def __init__(self, *args, limit: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.limit, self.taken = limit, 0

    def __next__(self):
        if self.taken == self.limit:
            raise _Killed
        self.taken += 1
        return super().__next__()


def _fit(stream, steps, workdir=None, **kwargs):
    try:
        return fit(
            state=toy.make_state(0),
            train_step=_step_with_ids,
            batches=stream,
            num_steps=steps,
            key=jax.random.key(1),
            workdir=workdir,
            log_every=1,
            mesh=stream.mesh,
            progress=False,
            **kwargs,
        )
    finally:
        stream.close()


def _ids(history) -> list[list[int]]:
    return [[int(row[f"id{i}"]) for i in range(BATCH)] for row in history if "id0" in row]


def test_stream_state_and_restore_continue_at_the_same_batch():
    stream = _stream()
    first = [next(stream)["id"] for _ in range(3)]
    state = stream.state()
    following = [next(stream)["id"] for _ in range(4)]
    stream.restore(state)
    again = [next(stream)["id"] for _ in range(4)]
    stream.close()
    np.testing.assert_array_equal(following, again)
    fresh = _stream()
    np.testing.assert_array_equal(first, [next(fresh)["id"] for _ in range(3)])
    fresh.close()
    # an epoch of 96 records in batches of 8: each record once in the first 12 batches
    whole = _stream()
    seen = np.concatenate([next(whole)["id"] for _ in range(12)])
    whole.close()
    np.testing.assert_array_equal(np.sort(seen), np.arange(96))


@pytest.mark.devices(8)
def test_stream_places_global_batches_over_the_data_axis():
    mesh = make_mesh()
    stream = _stream(mesh)
    batch = next(stream)
    stream.close()
    assert batch["x"].shape == (BATCH, 8)
    assert batch["x"].sharding.spec == jax.sharding.PartitionSpec("data")
    assert len(batch["x"].sharding.device_set) == 8


@pytest.mark.parametrize("on_mesh", [False, True])
def test_fit_killed_mid_run_and_resumed_is_bit_identical_and_reads_the_same_examples(
    tmp_path, on_mesh
):
    mesh = make_mesh() if on_mesh else None
    steps = 12
    full, full_history = _fit(_stream(mesh), steps)
    with pytest.raises(_Killed):  # dies at step 7; the last checkpoint is step 5
        _fit(
            _DiesAfter(make_loader(_source(), [], global_batch=BATCH, seed=3), mesh, limit=7),
            steps,
            tmp_path,
            checkpoint_every=5,
        )
    assert Checkpointer(tmp_path).latest_step() == 5
    resumed, resumed_history = _fit(_stream(mesh), steps, tmp_path, checkpoint_every=5)
    np.testing.assert_array_equal(toy.flat_params(full), toy.flat_params(resumed))
    assert _ids(resumed_history) == _ids(full_history)
    assert resumed_history == full_history
    # the examples: 12 steps of 8 are one epoch of 96 records, each read once
    assert sorted(sum(_ids(full_history), [])) == list(range(96))


def test_a_stream_resumed_at_its_end_ends_at_the_same_state(tmp_path):
    """A finished run asked for the same steps again restores and trains no further."""
    state, history = _fit(_stream(), 4, tmp_path)
    again, rest = _fit(_stream(), 4, tmp_path)
    np.testing.assert_array_equal(toy.flat_params(state), toy.flat_params(again))
    assert rest == history


def test_device_batches_places_every_batch_and_cannot_be_restored():
    mesh = make_mesh()
    host = [{"x": np.full((BATCH, 2), i, np.float32)} for i in range(5)]
    placed = list(device_batches(host, mesh))
    assert [float(b["x"][0, 0]) for b in placed] == [0, 1, 2, 3, 4]
    assert placed[0]["x"].sharding.spec == jax.sharding.PartitionSpec("data")
    stream = DeviceStream(_Stateless(host), None)
    with pytest.raises(ValueError, match="cannot be restored"):
        stream.restore(b"")
    stream.close()


def test_errors_of_the_loader_reach_the_consumer():
    class Broken:
        def __iter__(self):
            return self

        def __next__(self):
            raise OSError("disk gone")

        def get_state(self):
            return b"{}"

    stream = DeviceStream(Broken())
    for _ in range(2):  # the error again on the next call, not a wait on a stopped thread
        with pytest.raises(OSError, match="disk gone"):
            next(stream)
    stream.close()


def test_a_finite_stream_stops():
    stream = DeviceStream(make_loader(_source(16), [], global_batch=BATCH, seed=0, num_epochs=1))
    assert len(list(stream)) == 2
    with pytest.raises(StopIteration):  # and again: the stream stays at its end
        next(stream)
    stream.close()


def test_bad_streams_are_clear_errors():
    with pytest.raises(ValueError, match="prefetch must be >= 1"):
        DeviceStream(make_loader(_source(16), [], global_batch=BATCH, seed=0), prefetch=0)
    stream = _stream()
    try:
        with pytest.raises(ValueError, match="exactly one of batch_at"):
            fit(
                state=toy.make_state(),
                train_step=toy.train_step,
                batches=stream,
                batch_at=toy.batches(),
                num_steps=1,
                key=jax.random.key(0),
                progress=False,
            )
        with pytest.raises(ValueError, match="exactly one of batch_at"):
            fit(
                state=toy.make_state(),
                train_step=toy.train_step,
                num_steps=1,
                key=jax.random.key(0),
                progress=False,
            )
        with pytest.raises(ValueError, match="stream's mesh"):
            fit(
                state=toy.make_state(),
                train_step=toy.train_step,
                batches=stream,
                num_steps=1,
                key=jax.random.key(0),
                mesh=make_mesh(),
                progress=False,
            )
    finally:
        stream.close()
