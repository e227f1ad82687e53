"""``scan_run`` and ``batch_runs`` against Python loops; every batching method agrees."""

import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.train import runs as runs_lib
from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.mesh import make_mesh
from jaxlab.train.runs import (
    CARRY_PROBE_ENV,
    batch_runs,
    jit_run,
    scan_run,
    segmented_scan_run,
)


def sgd_run(key, data, lr):
    """A small whole run: SGD on a least-squares problem, one minibatch row per step."""
    x, y = data
    w0 = jax.random.normal(key, (x.shape[1],))

    def step(w, t):
        i = t % x.shape[0]
        grad = (x[i] @ w - y[i]) * x[i]
        w = w - lr * grad
        return w, jnp.mean((x @ w - y) ** 2)

    return scan_run(step, w0, length=12)


def python_sgd_run(key, data, lr):
    x, y = (np.asarray(a, np.float64) for a in data)
    w = np.asarray(jax.random.normal(key, (x.shape[1],)), np.float64)
    losses = []
    for t in range(12):
        i = t % x.shape[0]
        w = w - lr * (x[i] @ w - y[i]) * x[i]
        losses.append(np.mean((x @ w - y) ** 2))
    return w, np.array(losses)


def problem():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(5, 3)), jnp.float32)
    return x, x @ jnp.array([1.0, -2.0, 0.5])


def test_scan_run_with_xs_matches_a_loop():
    xs = {"a": jnp.arange(6.0), "b": jnp.ones((6, 2))}
    final, metrics = scan_run(lambda c, x: (c * 0.5 + x["a"] + x["b"].sum(), c), 1.0, xs)
    c, seen = 1.0, []
    for t in range(6):
        seen.append(c)
        c = c * 0.5 + t + 2.0
    np.testing.assert_allclose(final, c)
    np.testing.assert_allclose(metrics, seen)


def test_scan_run_without_xs_gives_the_step_index():
    final, ts = scan_run(lambda c, t: (c + 1, t), 0, length=5)
    assert int(final) == 5 and ts.dtype == jnp.int32
    np.testing.assert_array_equal(ts, np.arange(5))
    final, _ = jax.jit(
        lambda k: scan_run(
            lambda c, t: (c + jax.random.uniform(jax.random.fold_in(k, t)), None), 0.0, length=3
        )
    )(jax.random.key(0))
    ref = sum(float(jax.random.uniform(jax.random.fold_in(jax.random.key(0), t))) for t in range(3))
    np.testing.assert_allclose(final, ref, rtol=1e-6)


def test_scan_run_whole_training_run_matches_python():
    key = jax.random.key(1)
    w, losses = jax.jit(sgd_run)(key, problem(), 0.1)
    w_ref, losses_ref = python_sgd_run(key, problem(), 0.1)
    np.testing.assert_allclose(w, w_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, losses_ref, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("length", [None, -1])
def test_scan_run_needs_a_length_without_xs(length):
    with pytest.raises(ValueError, match="length"):
        scan_run(lambda c, t: (c, None), 0, length=length)


@pytest.mark.parametrize("fast_compile", [False, True])
@pytest.mark.parametrize("method", ["vmap", "map", "loop", "auto"])
def test_every_method_equals_a_python_loop(method, fast_compile):
    keys = jax.random.split(jax.random.key(2), 4)
    lrs = jnp.array([0.05, 0.1, 0.15, 0.2])
    data = problem()
    run_all = batch_runs(sgd_run, in_axes=(0, None, 0), method=method, fast_compile=fast_compile)
    w, losses = run_all(keys, data, lrs)
    chex.assert_shape(w, (4, 3))
    chex.assert_shape(losses, (4, 12))
    for i in range(4):
        w_ref, losses_ref = python_sgd_run(keys[i], data, float(lrs[i]))
        np.testing.assert_allclose(w[i], w_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(losses[i], losses_ref, rtol=1e-4, atol=1e-6)


def test_map_batch_size_and_pytree_arguments():
    run = lambda p, shared: {"s": p["a"] * shared + p["b"].sum(), "n": p["b"]}  # noqa: E731
    per_run = {"a": jnp.arange(5.0), "b": jnp.arange(10.0).reshape(5, 2)}
    outs = {
        m: batch_runs(run, in_axes=(0, None), method=m, batch_size=2)(per_run, 3.0)
        for m in ("vmap", "map", "loop")
    }
    expected = [3.0 * i + (2 * i) + (2 * i + 1) for i in range(5)]
    for out in outs.values():
        np.testing.assert_allclose(out["s"], expected)
        np.testing.assert_allclose(out["n"], per_run["b"])


def test_shared_arguments_are_not_baked_in():
    """The program takes the shared data as an argument: new data, no stale constants."""
    traces = []

    def run(k, x):
        traces.append(1)
        return jnp.sum(x) + k

    f = batch_runs(run, in_axes=(0, None))
    np.testing.assert_allclose(f(jnp.arange(3.0), jnp.ones(4)), [4.0, 5.0, 6.0])
    np.testing.assert_allclose(f(jnp.arange(3.0), 2 * jnp.ones(4)), [8.0, 9.0, 10.0])
    assert len(traces) == 1  # compiled once for both data sets


def test_bad_inputs():
    run = lambda a, b: a + b  # noqa: E731
    with pytest.raises(ValueError, match="method"):
        batch_runs(run, method="pmap")
    with pytest.raises(ValueError, match="2 entries for 1"):
        batch_runs(lambda a: a, in_axes=(0, None))(jnp.ones(3))
    with pytest.raises(ValueError, match="0 .batched. or None"):
        batch_runs(run, in_axes=(1, None))(jnp.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match="no argument"):
        batch_runs(run, in_axes=None)(jnp.ones(3), 1.0)
    with pytest.raises(ValueError, match="leading run axis"):
        batch_runs(run, in_axes=0)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="leading run axis"):
        batch_runs(run, in_axes=0)(jnp.ones(3), jnp.float32(1.0))


def test_jit_run_fast_compile_computes_the_same_function():
    x = np.linspace(-2.0, 2.0, 7, dtype=np.float32)
    f = lambda v: jnp.tanh(v) * v**2  # noqa: E731
    for fast in (False, True):
        np.testing.assert_allclose(jit_run(f, fast_compile=fast)(x), np.tanh(x) * x**2, rtol=1e-6)


def test_fast_compile_programs_nest_in_other_traces():
    # XLA takes compiler options only at the top level: under jit, eval_shape or grad the
    # fast program is inlined as a plain jit (it raised before).
    x = np.linspace(-2.0, 2.0, 6, dtype=np.float32).reshape(3, 2)
    runs = batch_runs(lambda v: jnp.sum(jnp.tanh(v) * v), fast_compile=True)
    assert jax.eval_shape(runs, x).shape == (3,)
    np.testing.assert_allclose(jax.jit(runs)(x), np.sum(np.tanh(x) * x, axis=1), rtol=1e-6)
    grad = jax.grad(lambda v: jnp.sum(runs(v)))(x)
    np.testing.assert_allclose(grad, np.tanh(x) + x / np.cosh(x) ** 2, rtol=1e-5)


@pytest.mark.devices(8)
@pytest.mark.parametrize("method", ["vmap", "map", "auto"])
@pytest.mark.parametrize("num_runs", [8, 5])  # 5: padded to 8, padding dropped
def test_runs_sharded_over_a_mesh_equal_a_python_loop(method, num_runs):
    mesh = make_mesh({"runs": -1})
    keys = jax.random.split(jax.random.key(4), num_runs)
    lrs = jnp.linspace(0.05, 0.2, num_runs)
    data = problem()
    w, losses = batch_runs(sgd_run, in_axes=(0, None, 0), method=method, mesh=mesh)(keys, data, lrs)
    chex.assert_shape(w, (num_runs, 3))
    for i in range(num_runs):
        w_ref, losses_ref = python_sgd_run(keys[i], data, float(lrs[i]))
        np.testing.assert_allclose(w[i], w_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(losses[i], losses_ref, rtol=1e-4, atol=1e-6)
    if num_runs == 8:  # the outputs stay split over the 8 devices, one run each
        assert len(w.sharding.device_set) == 8
        assert {s.data.shape for s in w.addressable_shards} == {(1, 3)}


@pytest.mark.devices(2)
def test_runs_on_a_two_axis_mesh_and_one_device_equal_unsharded():
    keys = jax.random.split(jax.random.key(5), 4)
    unsharded = batch_runs(sgd_run, in_axes=(0, None, None))(keys, problem(), 0.1)
    for layout in ({"runs": 2, "data": -1}, {"runs": 1}):
        mesh = make_mesh(layout)
        out = batch_runs(sgd_run, in_axes=(0, None, None), mesh=mesh)(keys, problem(), 0.1)
        assert len(out[0].sharding.device_set) == mesh.size
        for a, b in zip(out, unsharded, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_mesh_bad_inputs():
    with pytest.raises(ValueError, match="no axis 'runs'"):
        batch_runs(sgd_run, mesh=make_mesh({"data": -1}))
    with pytest.raises(ValueError, match="loop"):
        batch_runs(sgd_run, method="loop", mesh=make_mesh({"runs": -1}))


class _Killed(Exception):
    pass


class _KilledAfter(Checkpointer):
    """A checkpointer whose process "dies" right after its ``n``-th save."""

    def __init__(self, workdir, n):
        super().__init__(workdir)
        self.n = n

    def save(self, step, state, key=None, **kwargs):
        super().save(step, state, key, **kwargs)
        self.n -= 1
        if self.n == 0:
            self.wait()
            raise _Killed


def _noisy_step(carry, t):
    """A step with a key in the carry and one folded from ``t``: both must resume exactly."""
    w, key = carry
    key, sub = jax.random.split(key)
    noise = jax.random.normal(jax.random.fold_in(sub, t), w.shape)
    w = 0.9 * w + 0.1 * jnp.tanh(w @ w.T) @ w + 0.01 * noise
    return (w, key), {"norm": jnp.linalg.norm(w), "t": t}


def test_segmented_scan_killed_and_resumed_is_bit_identical(tmp_path):
    carry0 = (jnp.linspace(-1.0, 1.0, 6).reshape(2, 3), jax.random.key(7))
    ref_carry, ref_hist = jax.jit(lambda c: scan_run(_noisy_step, c, length=12))(carry0)
    with pytest.raises(_Killed):  # killed after 2 of 4 segments
        segmented_scan_run(
            _noisy_step, carry0, length=12, segments=4, checkpointer=_KilledAfter(tmp_path, 2)
        )
    resumed = Checkpointer(tmp_path)
    assert resumed.latest_step() == 6
    ran = []
    counting = lambda c, t: (jax.debug.callback(ran.append, t), _noisy_step(c, t))[1]  # noqa: E731
    (w, key), hist = segmented_scan_run(
        counting, carry0, length=12, segments=4, checkpointer=resumed
    )
    jax.effects_barrier()
    assert sorted(int(t) for t in ran) == list(range(6, 12))  # only the missing half ran
    np.testing.assert_array_equal(w, ref_carry[0])
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(ref_carry[1]))
    np.testing.assert_array_equal(hist["norm"], ref_hist["norm"])
    np.testing.assert_array_equal(hist["t"], np.arange(12))
    uninterrupted, hist2 = segmented_scan_run(_noisy_step, carry0, length=12, segments=5)
    np.testing.assert_array_equal(uninterrupted[0], ref_carry[0])  # 5 uneven segments
    np.testing.assert_array_equal(hist2["norm"], ref_hist["norm"])
    # metrics.jsonl: each step once, as the checkpoints advanced (the killed call's first
    # two segments, then the resumed call's last two), the values of the scan.
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 13))
    np.testing.assert_allclose([r["norm"] for r in rows], np.asarray(ref_hist["norm"]), rtol=1e-6)
    assert [r["t"] for r in rows] == list(range(12))


def test_segmented_scan_logs_every_kth_step_averaged_over_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(runs_lib, "MAX_HISTORY_ROWS", 4)  # 10 steps: every 3rd and the last
    step = jax.vmap(_decay_step, in_axes=((0, None), None), out_axes=((0, None), 0))
    w0 = jnp.asarray([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    _, hist = segmented_scan_run(
        step, (w0, jnp.float32(0.5)), length=10, segments=2, checkpointer=Checkpointer(tmp_path)
    )
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [3, 6, 9, 10]
    np.testing.assert_allclose(
        [r["metric"] for r in rows], np.asarray(hist)[[2, 5, 8, 9]].mean(axis=1), rtol=1e-6
    )


def test_segmented_scan_with_xs_and_bad_inputs():
    xs = jnp.arange(7.0)
    final, hist = segmented_scan_run(lambda c, x: (c + x, c), 0.0, xs, segments=3)
    np.testing.assert_allclose(final, 21.0)
    np.testing.assert_allclose(hist, np.cumsum(np.arange(7.0)) - np.arange(7.0))
    with pytest.raises(ValueError, match="segments"):
        segmented_scan_run(lambda c, x: (c, c), 0.0, xs, segments=0)
    with pytest.raises(ValueError, match="length"):
        segmented_scan_run(lambda c, x: (c, c), 0.0)


def _decay_step(carry, t):
    """Per run: ``w <- rate * w + t`` with a shared ``rate``; metric: ``sum(w)``."""
    w, rate = carry
    w = rate * w + t
    return (w, rate), jnp.sum(w)


def _carry_records(folder):
    return [json.loads(line) for line in (folder / "carry-0.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("num_runs", [8, 10])
def test_segmented_scan_keeps_a_padded_carry_split_over_the_mesh(num_runs, tmp_path, monkeypatch):
    """10 runs on 8 devices: padded to 16 for the scan, every segment's carry split over
    all 8 devices (2 distinct runs each), the padding dropped; numbers as a numpy loop."""
    monkeypatch.setenv(CARRY_PROBE_ENV, str(tmp_path))
    w0 = np.arange(num_runs * 2, dtype=np.float32).reshape(num_runs, 2) / 10
    step = jax.vmap(_decay_step, in_axes=((0, None), None), out_axes=((0, None), 0))
    (w, rate), hist = segmented_scan_run(
        step,
        (jnp.asarray(w0), jnp.float32(0.5)),
        length=6,
        segments=3,
        mesh=make_mesh({"runs": 8}),
        carry_axes=(0, None),
        checkpointer=Checkpointer(tmp_path / "ckpt"),
    )
    want, sums = w0.astype(np.float64), []
    for t in range(6):
        want = 0.5 * want + t
        sums.append(want.sum(axis=1))
    np.testing.assert_allclose(w, want, rtol=1e-6)
    np.testing.assert_allclose(hist, np.stack(sums), rtol=1e-6)
    assert w.shape == (num_runs, 2) and hist.shape == (6, num_runs) and float(rate) == 0.5
    logged = (tmp_path / "ckpt" / "metrics.jsonl").read_text().splitlines()
    means = [json.loads(line)["metric"] for line in logged]  # the padding runs left out
    np.testing.assert_allclose(means, np.stack(sums).mean(axis=1), rtol=1e-6)
    records = _carry_records(tmp_path)
    assert [r["step"] for r in records] == [0, 2, 4, 6]  # the start and every segment
    for record in records:
        assert record["kind"] == "NamedSharding" and record["spec"] == "('runs',)"
        assert record["runs"] == (16 if num_runs == 10 else 8)
        assert record["num_devices"] == 8
        blocks = sorted((start, stop) for _, start, stop in record["blocks"])
        per_device = record["runs"] // 8
        assert blocks == [(i * per_device, (i + 1) * per_device) for i in range(8)]


def test_segmented_scan_on_a_mesh_refuses_bad_carry_axes():
    mesh = make_mesh({"runs": 8})
    step = lambda c, t: (c, c)  # noqa: E731
    with pytest.raises(ValueError, match="no axis"):
        segmented_scan_run(step, jnp.zeros(8), length=2, mesh=make_mesh({"data": 8}))
    with pytest.raises(ValueError, match="leading run axis"):
        segmented_scan_run(step, (jnp.zeros(8), jnp.zeros(3)), length=2, mesh=mesh)
    with pytest.raises(ValueError, match="carry_axes"):
        segmented_scan_run(step, (jnp.zeros(8),), length=2, mesh=mesh, carry_axes=(1,))
    with pytest.raises(ValueError, match="run axis"):  # padded runs, an unbatched metric
        segmented_scan_run(lambda c, t: (c, c.sum()), jnp.zeros(10), length=2, mesh=mesh)


def test_segmented_scan_on_a_mesh_resumes_split_and_bit_identical(tmp_path, monkeypatch):
    """10 runs on 8 devices, killed after 1 of 3 segments: the resumed carry is restored
    split over the devices, and the run ends as the uninterrupted one."""
    step = jax.vmap(_noisy_step, in_axes=(0, None))
    carry0 = (
        jnp.linspace(-1.0, 1.0, 60).reshape(10, 2, 3),
        jax.random.split(jax.random.key(3), 10),
    )
    mesh = make_mesh({"runs": 8})
    run = lambda **kw: segmented_scan_run(step, carry0, length=6, segments=3, mesh=mesh, **kw)  # noqa: E731
    (want_w, want_key), want_hist = run()
    with pytest.raises(_Killed):
        run(checkpointer=_KilledAfter(tmp_path / "ckpt", 1))
    monkeypatch.setenv(CARRY_PROBE_ENV, str(tmp_path))
    (w, key), hist = run(checkpointer=Checkpointer(tmp_path / "ckpt"))
    assert [r["step"] for r in _carry_records(tmp_path)[::2]] == [2, 4, 6]  # w and key each
    for record in _carry_records(tmp_path):
        assert record["num_devices"] == 8 and record["spec"] == "('runs',)"
    np.testing.assert_array_equal(w, want_w)
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(want_key))
    np.testing.assert_array_equal(hist["norm"], want_hist["norm"])
    assert w.shape == (10, 2, 3) and hist["t"].shape == (6, 10)
