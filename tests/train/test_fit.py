"""The train loop: device-count invariance, checkpoints, resume after SIGKILL, multi-host."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxlab.train import CheckpointError, fit, make_mesh
from tests.train import toy

REPO = Path(__file__).resolve().parents[2]


def _fit(steps, workdir=None, mesh=None, seed=0, **kwargs):
    return fit(
        state=toy.make_state(seed),
        train_step=toy.train_step,
        batch_at=toy.batches(),
        num_steps=steps,
        key=jax.random.key(1),
        workdir=workdir,
        log_every=1,
        mesh=mesh,
        progress=False,
        **kwargs,
    )


@pytest.mark.devices(8)
def test_one_and_eight_devices_agree():
    assert jax.device_count() == 8
    state1, hist1 = _fit(12)
    state8, hist8 = _fit(12, mesh=make_mesh())
    np.testing.assert_allclose(toy.flat_params(state1), toy.flat_params(state8), atol=1e-5)
    np.testing.assert_allclose([r["loss"] for r in hist1], [r["loss"] for r in hist8], rtol=1e-5)
    leaf = jax.tree.leaves(state8.params)[0]
    assert len(leaf.sharding.device_set) == 8


def test_training_reduces_loss_and_writes_metrics(tmp_path):
    state, history = _fit(
        40,
        workdir=tmp_path,
        hparams={"lr": 1e-2},
        eval_fn=lambda s: {"eval_norm": float(np.linalg.norm(toy.flat_params(s)))},
        eval_every=20,
    )
    losses = [r["loss"] for r in history if "loss" in r]
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows == history
    assert [r["step"] for r in rows if "eval_norm" in r] == [20, 40]
    assert json.loads((tmp_path / "hparams.json").read_text()) == {"lr": 1e-2}
    assert list((tmp_path / "tb").iterdir())


def test_resume_in_process_equals_uninterrupted(tmp_path):
    full, full_hist = _fit(20)
    _fit(10, workdir=tmp_path, checkpoint_every=5)
    resumed, resumed_hist = _fit(20, workdir=tmp_path, checkpoint_every=5)
    np.testing.assert_array_equal(toy.flat_params(full), toy.flat_params(resumed))
    assert resumed_hist == full_hist


def test_incompatible_checkpoint_is_a_clear_error(tmp_path):
    _fit(5, workdir=tmp_path)
    other = toy.make_state()
    other = other.replace(params={"different": other.params})
    with pytest.raises(CheckpointError, match=str(tmp_path / "checkpoints")):
        fit(
            state=other,
            train_step=toy.train_step,
            batch_at=toy.batches(),
            num_steps=10,
            key=jax.random.key(1),
            workdir=tmp_path,
            progress=False,
        )


def test_resuming_with_other_hparams_is_a_clear_error(tmp_path):
    _fit(5, workdir=tmp_path, hparams={"lr": 0.01, "depth": 2})
    with pytest.raises(CheckpointError, match=r"other hyper-parameters \(differing: lr\)"):
        _fit(10, workdir=tmp_path, hparams={"lr": 0.02, "depth": 2})
    state, _ = _fit(10, workdir=tmp_path, hparams={"lr": 0.01, "depth": 2})
    assert int(state.step) == 10


def test_corrupted_checkpoint_is_a_clear_error(tmp_path):
    _fit(5, workdir=tmp_path)
    for path in (tmp_path / "checkpoints").rglob("*"):
        if path.is_file() and (path.parent.name == "d" or path.name.endswith("METADATA")):
            path.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot restore"):
        _fit(10, workdir=tmp_path)


def _run_toy(out, *args, env_extra=None):
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu"}
    env.update(env_extra or {})
    return subprocess.Popen(
        [sys.executable, "-m", "tests.train.toy_run", str(out), *map(str, args)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_sigkill_and_resume_is_bit_identical(tmp_path):
    steps = 30
    reference = _run_toy(tmp_path / "ref.npz", "--steps", steps)
    workdir = tmp_path / "killed"
    victim = _run_toy(
        tmp_path / "never.npz",
        "--steps",
        steps,
        "--workdir",
        workdir,
        "--sleep",
        0.2,
        "--checkpoint_every",
        5,
    )
    deadline = time.time() + 240
    checkpoints = workdir / "checkpoints"
    while time.time() < deadline:
        done = [p for p in checkpoints.glob("*") if p.name.isdigit()]
        if any(int(p.name) >= 10 for p in done):
            break
        assert victim.poll() is None, victim.stdout.read().decode()
        time.sleep(0.1)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert not (tmp_path / "never.npz").exists(), "the run finished before it was killed"
    logged = [json.loads(x)["step"] for x in (workdir / "metrics.jsonl").read_text().splitlines()]
    assert max(logged) < steps
    resumed = _run_toy(
        tmp_path / "resumed.npz", "--steps", steps, "--workdir", workdir, "--checkpoint_every", 5
    )
    for process in (reference, resumed):
        output = process.communicate(timeout=300)[0].decode()
        assert process.returncode == 0, output
    ref, res = np.load(tmp_path / "ref.npz"), np.load(tmp_path / "resumed.npz")
    np.testing.assert_array_equal(ref["params"], res["params"])
    np.testing.assert_array_equal(ref["losses"], res["losses"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_of_four_devices_match_one_process_of_eight(tmp_path):
    steps = 8
    single = _run_toy(tmp_path / "single.npz", "--steps", steps, "--devices", 8, "--mesh")
    coordinator = f"localhost:{_free_port()}"
    workers = [
        _run_toy(
            tmp_path / "multi.npz",
            "--steps",
            steps,
            "--devices",
            4,
            "--mesh",
            "--coordinator",
            coordinator,
            "--num_processes",
            2,
            "--process_id",
            i,
        )
        for i in range(2)
    ]
    for process in [single, *workers]:
        output = process.communicate(timeout=300)[0].decode()
        assert process.returncode == 0, output
    one, two = np.load(tmp_path / "single.npz"), np.load(tmp_path / "multi.npz")
    np.testing.assert_allclose(one["params"], two["params"], atol=1e-5)
    np.testing.assert_allclose(one["losses"], two["losses"], rtol=1e-5)
    # batch_runs gathers every run's outputs, typed PRNG keys included, to every process.
    np.testing.assert_array_equal(one["run_keys"], two["run_keys"])
    np.testing.assert_array_equal(one["run_draws"], two["run_draws"])
    # to_host gathers a runs-sharded array on every process; resumable computes a piece once
    # (process 0 writes it, every process loads it on the second call).
    for out in (one, two):
        np.testing.assert_array_equal(out["host"], np.arange(16.0).reshape(8, 2))
        np.testing.assert_array_equal(out["piece_first"], 2 * out["host"])
        np.testing.assert_array_equal(out["piece_second"], out["piece_first"])
        assert int(out["piece_calls"]) == 1
        # one epoch of 64 streamed records in 4 global batches of 16: each record once
        assert sorted(out["stream_ids"].ravel().astype(int)) == list(range(64))
    # on 2 processes each reads its own shard: half of every global batch from each half
    assert all(sorted(row < 32) == [False] * 8 + [True] * 8 for row in two["stream_ids"])


def test_train_step_is_traced_once():
    traces = []

    def counting_step(state, batch, key):
        traces.append(1)
        return toy.train_step(state, batch, key)

    fit(
        state=toy.make_state(),
        train_step=counting_step,
        batch_at=toy.batches(),
        num_steps=6,
        key=jax.random.key(0),
        progress=False,
    )
    assert len(traces) == 1


def test_negative_steps_is_an_error():
    with pytest.raises(ValueError, match="num_steps"):
        _fit(-1)
