"""``jaxlab.train.lifecycle``: runs on the mesh, results on the host, pieces saved atomically
so a restart skips them and a killed write leaves no file behind."""

from __future__ import annotations

import json
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest
from jax.sharding import PartitionSpec

from jaxlab.train import (
    atomic_write_json,
    atomic_write_npz,
    atomic_write_text,
    config_digest,
    make_mesh,
    padded_runs,
    place,
    place_runs,
    resumable,
    run_lanes,
    runs_sharding,
    to_host,
)


@pytest.mark.devices(2)
def test_runs_sharding_splits_the_run_axis_when_the_mesh_has_it():
    assert runs_sharding(None) is None
    assert runs_sharding(make_mesh({"runs": -1})).spec == PartitionSpec("runs")
    assert runs_sharding(make_mesh({"runs": 2, "data": -1})).spec == PartitionSpec("runs")
    assert runs_sharding(make_mesh({"data": -1})).spec == PartitionSpec()


@pytest.mark.devices(8)
def test_padded_runs_rounds_up_to_the_run_axis():
    runs8 = make_mesh({"runs": -1})
    assert [padded_runs(n, runs8) for n in (1, 5, 8, 9)] == [8, 8, 8, 16]
    assert padded_runs(5, make_mesh({"runs": 2, "data": -1})) == 6
    assert padded_runs(5, make_mesh({"data": -1})) == 5
    assert padded_runs(5, None) == 5
    with pytest.raises(ValueError, match="num_runs must be >= 1, got 0"):
        padded_runs(0, runs8)


@pytest.mark.devices(8)
def test_run_lanes_are_the_runs_then_run_0_up_to_the_run_axis():
    runs8 = make_mesh({"runs": 8})
    assert run_lanes(5, runs8).tolist() == [0, 1, 2, 3, 4, 0, 0, 0]
    assert run_lanes(8, runs8).tolist() == list(range(8))
    assert run_lanes(3, make_mesh({"data": 4, "runs": 2}), "data").tolist() == [0, 1, 2, 0]
    assert run_lanes(3, None).dtype == np.int64


@pytest.mark.devices(8)
def test_place_runs_splits_and_pads_with_copies_of_run_0():
    mesh = make_mesh({"runs": -1})
    x = np.arange(5 * 3, dtype=np.float32).reshape(5, 3)
    keys = jax.random.split(jax.random.key(0), 5)
    placed, placed_keys = place_runs((x, keys), mesh, pad=True)
    assert placed.shape == (8, 3) and placed.sharding.spec == PartitionSpec("runs")
    np.testing.assert_array_equal(np.asarray(placed), np.concatenate([x, np.repeat(x[:1], 3, 0)]))
    np.testing.assert_array_equal(jax.random.key_data(placed_keys)[:5], jax.random.key_data(keys))
    assert len(placed.addressable_shards) == 8 and placed.addressable_shards[5].data.shape == (1, 3)
    assert place_runs(x, None) is x
    with pytest.raises(ValueError, match="5 runs do not divide over the mesh's 'runs' axis"):
        place_runs(x, mesh)
    with pytest.raises(ValueError, match="same leading run axis"):
        place_runs((x, np.zeros(4)), mesh, pad=True)


def test_place_keeps_values_and_python_scalars():
    mesh = make_mesh({"runs": -1})
    placed = place({"a": jnp.ones((8, 2))}, runs_sharding(mesh))
    assert placed["a"].sharding.spec == PartitionSpec("runs")
    np.testing.assert_array_equal(np.asarray(placed["a"]), np.ones((8, 2)))
    scalar = place(3, runs_sharding(make_mesh({"data": -1})))  # replicated
    assert int(scalar) == 3 and scalar.weak_type


def test_to_host_returns_numpy_and_key_data():
    mesh = make_mesh({"runs": -1})
    sharded = jax.device_put(jnp.arange(16.0).reshape(8, 2), runs_sharding(mesh))
    keys = jax.random.split(jax.random.key(0), 8)
    host = to_host({"x": sharded, "keys": keys, "n": 3})
    assert isinstance(host["x"], np.ndarray) and isinstance(host["keys"], np.ndarray)
    np.testing.assert_array_equal(host["x"], np.arange(16.0).reshape(8, 2))
    np.testing.assert_array_equal(host["keys"], jax.random.key_data(keys))
    assert host["n"] == 3


def test_atomic_write_replaces_the_whole_file(tmp_path):
    path = tmp_path / "sub" / "result.json"
    atomic_write_json(path, {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1}
    atomic_write_text(path, "new")
    assert path.read_text() == "new"
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]


def test_a_write_killed_before_its_rename_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "result.json"

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "partial")
    assert not path.exists()
    monkeypatch.undo()
    atomic_write_text(path, "old")
    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"


def test_only_process_0_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(jax, "process_index", lambda: 1)
    atomic_write_text(tmp_path / "a.txt", "x")
    atomic_write_npz(tmp_path / "a.npz", {"x": np.ones(2)})
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_npz_round_trips_and_a_killed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "rollouts.npz"
    old = {"walls": np.eye(3, dtype=bool), "path": np.arange(6, dtype=np.float32).reshape(2, 3)}
    atomic_write_npz(path, {**old, "path": jnp.asarray(old["path"])})
    with np.load(path) as saved:
        assert set(saved) == set(old)
        for name, value in old.items():
            np.testing.assert_array_equal(saved[name], value)
            assert saved[name].dtype == value.dtype
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        atomic_write_npz(path, {"walls": np.zeros(1)})
    with np.load(path) as saved:
        np.testing.assert_array_equal(saved["walls"], old["walls"])


def test_config_digest_sees_nested_config_values():
    base = {"seeds": [0, 1], "optimizer": ml_collections.ConfigDict({"name": "adam", "lr": 0.1})}
    same = {"optimizer": {"lr": 0.1, "name": "adam"}, "seeds": [0, 1]}  # key order aside
    assert config_digest(base) == config_digest(same)
    assert len(config_digest(base)) == 12
    other = {**same, "optimizer": {"lr": 0.2, "name": "adam"}}
    assert config_digest(other) != config_digest(base)
    assert config_digest(ml_collections.ConfigDict(same)) == config_digest(same)


def _counting():
    calls = []

    def compute(x, scale=1.0):
        calls.append(x)
        return {"y": jnp.asarray(x) * scale, "keys": jax.random.split(jax.random.key(x), 2)}

    return compute, calls


def test_resumable_computes_a_piece_once_per_config(tmp_path):
    config = ml_collections.ConfigDict({"lr": 0.1, "steps": 3})
    compute, calls = _counting()
    first = resumable(tmp_path, "arm-a", config, compute, 2, scale=3.0)
    again = resumable(tmp_path, "arm-a", config, compute, 2, scale=3.0)
    assert calls == [2]
    assert set(first) == {"y", "keys"} and float(first["y"]) == 6.0
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    np.testing.assert_array_equal(
        first["keys"], jax.random.key_data(jax.random.split(jax.random.key(2), 2))
    )
    resumable(tmp_path, "arm-b", config, compute, 2)  # another piece
    other = ml_collections.ConfigDict({"lr": 0.2, "steps": 3})
    resumable(tmp_path, "arm-a", other, compute, 2)  # another config
    assert calls == [2, 2, 2]
    assert len(list((tmp_path / "runs").glob("arm-a-*.npz"))) == 2
    resumable(tmp_path, "arm-a", {"lr": 0.1}, compute, 5)  # a plain dict config
    assert calls == [2, 2, 2, 5]


def test_resumable_without_workdir_saves_nothing(tmp_path):
    compute, calls = _counting()
    resumable(None, "arm", {"a": 1}, compute, 1)
    resumable(None, "arm", {"a": 1}, compute, 1)
    assert calls == [1, 1]


def test_a_piece_killed_while_saving_leaves_no_file_and_is_computed_again(tmp_path, monkeypatch):
    compute, calls = _counting()
    real_replace = os.replace

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        resumable(tmp_path, "arm", {"a": 1}, compute, 4)
    assert not list((tmp_path / "runs").glob("arm-*.npz"))  # only the hidden temporary
    monkeypatch.setattr(os, "replace", real_replace)
    out = resumable(tmp_path, "arm", {"a": 1}, compute, 4)
    assert calls == [4, 4] and float(out["y"]) == 4.0
    assert len(list((tmp_path / "runs").glob("arm-*.npz"))) == 1
    resumable(tmp_path, "arm", {"a": 1}, compute, 4)
    assert calls == [4, 4]
