"""DIHCL: the hardness update against a numpy loop, and the sampled subset sizes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.curriculum import dih_update, dihcl


def test_dih_update_matches_loop():
    dih = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    losses, idx = np.array([0.5, 0.2, 9.0]), np.array([2, 0, 1])
    valid = np.array([True, True, False])
    got = jax.jit(dih_update, static_argnums=(4, 5))(dih, losses, idx, valid, 0.9, 0.01)
    expected = dih.copy()
    for loss, i, v in zip(losses, idx, valid, strict=True):
        if v:
            expected[i] = 0.1 * dih[i] + 0.9 * loss / 0.01
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_sampling_after_warmup():
    c = dihcl(warm_epochs=2, decay_rate=0.5, bottom_size=0.3)
    state = c.data_prepare(100, 10, jax.random.key(0))
    state = state._replace(extra={**state.extra, "dih": jnp.arange(100.0)})
    assert c.data_curriculum(state, 1, None).weights.sum() == 100
    assert c.data_curriculum(state, 2, None).weights.sum() == 50
    assert c.data_curriculum(state, 5, None).weights.sum() == 30
    # Hard samples are drawn more often: the chosen half leans to the high indices.
    w = c.data_curriculum(state, 2, None).weights
    assert np.flatnonzero(w).mean() > 55
    with pytest.raises(ValueError):
        dihcl(warm_epochs=0)
