"""Dr. Strategy's agent (jaxlab.rl.drstrategy_agent) against independent references: a
hand-written first Adam step of the world model, a Python replay of an episode's actions
in the maze, numpy nearest landmarks, and the RSSM's and the curiosity's invariants."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl import (
    DrStrategyConfig,
    drstrategy_curiosity,
    drstrategy_decode,
    drstrategy_encode,
    drstrategy_episode,
    drstrategy_filter,
    drstrategy_init,
    drstrategy_landmark_of,
    drstrategy_landmark_states,
    drstrategy_networks,
    drstrategy_update,
    make_point_maze,
    replay_add,
    replay_init,
    replay_sample,
    rssm_loss,
)
from jaxlab.rl.drstrategy_agent import (
    ACHIEVE_DRSTRATEGY,
    ACHIEVE_FLAT,
    EXPLORE,
    RANDOM,
)
from jaxlab.rl.envs import MazeState

LR, EPS, CLIP = 1e-3, 1e-5, 100.0  # DrStrategyConfig's default optimisers
CONFIG = DrStrategyConfig(
    latent_dim=6,
    stoch_dim=3,
    world_model_hidden=8,
    ensemble_size=2,
    num_landmarks=3,
    code_dim=2,
    policy_hidden=8,
    model_batch=2,
    model_length=3,
    imagination_batch=4,
    horizon=3,
    tdp_positives=4,
    episode_length=6,
    max_highway_steps=2,
    curiosity_rollouts=2,
    reseed_every=1,
)
DETERMINISTIC = dataclasses.replace(CONFIG, stochastic_latent=False)
SEGMENT = 5


def _replay(key):
    k_obs, k_act = jax.random.split(key)
    replay = replay_init(
        {"obs": jnp.zeros((SEGMENT, 2)), "action": jnp.zeros(SEGMENT, jnp.int32)}, 4
    )
    segments = {
        "obs": jax.random.uniform(k_obs, (4, SEGMENT, 2), minval=-1.0, maxval=1.0),
        "action": jax.random.randint(k_act, (4, SEGMENT), 0, 4),
    }
    return replay_add(replay, segments)


REPLAY = _replay(jax.random.key(1))


@pytest.fixture(scope="module")
def agent():
    return drstrategy_init(jax.random.key(0), CONFIG)


def test_update_steps_the_world_model_by_a_first_adam_step_on_the_rssm_loss(agent):
    """One update = one clipped Adam step on the RSSM loss of the sampled windows (the
    reference: Adam's first step ``−lr · g / (|g| + ε)`` written out in numpy); every
    behaviour and the TDP move; the metrics are finite."""
    key = jax.random.key(3)
    new, metrics = jax.jit(lambda a, k: drstrategy_update(a, CONFIG, REPLAY, k, 1))(agent, key)
    k_model = jax.random.split(key, 7)[0]
    windows = replay_sample(REPLAY, k_model, CONFIG.model_batch, CONFIG.model_length)
    wm = drstrategy_networks(CONFIG).world_model

    def loss(params):
        return rssm_loss(
            params,
            wm,
            windows["obs"],
            windows["action"][:, :-1],
            jax.random.fold_in(k_model, 1),
            alpha=CONFIG.kl_balance,
            free_nats=CONFIG.free_nats,
            kl_scale=CONFIG.kl_scale,
        )[0]

    value, grads = jax.value_and_grad(loss)(agent.world_model)
    g = [np.asarray(x, np.float64) for x in jax.tree.leaves(grads)]
    norm = np.sqrt(sum((x**2).sum() for x in g))
    scale = min(1.0, CLIP / norm)
    want = [
        np.asarray(p, np.float64) - LR * (scale * x) / (np.abs(scale * x) + EPS)
        for p, x in zip(jax.tree.leaves(agent.world_model), g, strict=True)
    ]
    for got, ref in zip(jax.tree.leaves(new.world_model), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(metrics["world_model_loss"], value, rtol=1e-5)
    for name in ("landmark_loss", "tdp_loss"):
        assert np.isfinite(metrics[name]), name
    assert metrics["returns"].shape == (4,)
    moved = [(agent.temporal_distance, new.temporal_distance)] + [
        (
            jax.tree.map(lambda x, i=i: x[i], agent.behaviours),
            jax.tree.map(lambda x, i=i: x[i], new.behaviours),
        )
        for i in range(4)
    ]
    for before, after in moved:
        assert any(
            not np.allclose(x, y)
            for x, y in zip(jax.tree.leaves(before), jax.tree.leaves(after), strict=True)
        )


def test_update_reseeds_dead_codes_only_on_multiples_of_reseed_every(agent):
    """Every code is dead (``dead_code_min_count`` huge): the codebook depends on the step
    only through ``step % reseed_every == 0``."""
    cfg = dataclasses.replace(CONFIG, reseed_every=2, dead_code_min_count=1e9)
    update = jax.jit(lambda a, s: drstrategy_update(a, cfg, REPLAY, jax.random.key(4), s)[0])
    codebooks = {s: update(agent, jnp.int32(s)).codebook.codebook for s in (1, 2, 3, 4)}
    np.testing.assert_array_equal(codebooks[1], codebooks[3])
    np.testing.assert_array_equal(codebooks[2], codebooks[4])
    assert not np.allclose(codebooks[1], codebooks[2])


def test_landmark_states_and_landmark_of_match_numpy(agent):
    states = jax.random.normal(jax.random.key(5), (7, CONFIG.state_dim))
    landmarks = jax.jit(lambda a: drstrategy_landmark_states(a, CONFIG))(agent)
    assert landmarks.shape == (CONFIG.num_landmarks, CONFIG.state_dim)
    # The RSSM's part of a landmark state is the prior's mean at its decoded h.
    wm = drstrategy_networks(CONFIG).world_model
    h = np.asarray(landmarks[:, : CONFIG.latent_dim])
    prior_mean = wm.apply(agent.world_model, jnp.asarray(h), method=wm.prior)[0]
    np.testing.assert_allclose(landmarks[:, CONFIG.latent_dim :], prior_mean, rtol=1e-6)
    z = CONFIG.latent_dim
    s, lm = np.asarray(states)[:, :z], h
    want = np.argmin(((s[:, None] - lm[None]) ** 2).sum(-1), 1)
    got = jax.jit(lambda a, x: drstrategy_landmark_of(a, CONFIG, x))(agent, states)
    np.testing.assert_array_equal(got, want)


def test_filter_is_the_encoder_for_the_deterministic_model_and_starts_at_h0_for_the_rssm():
    obs = jax.random.uniform(jax.random.key(6), (2, 4, 2), minval=-1.0, maxval=1.0)
    actions = jnp.array([[0, 1, 2], [3, 2, 1]])
    det = drstrategy_init(jax.random.key(0), DETERMINISTIC)
    got = jax.jit(lambda a, o, x, k: drstrategy_filter(a, DETERMINISTIC, o, x, k))(
        det, obs, actions, jax.random.key(0)
    )
    np.testing.assert_allclose(got, drstrategy_encode(det, DETERMINISTIC, obs), rtol=1e-5)
    # Independent of the actions (the deterministic model reads one observation).
    other = drstrategy_filter(det, DETERMINISTIC, obs, 3 - actions, jax.random.key(1))
    np.testing.assert_allclose(got, other, rtol=1e-6)
    rssm = drstrategy_init(jax.random.key(0), CONFIG)
    states = drstrategy_filter(rssm, CONFIG, obs, actions, jax.random.key(0))
    assert states.shape == (2, 4, CONFIG.state_dim)
    np.testing.assert_array_equal(states[:, 0, : CONFIG.latent_dim], 0.0)  # h_0 = 0
    assert np.abs(np.asarray(states[:, 1:, : CONFIG.latent_dim])).max() > 0
    # Filtering uses the posterior means: the key does not matter.
    again = drstrategy_filter(rssm, CONFIG, obs, actions, jax.random.key(9))
    np.testing.assert_allclose(states, again, rtol=1e-6)
    assert drstrategy_decode(rssm, CONFIG, states).shape == (2, 4, 2)


def test_curiosity_is_a_distribution_over_landmarks(agent):
    key = jax.random.key(7)
    p = jax.jit(lambda a, k: drstrategy_curiosity(a, CONFIG, k))(agent, key)
    assert p.shape == (CONFIG.num_landmarks,)
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-5)
    assert (p > 0).all()  # the floor ε keeps every landmark
    np.testing.assert_allclose(p, drstrategy_curiosity(agent, CONFIG, key), rtol=1e-5)


def _replay_episode(env, key, start, goal, actions, length):
    """The episode's positions, rebuilt in Python from its actions and step keys."""
    maze = MazeState(pos=start, goal=goal, t=jnp.zeros((), jnp.int32))
    success, positions = False, []
    for k, a in zip(jax.random.split(key, length), actions, strict=True):
        _, k_env = jax.random.split(k)
        positions.append(np.asarray(maze.pos))
        new, _, _, _, info = env.step(maze, a, k_env)
        if not success:
            maze = new
        success = success or bool(info["success"])
    return np.stack(positions), success


@pytest.mark.parametrize("mode", [RANDOM, EXPLORE, ACHIEVE_FLAT, ACHIEVE_DRSTRATEGY])
def test_episode_positions_follow_the_maze_under_its_actions(agent, mode):
    env = make_point_maze(max_steps=CONFIG.episode_length + 1, goal_radius=0.5)
    start, goal = jnp.array([1.5, 1.5]), jnp.array([1.5, 2.5])
    key = jax.random.key(8)
    run = jax.jit(lambda a, k, m: drstrategy_episode(a, CONFIG, env, k, start, goal, 1, m))
    positions, actions, success, _ = run(agent, key, jnp.int32(mode))
    assert positions.shape == (CONFIG.episode_length, 2)
    assert actions.dtype == jnp.int32 and actions.shape == (CONFIG.episode_length,)
    want, want_success = _replay_episode(
        env, key, start, goal, list(actions), CONFIG.episode_length
    )
    np.testing.assert_allclose(positions, want, rtol=1e-6)
    assert bool(success) == want_success


def test_episode_random_mode_draws_uniform_actions(agent):
    """In ``RANDOM`` mode the actions are ``categorical(zeros)`` with the step's key."""
    env = make_point_maze(max_steps=CONFIG.episode_length + 1)
    key = jax.random.key(9)
    _, actions, _, _ = drstrategy_episode(
        agent, CONFIG, env, key, jnp.array([1.5, 1.5]), jnp.array([-100.0, -100.0]), 0, RANDOM
    )
    want = [
        int(jax.random.categorical(jax.random.split(k)[0], jnp.zeros(CONFIG.num_actions)))
        for k in jax.random.split(key, CONFIG.episode_length)
    ]
    np.testing.assert_array_equal(actions, want)


def test_episode_stops_once_the_goal_is_reached(agent):
    """A goal at the start: success after the first step, and the agent never moves again."""
    env = make_point_maze(max_steps=CONFIG.episode_length + 1, goal_radius=0.9)
    start = jnp.array([1.5, 1.5])
    positions, _, success, _ = drstrategy_episode(
        agent, CONFIG, env, jax.random.key(2), start, start, 0, ACHIEVE_FLAT
    )
    assert bool(success)
    np.testing.assert_array_equal(positions[0], start)
    np.testing.assert_array_equal(positions[1:], np.broadcast_to(positions[1], (5, 2)))
