"""DQN: TD targets/loss/gradients against NumPy, target update and ε-greedy against closed
forms, jit/vmap, bad inputs, and DQN solving the PPO test's corridor (greedy path optimal)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.rl import (
    DQNBatch,
    DQNState,
    MazeState,
    QNetwork,
    dqn_loss,
    dqn_update,
    epsilon_greedy,
    epsilon_schedule,
    make_point_maze,
    target_update,
)
from jaxlab.trainers.rl import DQNConfig, make_dqn_train


def linear_q(w, obs):
    return obs @ w


def _batch(seed=0, b=16, d=3, k=4):
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(b, d)).astype(np.float32)
    nxt = rng.normal(size=(b, d)).astype(np.float32)
    acts = rng.integers(k, size=b).astype(np.int32)
    rew = (3.0 * rng.normal(size=b)).astype(np.float32)
    term = (np.arange(b) % 4 == 0).astype(np.float32)
    w = rng.normal(size=(d, k)).astype(np.float32)
    w_tgt = rng.normal(size=(d, k)).astype(np.float32)
    return DQNBatch(*map(jnp.asarray, (obs, acts, rew, term, nxt))), w, w_tgt


def td_numpy(w, w_tgt, batch, gamma, double):
    """Reference loop: a* from the online net (double) or the target net, value from θ⁻."""
    obs, acts, rew, term, nxt = (np.asarray(x, np.float64) for x in batch)
    td = np.zeros(len(rew))
    for i in range(len(rew)):
        q_next_tgt = nxt[i] @ w_tgt
        a_star = np.argmax(nxt[i] @ w) if double else np.argmax(q_next_tgt)
        y = rew[i] + gamma * (1.0 - term[i]) * q_next_tgt[a_star]
        td[i] = y - (obs[i] @ w)[int(acts[i])]
    return td


def huber(x, delta):
    a = np.abs(x)
    return np.where(a <= delta, 0.5 * x**2, delta * (a - 0.5 * delta))


@pytest.mark.parametrize("double", [True, False])
def test_loss_matches_numpy_td_loop(double):
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        batch, w, w_tgt = _batch()
        # The batch exercises what it must: online and target argmax disagree on some s',
        # terminal transitions, and TD errors on both sides of the Huber threshold.
        sel_on = np.argmax(np.asarray(batch.next_obs) @ w, -1)
        sel_tgt = np.argmax(np.asarray(batch.next_obs) @ w_tgt, -1)
        assert (sel_on != sel_tgt).sum() >= 3
        td = td_numpy(w, w_tgt, batch, 0.9, double)
        assert (np.abs(td) < 2.5).sum() >= 3 and (np.abs(td) > 2.5).sum() >= 3
        loss_fn = jax.jit(
            lambda p, t: dqn_loss(
                p, t, linear_q, batch, discount=0.9, double=double, huber_delta=2.5
            )
        )
        loss, m = loss_fn(jnp.asarray(w), jnp.asarray(w_tgt))
        np.testing.assert_allclose(loss, huber(td, 2.5).mean(), rtol=1e-5)
        np.testing.assert_allclose(m["td_abs"], np.abs(td).mean(), rtol=1e-5)
        # Per transition (vmap over rows as batches of one): each row's loss equals its Huber
        # term, and rows where the online and target argmax disagree tell the targets apart.
        rows = jax.vmap(
            lambda r: dqn_loss(
                w,
                w_tgt,
                linear_q,
                jax.tree.map(lambda x: x[None], r),
                discount=0.9,
                double=double,
                huber_delta=2.5,
            )[0]
        )(batch)
        np.testing.assert_allclose(rows, huber(td, 2.5), rtol=1e-5)
        other = td_numpy(w, w_tgt, batch, 0.9, not double)
        differ = (sel_on != sel_tgt) & (np.asarray(batch.terminals) == 0)
        assert differ.sum() >= 2 and (np.abs(other - td)[differ] > 0.1).all()
        # Terminal transitions: the target is the reward alone, whatever the next state.
        far = batch._replace(next_obs=batch.next_obs * 100.0)
        td_far = td_numpy(w, w_tgt, far, 0.9, double)
        np.testing.assert_allclose(td_far[::4], td[::4], rtol=1e-5)


def test_gradient_stops_at_the_target():
    """With θ⁻ = θ the gradient must only flow through Q(s, a; θ): −clip(td)·obs / B."""
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        batch, w, _ = _batch(seed=1)
        g = jax.jit(
            jax.grad(lambda p: dqn_loss(p, p, linear_q, batch, discount=0.95, huber_delta=1.5)[0])
        )(jnp.asarray(w))
        td = td_numpy(w, w, batch, 0.95, True)
        want = np.zeros_like(w, np.float64)
        obs, acts = np.asarray(batch.obs, np.float64), np.asarray(batch.actions)
        for i in range(len(td)):
            want[:, acts[i]] -= np.clip(td[i], -1.5, 1.5) * obs[i] / len(td)
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-6)


def test_target_update_closed_form():
    p = {"a": jnp.arange(3.0), "b": jnp.ones((2, 2))}
    t = {"a": jnp.zeros(3), "b": jnp.full((2, 2), 5.0)}
    upd = jax.jit(lambda s: target_update(p, t, s, tau=0.3, period=3))
    for step in range(7):
        got = upd(step)
        for k in p:
            want = 0.3 * np.asarray(p[k]) + 0.7 * np.asarray(t[k]) if step % 3 == 0 else t[k]
            np.testing.assert_allclose(got[k], want, rtol=1e-6)
    hard = target_update(p, t, 4, tau=1.0, period=2)  # DQN's periodic copy
    np.testing.assert_allclose(hard["b"], p["b"])


def test_dqn_update_is_one_sgd_step_then_target_copy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        batch, w, w_tgt = _batch(seed=2)
        apply = lambda p, obs: linear_q(p["w"], obs)  # noqa: E731
        st = DQNState.create(
            apply_fn=apply,
            params={"w": jnp.asarray(w)},
            tx=optax.sgd(0.1),
            target_params={"w": jnp.asarray(w_tgt)},
        )
        upd = jax.jit(lambda s: dqn_update(s, batch, discount=0.8, target_period=2))
        st1, m = upd(st)
        td = td_numpy(w, w_tgt, batch, 0.8, True)
        grad = np.zeros_like(w, np.float64)
        for i in range(len(td)):
            grad[:, int(batch.actions[i])] -= np.clip(td[i], -1, 1) * np.asarray(batch.obs[i]) / 16
        np.testing.assert_allclose(st1.params["w"], w - 0.1 * grad, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(st1.target_params["w"], w_tgt)  # step 1: no copy yet
        np.testing.assert_allclose(m["loss"], huber(td, 1.0).mean(), rtol=1e-5)
        st2, _ = upd(st1)
        assert int(st2.step) == 2
        np.testing.assert_allclose(st2.target_params["w"], st2.params["w"])  # step 2: hard copy


def test_vmap_over_parameter_sets():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        batch, w, w_tgt = _batch(seed=3)
        ws = jnp.stack([jnp.asarray(w), -jnp.asarray(w), 2 * jnp.asarray(w)])
        losses = jax.vmap(lambda p: dqn_loss(p, w_tgt, linear_q, batch)[0])(ws)
        for i in range(3):
            want = huber(td_numpy(np.asarray(ws[i]), w_tgt, batch, 0.99, True), 1.0).mean()
            np.testing.assert_allclose(losses[i], want, rtol=1e-5)


def test_epsilon_greedy_probabilities_and_samples():
    q = jnp.array([[0.0, 3.0, 1.0, -1.0], [2.0, 0.0, 0.0, 0.0]])
    sample = jax.jit(jax.vmap(epsilon_greedy, in_axes=(None, 0, None)))
    eps = jnp.float32(0.4)  # traced inside jit
    acts, dist = sample(q, jax.random.split(jax.random.key(0), 4000), eps)
    want = np.full((2, 4), 0.1)
    want[0, 1] += 0.6
    want[1, 0] += 0.6
    np.testing.assert_allclose(dist.probs[0], want, rtol=1e-6)
    freq = np.stack([np.bincount(np.asarray(acts[:, j]), minlength=4) / 4000 for j in range(2)])
    np.testing.assert_allclose(freq, want, atol=0.03)
    greedy, _ = epsilon_greedy(q, jax.random.key(1), 0.0)
    np.testing.assert_array_equal(greedy, [1, 0])
    sched = epsilon_schedule(1.0, 0.1, 100)
    np.testing.assert_allclose(
        [sched(0), sched(50), sched(100), sched(500)], [1.0, 0.55, 0.1, 0.1], rtol=1e-6
    )


def test_bad_inputs():
    batch, w, w_tgt = _batch()
    with pytest.raises(ValueError, match="batch.actions"):
        dqn_loss(w, w_tgt, linear_q, batch._replace(actions=batch.actions[:3]))
    with pytest.raises(ValueError, match="batch.actions must be integers"):
        dqn_loss(w, w_tgt, linear_q, batch._replace(actions=batch.rewards))
    with pytest.raises(ValueError, match="batch.obs"):
        dqn_loss(w, w_tgt, linear_q, batch._replace(next_obs=batch.next_obs[:, :2]))
    with pytest.raises(ValueError, match="batch.terminals"):
        dqn_loss(w, w_tgt, linear_q, batch._replace(terminals=jnp.zeros((16, 1))))
    for gamma in (-0.1, 1.01):
        with pytest.raises(ValueError, match="discount"):
            dqn_loss(w, w_tgt, linear_q, batch, discount=gamma)
    q = jnp.zeros((3, 4))
    for eps in (-0.01, 1.5):
        with pytest.raises(ValueError, match="epsilon"):
            epsilon_greedy(q, jax.random.key(0), eps)
    with pytest.raises(ValueError, match="epsilon must be a scalar"):
        epsilon_greedy(q, jax.random.key(0), jnp.full(3, 0.1))
    with pytest.raises(ValueError, match="q_values"):
        epsilon_greedy(jnp.zeros((3, 1)), jax.random.key(0), 0.1)
    with pytest.raises(ValueError, match="start"):
        epsilon_schedule(1.2, 0.1, 10)
    with pytest.raises(ValueError, match="end"):
        epsilon_schedule(1.0, -0.1, 10)
    with pytest.raises(ValueError, match="tau"):
        target_update(w, w_tgt, 0, tau=1.5)
    with pytest.raises(ValueError, match="period"):
        target_update(w, w_tgt, 0, period=0)
    env = make_point_maze("corridor")
    with pytest.raises(ValueError, match="start"):
        make_dqn_train(env, DQNConfig(eps_start=1.5))
    with pytest.raises(ValueError, match="discrete"):
        make_dqn_train(make_point_maze("corridor", num_actions=0), DQNConfig())
    with pytest.raises(ValueError, match="buffer_size"):
        make_dqn_train(env, DQNConfig(num_envs=8, buffer_size=4))


def optimal_steps(env, pos):
    """BFS over the positions reachable by the maze's own rules (NumPy): fewest steps."""
    walls, goal = env.walls, np.array([5.5, 1.5])
    dirs = env.directions.astype(np.float64) * env.step_size

    def wall(x, y):
        return walls[int(np.floor(y)), int(np.floor(x))]

    frontier, seen = [tuple(pos)], {tuple(np.round(pos, 6))}
    for n in itertools.count(1):
        nxt = []
        for x, y in frontier:
            for dx, dy in dirs:
                xx = x + dx if not wall(x + dx, y) else x
                yy = y + dy if not wall(xx, y + dy) else y
                dist = np.hypot(xx - goal[0], yy - goal[1])
                assert abs(dist - env.goal_radius) > 1e-3  # no float32-ambiguous starts
                if dist < env.goal_radius:
                    return n
                key = tuple(np.round([xx, yy], 6))
                if key not in seen:
                    seen.add(key)
                    nxt.append((xx, yy))
        frontier = nxt


def greedy_episode_lengths(env, apply_fn, params, starts):
    """Greedy (argmax Q) episodes from ``starts [n, 2]`` for parameters with a leading seed
    axis: ``[seeds, n]`` first-success step (1-based), 0 where the goal was never reached."""
    n = len(starts)
    state = MazeState(
        pos=jnp.asarray(starts, jnp.float32),
        goal=jnp.tile(jnp.array([5.5, 1.5]), (n, 1)),
        t=jnp.zeros(n, jnp.int32),
    )

    def episode(p):
        def body(carry, t):
            st, length = carry
            act = jnp.argmax(apply_fn(p, jax.vmap(env.observe)(st)), -1).astype(jnp.int32)
            st, _, _, _, info = jax.vmap(env.step)(st, act, jax.random.split(jax.random.key(0), n))
            length = jnp.where(info["success"] & (length == 0), t + 1, length)
            return (st, length), None

        carry = (state, jnp.zeros(n, jnp.int32))
        return jax.lax.scan(body, carry, jnp.arange(env.max_steps))[0][1]

    return np.asarray(jax.jit(jax.vmap(episode))(params))


def test_dqn_solves_corridor():
    # The PPO test's corridor; γ = 0.9 keeps the action gaps (≈ 10 % per step) above the
    # Q-network's approximation error, so the greedy policy can be exactly optimal.
    env = make_point_maze("corridor", start_cells=[(1, 1)], goal_cells=[(1, 5)], max_steps=20)
    cfg = DQNConfig(
        num_envs=8, num_iterations=10, steps_per_iteration=200, hidden=(32, 32), gamma=0.9
    )
    train = jax.jit(jax.vmap(make_dqn_train(env, cfg)))
    runner, m = train(jax.random.split(jax.random.key(0), 2))
    sr = np.asarray(m["success_rate"])
    assert sr.shape == (2, 10)
    # ε-greedy behaviour: random at first, then (ε = 0.05) almost always successful.
    assert sr[:, 0].max() < 0.2 and (sr[:, -3:] > 0.9).all()
    # The greedy policy of each seed from a grid of starts covering the start cell: every
    # episode reaches the goal in the fewest steps the maze allows (BFS).
    g = np.array([1.13, 1.31, 1.49, 1.67, 1.86])
    starts = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    best = np.array([optimal_steps(env, s) for s in starts])
    net = QNetwork(num_actions=4, hidden=(32, 32))
    lengths = greedy_episode_lengths(env, net.apply, runner.train_state.params, starts)
    assert (lengths > 0).all(), lengths
    np.testing.assert_array_equal(lengths, np.broadcast_to(best, lengths.shape))
