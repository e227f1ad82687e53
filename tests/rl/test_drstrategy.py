import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl.drstrategy import (
    LandmarkVQ,
    disagreement_reward,
    focused_starts,
    highway_reward,
    knn_particle_reward,
    landmark_curiosity,
    landmark_loss,
    nearest_landmark,
    temporal_distance_pairs,
)


def test_nearest_landmark_and_focused_starts_match_numpy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(0)
        h, lm = rng.normal(size=(20, 5)), rng.normal(size=(6, 5))
        want = np.argmin(((h[:, None] - lm[None]) ** 2).sum(-1), 1)
        np.testing.assert_array_equal(jax.jit(nearest_landmark)(h, lm), want)
        starts, idx = focused_starts(h, lm)
        np.testing.assert_allclose(starts, lm[want], rtol=1e-6)
        cand = rng.normal(size=(30, 5))
        starts, idx = focused_starts(h, lm, cand)
        near = np.argmin(((lm[want][:, None] - cand[None]) ** 2).sum(-1), 1)
        np.testing.assert_allclose(starts, cand[near], rtol=1e-6)
        np.testing.assert_array_equal(idx, want)
        # With a key: a candidate of the goal's landmark (its own nearest landmark is l*).
        starts, _ = jax.jit(focused_starts)(h, lm, cand, jax.random.key(0))
        cand_code = np.argmin(((cand[:, None] - lm[None]) ** 2).sum(-1), 1)
        for s, w, n in zip(np.asarray(starts), want, near, strict=True):
            j = int(np.argmin(np.abs(cand - s).sum(1)))
            assert cand_code[j] == w if (cand_code == w).any() else j == n
        with pytest.raises(ValueError, match="landmarks"):
            nearest_landmark(h, lm[:, :3])


def test_highway_reward_and_grad():
    h, t = jnp.array([[3.0, 4.0]]), jnp.zeros((1, 2))
    np.testing.assert_allclose(highway_reward(h, t), [-5.0], rtol=1e-6)
    g = jax.grad(lambda x: highway_reward(x, t).sum())(h)
    np.testing.assert_allclose(g, [[-0.6, -0.8]], rtol=1e-5)  # −(h − t)/‖h − t‖
    with pytest.raises(ValueError, match="same shape"):
        highway_reward(h, jnp.zeros(2))


def test_knn_reward_matches_brute_force():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(1)
        h = rng.normal(size=(12, 3)).astype(np.float32)
        d = np.sqrt(((h[:, None] - h[None]) ** 2).sum(-1))
        np.fill_diagonal(d, np.inf)
        want = np.log1p(np.sort(d, 1)[:, :4].mean(1))
        np.testing.assert_allclose(knn_particle_reward(h, 4), want, rtol=1e-4)
        np.testing.assert_allclose(
            knn_particle_reward(h, 30), np.log1p(np.sort(d, 1)[:, :11].mean(1)), rtol=1e-4
        )  # k clipped to n − 1
        with pytest.raises(ValueError, match="n >= 2"):
            knn_particle_reward(h[:1])


def test_disagreement_is_ensemble_variance():
    rng = np.random.default_rng(2)
    p = rng.normal(size=(4, 7, 3))
    np.testing.assert_allclose(disagreement_reward(p), p.var(0).mean(-1), rtol=1e-5)
    np.testing.assert_allclose(disagreement_reward(np.repeat(p[:1], 4, 0)), 0.0, atol=1e-7)
    with pytest.raises(ValueError, match="E >= 2"):
        disagreement_reward(p[:1])


def test_landmark_curiosity_matches_numpy_groupby():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(3)
        r, s = rng.normal(size=50), rng.integers(0, 5, size=50)
        s[s == 3] = 4  # landmark 3 has no rollout
        c, p = landmark_curiosity(r, s, 5, eps=0.01)
        means = np.array([r[s == k].mean() if (s == k).any() else np.nan for k in range(5)])
        means[3] = np.nanmin(means)
        np.testing.assert_allclose(c, means, rtol=1e-5)
        w = means - means.min() + 0.01
        np.testing.assert_allclose(p, w / w.sum(), rtol=1e-5)
        assert abs(float(p.sum()) - 1) < 1e-6


def test_temporal_distance_pairs_targets():
    t_len, b = 6, 4
    # trajectory b, step t encoded as the value [b, t]: targets can be checked exactly.
    tr = jnp.stack(jnp.meshgrid(jnp.arange(b), jnp.arange(t_len), indexing="xy"), -1)
    tr = tr.astype(jnp.float32)  # [T, B, 2] with tr[t, b] = (b, t)
    x, y, tgt = jax.jit(temporal_distance_pairs, static_argnums=(2, 3))(
        tr, jax.random.key(0), 40, 0.1
    )
    assert x.shape == (44, 2) and tgt.shape == (44,)
    x, y, tgt = map(np.asarray, (x, y, tgt))
    pos, neg = slice(0, 40), slice(40, 44)
    np.testing.assert_array_equal(x[pos, 0], y[pos, 0])  # same trajectory
    np.testing.assert_allclose(tgt[pos], (y[pos, 1] - x[pos, 1]) / (t_len - 1))
    assert (tgt[pos] >= 0).all() and (tgt[pos] <= 1).all()
    assert (x[neg, 0] != y[neg, 0]).all() and (tgt[neg] == 1).all()


def test_landmark_loss_straight_through_and_ema_loop():
    from jaxlab.rl import ema_update

    m = LandmarkVQ(latent=4, code_dim=2, hidden=(16,))
    p = m.init(jax.random.key(0), jnp.zeros((1, 4)))
    h = jax.random.normal(jax.random.key(1), (32, 4))
    codebook = jax.random.normal(jax.random.key(2), (3, 2))
    (loss, (z_e, codes)), g = jax.jit(
        jax.value_and_grad(landmark_loss, has_aux=True), static_argnums=1
    )(p, m, codebook, h)
    assert z_e.shape == (32, 2) and codes.shape == (32,)
    # straight-through: the encoder receives gradient although the code lookup is discrete.
    enc_norm = sum(float(jnp.abs(x).sum()) for x in jax.tree.leaves(g["params"]["enc"]))
    assert enc_norm > 0
    from jaxlab.rl import init_vq

    state = init_vq(jax.random.key(3), 3, 2)
    state = ema_update(state, z_e, codes)
    assert state.codebook.shape == (3, 2)
    with pytest.raises(ValueError, match="h must be"):
        landmark_loss(p, m, codebook, h[:, :3])
