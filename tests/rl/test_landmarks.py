"""VQ landmarks: straight-through gradient and EMA update against closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl.landmarks import VQState, ema_update, init_vq, quantize, reseed_dead_codes


def test_quantize_nearest_and_straight_through():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(6, 3)).astype(np.float32)
    cb = rng.normal(size=(4, 3)).astype(np.float32)
    zq, codes, commit = jax.jit(quantize)(z, cb)
    want = np.argmin(((z[:, None] - cb[None]) ** 2).sum(-1), 1)
    np.testing.assert_array_equal(codes, want)
    np.testing.assert_allclose(zq, cb[want], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(commit, 1e-4 * np.mean(((z - cb[want]) ** 2).sum(1)), rtol=1e-5)
    # Straight-through: d/dz_e of L(z_q) = ∂L/∂z_q evaluated at the codes, e.g. L = Σ w·z_q².
    w = rng.normal(size=(6, 3)).astype(np.float32)
    g = jax.grad(lambda x: jnp.sum(w * quantize(x, cb, beta=0.0)[0] ** 2))(z)
    np.testing.assert_allclose(g, 2 * w * cb[want], rtol=1e-5)
    # Commitment gradient: 2β(z_e − q)/n.
    gc = jax.grad(lambda x: quantize(x, cb, beta=0.5)[2])(z)
    np.testing.assert_allclose(gc, 2 * 0.5 * (z - cb[want]) / 6, rtol=1e-5)


def test_ema_update_closed_form():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(1)
        st = init_vq(jax.random.key(0), 3, 2)
        z = rng.normal(size=(5, 2)).astype(np.float32)
        codes = np.array([0, 0, 2, 2, 2])
        new = ema_update(st, z, codes, decay=0.9, eps=1e-5)
        n_k = np.array([2.0, 0.0, 3.0])
        counts = 0.9 * np.ones(3) + 0.1 * n_k
        sums = 0.9 * np.asarray(st.sums) + 0.1 * np.stack([z[:2].sum(0), np.zeros(2), z[2:].sum(0)])
        tot = counts.sum()
        smooth = (counts + 1e-5) / (tot + 3e-5) * tot
        np.testing.assert_allclose(new.counts, counts, rtol=1e-6)
        np.testing.assert_allclose(new.codebook, sums / smooth[:, None], rtol=1e-5)
        # Fixed point: with decay → repeated updates on one cluster, its code → the cluster mean.
        s = VQState(jnp.zeros((1, 2)), jnp.ones(1), jnp.zeros((1, 2)))
        for _ in range(200):
            s = ema_update(s, z, np.zeros(5, np.int32), decay=0.9)
        np.testing.assert_allclose(s.codebook[0], z.mean(0), rtol=1e-3, atol=1e-4)


def test_reseed_dead_codes():
    st = VQState(
        jnp.array([[0.0, 0.0], [9.0, 9.0]]),
        jnp.array([5.0, 0.0]),
        jnp.array([[0.0, 0.0], [9.0, 9.0]]),
    )
    z = jnp.array([[0.0, 0.0], [0.0, 0.0], [3.0, 4.0]])
    new = reseed_dead_codes(st, z, jax.random.key(0))
    np.testing.assert_allclose(new.codebook[0], [0.0, 0.0])  # live code untouched
    np.testing.assert_allclose(new.codebook[1], [3.0, 4.0])  # only far point has mass
    assert float(new.counts[1]) == 1.0


def test_bad_shapes():
    with pytest.raises(ValueError, match="codebook"):
        quantize(jnp.zeros((2, 3)), jnp.zeros((4, 2)))
