import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl.replay import replay_add, replay_init, replay_sample


def _segments(start, n, t=5):
    ids = np.arange(start, start + n, dtype=np.float32)[:, None, None]
    steps = np.arange(t, dtype=np.float32)[None, :, None]
    return {"obs": jnp.asarray(ids * 100 + steps), "a": jnp.zeros((n, t), jnp.int32)}


def test_ring_overwrites_oldest_like_a_deque():
    buf = replay_init({"obs": jnp.zeros((5, 1)), "a": jnp.zeros(5, jnp.int32)}, capacity=4)
    add = jax.jit(replay_add)
    ref = []
    for start, n in [(0, 3), (3, 2), (5, 3)]:
        buf = add(buf, _segments(start, n))
        ref = (ref + list(range(start, start + n)))[-4:]
    stored = sorted(int(x) for x in np.asarray(buf.data["obs"][:, 0, 0]) / 100)
    assert stored == sorted(ref)
    assert int(buf.size) == 4 and int(buf.pos) == 8 % 4


def test_sample_windows_are_consecutive_steps_of_stored_segments():
    buf = replay_init({"obs": jnp.zeros((5, 1)), "a": jnp.zeros(5, jnp.int32)}, capacity=8)
    buf = replay_add(buf, _segments(10, 3))
    out = jax.jit(replay_sample, static_argnums=(2, 3))(buf, jax.random.key(0), 64, 3)
    obs = np.asarray(out["obs"][..., 0])
    assert obs.shape == (64, 3)
    seg, step = obs // 100, obs % 100
    assert set(seg[:, 0].tolist()) <= {10, 11, 12} and len(set(seg[:, 0].tolist())) == 3
    np.testing.assert_array_equal(seg, seg[:, :1].repeat(3, 1))
    np.testing.assert_array_equal(np.diff(step, axis=1), 1)
    assert step.max() <= 4


def test_vmap_over_buffers():
    buf = replay_init({"obs": jnp.zeros((5, 1)), "a": jnp.zeros(5, jnp.int32)}, capacity=4)
    bufs = jax.tree.map(lambda x: jnp.stack([x, x]), buf)
    segs = jax.tree.map(lambda x: jnp.stack([x, x + 1]), _segments(0, 2))
    bufs = jax.vmap(replay_add)(bufs, segs)
    assert bufs.data["obs"].shape == (2, 4, 5, 1)
    np.testing.assert_array_equal(bufs.size, [2, 2])


def test_bad_inputs():
    buf = replay_init({"obs": jnp.zeros((5, 1)), "a": jnp.zeros(5, jnp.int32)}, capacity=2)
    with pytest.raises(ValueError, match="capacity"):
        replay_add(buf, _segments(0, 3))
    with pytest.raises(ValueError, match="segments must be"):
        replay_add(buf, _segments(0, 1, t=4))
    with pytest.raises(ValueError, match="length"):
        replay_sample(buf, jax.random.key(0), 2, 6)
    with pytest.raises(ValueError, match="capacity"):
        replay_init({"obs": jnp.zeros(3)}, 0)
