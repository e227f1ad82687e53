"""NEM-U's checkpointed training loop: a run stopped mid-way and called again ends as an
uninterrupted one (the reference: the same loop in plain Python, no checkpoints)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.train import Checkpointer
from jaxlab_experiments.nem_u.nem_explanations.train import _checkpointed_loop

KEY = jax.random.key(0, impl="rbg")


def _step(carry, t):
    w, _ = carry
    noise = jax.random.normal(jax.random.fold_in(KEY, t), w.shape)
    return w * 0.9 + noise, jnp.sum(noise)


def _reference(num_steps):
    carry = (jnp.ones(3), jnp.float32(jnp.nan))
    for t in range(num_steps):
        carry = _step(carry, t)
    return carry


class _Killed(Exception):
    pass


def test_resumed_loop_matches_uninterrupted(tmp_path):
    carry0 = (jnp.ones(3), jnp.float32(jnp.nan))
    expected = _reference(7)

    def dying(carry, t):
        if t == 5:  # killed after the checkpoint at step 4
            raise _Killed
        return _step(carry, t)

    first = Checkpointer(tmp_path)
    with pytest.raises(_Killed):
        _checkpointed_loop(dying, carry0, 7, 2, first)
    first.wait()
    assert Checkpointer(tmp_path).latest_step() == 4
    calls = []

    def counted(carry, t):
        calls.append(t)
        return _step(carry, t)

    got = _checkpointed_loop(counted, carry0, 7, 2, Checkpointer(tmp_path))
    assert calls == [4, 5, 6]  # resumed after the checkpoint, not from the start
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # Finished: the last step is saved, a third call runs no step and returns the same.
    assert Checkpointer(tmp_path).latest_step() == 7
    calls.clear()
    again = _checkpointed_loop(counted, carry0, 7, 2, Checkpointer(tmp_path))
    assert calls == []
    np.testing.assert_array_equal(np.asarray(again[0]), np.asarray(expected[0]))
