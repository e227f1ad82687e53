"""GAE against a NumPy loop; PPO loss against a hand computation; PPO solves a corridor."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl import ActorCritic, PPOBatch, gae, make_point_maze, ppo_loss
from jaxlab.trainers.rl import PPOConfig, make_ppo_train


def gae_numpy(r, disc, v, lam):
    adv = np.zeros_like(r)
    last = 0.0
    for t in reversed(range(len(r))):
        delta = r[t] + disc[t] * v[t + 1] - v[t]
        last = delta + disc[t] * lam * last
        adv[t] = last
    return adv


def test_gae_matches_numpy_loop():
    rng = np.random.default_rng(0)
    r = rng.normal(size=12).astype(np.float32)
    done = rng.random(12) < 0.2
    disc = (0.97 * (1 - done)).astype(np.float32)
    v = rng.normal(size=13).astype(np.float32)
    adv, ret = jax.jit(gae, static_argnums=3)(r, disc, v, 0.9)
    np.testing.assert_allclose(adv, gae_numpy(r, disc, v, 0.9), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, adv + v[:-1], rtol=1e-6)
    # vmap over a batch of trajectories (time-major [T, B]).
    R, D, V = r.reshape(12, 1).repeat(3, 1), disc.reshape(12, 1).repeat(3, 1), v.reshape(13, 1)
    advb, _ = jax.vmap(gae, in_axes=(1, 1, 1, None), out_axes=1)(R, D, V.repeat(3, 1), 0.9)
    np.testing.assert_allclose(advb[:, 2], adv, rtol=1e-6)


def test_gae_bad_shapes():
    with pytest.raises(ValueError, match="values"):
        gae(jnp.ones(3), jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match="discounts"):
        gae(jnp.ones(3), jnp.ones(2), jnp.ones(4))


def test_ppo_loss_matches_hand_computation():
    net = ActorCritic(num_actions=3, hidden=(8,))
    obs = jax.random.normal(jax.random.key(0), (6, 2))
    p = net.init(jax.random.key(1), obs)
    logits, v = net.apply(p, obs)
    acts = jnp.array([0, 1, 2, 0, 1, 2])
    old = jnp.log(jnp.full(6, 0.3))
    adv = jnp.array([1.0, -1.0, 2.0, 0.5, -0.3, 0.0])
    ret = jnp.ones(6)
    b = PPOBatch(obs, acts, old, adv, ret, jnp.zeros((6, 3)), jnp.zeros(6))
    loss, m = jax.jit(
        lambda q: ppo_loss(q, net.apply, b, clip_eps=0.2, vf_coef=0.5, ent_coef=0.01)
    )(p)
    lp = np.asarray(jax.nn.log_softmax(logits))
    ratio = np.exp(lp[np.arange(6), np.asarray(acts)] - np.asarray(old))
    a = np.asarray(adv)
    a = (a - a.mean()) / (a.std() + 1e-8)
    pg = -np.mean(np.minimum(ratio * a, np.clip(ratio, 0.8, 1.2) * a))
    ent = -np.mean(np.sum(np.exp(lp) * lp, -1))
    want = pg + 0.5 * np.mean((np.asarray(v) - 1.0) ** 2) - 0.01 * ent
    np.testing.assert_allclose(loss, want, rtol=1e-5)
    g = jax.jit(jax.grad(lambda q: ppo_loss(q, net.apply, b)[0]))(p)
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(g))


def test_ppo_solves_corridor():
    env = make_point_maze("corridor", start_cells=[(1, 1)], goal_cells=[(1, 5)], max_steps=20)
    cfg = PPOConfig(num_envs=8, num_steps=16, num_updates=20, hidden=(32, 32), lr=3e-3)
    train = jax.jit(jax.vmap(make_ppo_train(env, cfg)))
    _, m = train(jax.random.split(jax.random.key(0), 2))
    sr = np.asarray(m["success_rate"])
    assert sr.shape == (2, 20)
    assert sr[:, :2].mean() < 0.5 and (sr[:, -3:] > 0.9).all()


@pytest.mark.parametrize("adam_eps", [1e-8, 1e3])
def test_ppo_first_update_is_one_adam_step_with_the_configured_eps(adam_eps):
    """One update of one epoch and one minibatch is Adam's first step, whose size per
    parameter is exactly ``lr·|g|/(|g| + ε)`` (bias-corrected m̂ = g, v̂ = g²): ≈ lr where
    ``ε ≪ |g|``, and at most ``lr·clip_global_norm/ε`` after the global-norm clip."""
    env = make_point_maze("corridor", start_cells=[(1, 1)], goal_cells=[(1, 5)], max_steps=20)
    lr, clip = 1e-2, 0.5
    cfg = PPOConfig(
        num_envs=4,
        num_steps=8,
        num_updates=1,
        num_epochs=1,
        num_minibatches=1,
        lr=lr,
        adam_eps=adam_eps,
        clip_global_norm=clip,
        hidden=(16,),
    )
    key = jax.random.key(3)
    runner, _ = jax.jit(make_ppo_train(env, cfg))(key)
    net = ActorCritic(num_actions=env.num_actions, hidden=cfg.hidden)
    init = net.init(jax.random.split(key, 4)[0], jnp.zeros((1, env.obs_dim)))
    step = np.concatenate(
        [
            np.abs(np.asarray(a) - np.asarray(b)).ravel()
            for a, b in zip(
                jax.tree.leaves(runner.train_state.params), jax.tree.leaves(init), strict=True
            )
        ]
    )
    if adam_eps < 1e-6:
        np.testing.assert_allclose(step.max(), lr, rtol=1e-3)
        assert np.mean(np.isclose(step, lr, rtol=1e-3)) > 0.5
    else:
        assert 0 < step.max() <= lr * clip / adam_eps + 1e-7
