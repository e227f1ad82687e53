"""RL harness: a whole PPO or DQN run (acting + learning) as one jittable function.

PureJaxRL-style: ``train = make_ppo_train(env, config, guide)`` returns ``train(key) ->
(runner, metrics)``; the environment steps (``vmap`` over ``num_envs``), the rollouts
(``lax.scan`` over ``num_steps``) and the PPO updates (``lax.scan`` over ``num_updates``)
are one XLA program, so ``jax.jit(jax.vmap(train))(keys)`` runs several seeds at once.

A :class:`Guide` plugs planner guidance into the loop without the harness knowing about
planners: per rollout step it returns a behaviour-cloning target for the policy, after each
rollout it trains its own models (an inverse dynamics model, ...) on the transitions, and it
may supply an extra behaviour-cloning batch (e.g. passive data labelled by an IDM).

``make_dqn_train(env, config)`` is the off-policy counterpart: ε-greedy acting in
``num_envs`` environments, every transition into the pure-JAX replay buffer
(:mod:`jaxlab.rl.replay`, segments of length 1), and ``updates_per_step`` double-DQN
updates per environment step, all inside one ``lax.scan``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState

from jaxlab.rl.dqn import (
    DQNBatch,
    DQNState,
    QNetwork,
    dqn_update,
    epsilon_greedy,
    epsilon_schedule,
)
from jaxlab.rl.ppo import ActorCritic, PPOBatch, gae, policy_distribution, ppo_update
from jaxlab.rl.replay import ReplayBuffer, replay_add, replay_init, replay_sample

__all__ = [
    "DQNConfig",
    "Guide",
    "PPOConfig",
    "Transitions",
    "make_dqn_train",
    "make_ppo_train",
]


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """PPO hyper-parameters (PureJaxRL defaults scaled down for small mazes).

    The optimiser is ``optax.chain(clip_by_global_norm(clip_global_norm), adam(lr,
    eps=adam_eps))``: the update clips the whole gradient's global norm, then takes an Adam
    step. An experiment sets every field from its config (e.g. ``mscp_passive_data``'s
    ``config.ppo``); the defaults serve tests and benchmarks.
    """

    num_envs: int = 16
    num_steps: int = 32
    num_updates: int = 50
    num_epochs: int = 4
    num_minibatches: int = 4
    lr: float = 3e-4
    adam_eps: float = 1e-5  # Adam's ε (PureJaxRL's; optax's default is 1e-8)
    clip_global_norm: float = 0.5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    guide_coef: float = 0.0
    hidden: tuple[int, ...] = (64, 64)


class Transitions(NamedTuple):
    """One rollout, leaves ``[num_steps, num_envs, ...]``; ``next_obs`` is pre-reset."""

    obs: jax.Array
    next_obs: jax.Array
    actions: jax.Array
    rewards: jax.Array
    dones: jax.Array
    success: jax.Array


class Guide(NamedTuple):
    """Hooks for planner guidance (all pure; ``gstate`` is any pytree).

    init(key, guide_args) -> gstate       guide_args: what ``train`` was given
                                          (pre-trained models, data, per-arm switches)
    targets(gstate, obs [N, d]) -> (probs [N, K], weight [N])
    update(gstate, transitions, key) -> (gstate, metrics dict)
    extra_bc(gstate, key) -> (obs [B, d], probs [B, K], weight [B])   (or None)
    """

    init: Callable
    targets: Callable
    update: Callable
    extra_bc: Callable | None = None


def _no_guide(num_actions: int) -> Guide:
    return Guide(
        init=lambda key, args: (),
        targets=lambda g, obs: (
            jnp.zeros(obs.shape[:-1] + (max(num_actions, 1),)),
            jnp.zeros(obs.shape[:-1]),
        ),
        update=lambda g, tr, key: (g, {}),
    )


class Runner(NamedTuple):
    train_state: TrainState
    env_state: Any
    obs: jax.Array
    guide_state: Any
    key: jax.Array


def make_ppo_train(env: Any, config: PPOConfig, guide: Guide | None = None) -> Callable:
    """Build ``train(key, guide_args=None) -> (runner, metrics)`` for a discrete-action env.

    Args:
      env: an environment with ``reset(key)``, ``step(state, action, key)``, ``obs_dim``
        and ``num_actions`` (e.g. :class:`jaxlab.rl.PointMaze`).
      config: a :class:`PPOConfig`.
      guide: optional :class:`Guide` (planner guidance, IDM labelling, ...).

    Returns:
      A pure function of a PRNG key (and the guide's arguments: data, pre-trained
      parameters and switches are arguments, not constants, so one compiled program
      serves every arm and seed under ``vmap``); its ``metrics`` have a leading
      ``num_updates`` axis:
      ``success_rate`` (finished episodes that reached the goal in that rollout),
      ``env_steps`` and the loss terms.
    """
    c = config
    guide = guide or _no_guide(env.num_actions)
    net = ActorCritic(num_actions=env.num_actions, hidden=c.hidden)
    # Clip the gradient's global norm, then an Adam step.
    tx = optax.chain(
        optax.clip_by_global_norm(c.clip_global_norm), optax.adam(c.lr, eps=c.adam_eps)
    )
    reset_v = jax.vmap(env.reset)
    step_v = jax.vmap(env.step)

    def rollout_step(runner: Runner, _):
        ts, env_state, obs, gstate, key = runner
        key, k_act, k_env = jax.random.split(key, 3)
        pi, value = ts.apply_fn(ts.params, obs)
        dist = policy_distribution(pi)
        action = dist.sample(seed=k_act)
        log_prob = dist.log_prob(action)
        gprobs, gweight = guide.targets(gstate, obs)
        env_state, next_obs, reward, done, info = step_v(
            env_state, action, jax.random.split(k_env, c.num_envs)
        )
        tr = Transitions(obs, info["obs"], action, reward, done, info["success"])
        extra = (value, log_prob, gprobs, gweight)
        return Runner(ts, env_state, next_obs, gstate, key), (tr, extra)

    def update_step(runner: Runner, _):
        runner, (tr, (values, log_probs, gprobs, gweight)) = jax.lax.scan(
            rollout_step, runner, None, length=c.num_steps
        )
        ts, env_state, obs, gstate, key = runner
        key, k_upd, k_guide, k_bc = jax.random.split(key, 4)
        _, last_v = ts.apply_fn(ts.params, obs)
        discounts = c.gamma * (1.0 - tr.dones.astype(jnp.float32))
        all_v = jnp.concatenate([values, last_v[None]], 0)
        adv, ret = jax.vmap(gae, in_axes=(1, 1, 1, None), out_axes=1)(
            tr.rewards, discounts, all_v, c.gae_lambda
        )
        flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731
        batch = PPOBatch(
            flat(tr.obs),
            flat(tr.actions),
            flat(log_probs),
            flat(adv),
            flat(ret),
            flat(gprobs),
            flat(gweight),
        )
        bc = None if guide.extra_bc is None else guide.extra_bc(gstate, k_bc)
        ts, metrics = ppo_update(
            ts,
            batch,
            k_upd,
            num_epochs=c.num_epochs,
            num_minibatches=c.num_minibatches,
            bc=bc,
            clip_eps=c.clip_eps,
            vf_coef=c.vf_coef,
            ent_coef=c.ent_coef,
            guide_coef=c.guide_coef,
        )
        gstate, gmetrics = guide.update(gstate, tr, k_guide)
        done = tr.dones.astype(jnp.float32)
        metrics = dict(
            metrics,
            **gmetrics,
            success_rate=tr.success.astype(jnp.float32).sum() / jnp.maximum(done.sum(), 1.0),
            episodes=done.sum(),
        )
        return Runner(ts, env_state, obs, gstate, key), metrics

    def train(key: jax.Array, guide_args: Any = None):
        k_net, k_env, k_guide, key = jax.random.split(key, 4)
        params = net.init(k_net, jnp.zeros((1, env.obs_dim)))
        ts = TrainState.create(apply_fn=net.apply, params=params, tx=tx)
        env_state, obs = reset_v(jax.random.split(k_env, c.num_envs))
        runner = Runner(ts, env_state, obs, guide.init(k_guide, guide_args), key)
        runner, metrics = jax.lax.scan(update_step, runner, None, length=c.num_updates)
        steps = (jnp.arange(c.num_updates) + 1) * c.num_envs * c.num_steps
        return runner, dict(metrics, env_steps=steps)

    return train


@dataclasses.dataclass(frozen=True)
class DQNConfig:
    """DQN hyper-parameters (defaults sized for the small point mazes).

    One iteration = ``steps_per_iteration`` vectorised environment steps (``num_envs``
    transitions each), each followed by ``updates_per_step`` gradient steps once the buffer
    holds ``learning_starts`` transitions; metrics are reported per iteration. ε decays
    linearly from ``eps_start`` to ``eps_end`` over the first ``eps_fraction`` of all
    environment steps; ``target_period`` counts gradient steps.
    """

    num_envs: int = 8
    num_iterations: int = 20
    steps_per_iteration: int = 50
    updates_per_step: int = 1
    batch_size: int = 64
    buffer_size: int = 10_000
    learning_starts: int = 256
    lr: float = 1e-3
    clip_global_norm: float = 10.0
    gamma: float = 0.99
    double: bool = True
    huber_delta: float = 1.0
    tau: float = 1.0
    target_period: int = 50
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_fraction: float = 0.5
    hidden: tuple[int, ...] = (64, 64)


class DQNRunner(NamedTuple):
    train_state: DQNState
    buffer: ReplayBuffer
    env_state: Any
    obs: jax.Array
    env_steps: jax.Array
    key: jax.Array


def make_dqn_train(env: Any, config: DQNConfig) -> Callable:
    """Build ``train(key) -> (runner, metrics)``: a whole (double) DQN run in one program.

    Args:
      env: an environment with ``reset(key)``, ``step(state, action, key)`` (auto-reset,
        ``info["obs"]`` the pre-reset next observation, optional ``info["truncated"]``:
        time-limit ends are not terminal and bootstrap), ``obs_dim``, ``num_actions``.
      config: a :class:`DQNConfig`.

    Returns:
      A pure function of a PRNG key (``jax.jit(jax.vmap(train))`` runs several seeds);
      ``runner.train_state`` holds the learnt Q-network (``apply_fn``, ``params``), and
      ``metrics`` have a leading ``num_iterations`` axis: ``success_rate`` (finished
      episodes that reached the goal, ε-greedy behaviour), ``episodes``, ``loss`` (mean
      over the iteration's updates, 0 before learning starts), ``epsilon``, ``env_steps``.
    """
    c = config
    if env.num_actions < 2:
        raise ValueError(f"DQN needs a discrete action space, got num_actions={env.num_actions}")
    if c.num_envs > c.buffer_size:
        raise ValueError(f"buffer_size={c.buffer_size} must be >= num_envs={c.num_envs}")
    if c.learning_starts < 1 or c.batch_size < 1 or c.updates_per_step < 1:
        raise ValueError("learning_starts, batch_size and updates_per_step must be >= 1")
    net = QNetwork(num_actions=env.num_actions, hidden=c.hidden)
    tx = optax.chain(optax.clip_by_global_norm(c.clip_global_norm), optax.adam(c.lr))
    total = c.num_iterations * c.steps_per_iteration * c.num_envs
    decay = max(int(c.eps_fraction * total), 1)
    eps_fn = epsilon_schedule(c.eps_start, c.eps_end, decay)
    reset_v = jax.vmap(env.reset)
    step_v = jax.vmap(env.step)

    def learn(ts: DQNState, buffer: ReplayBuffer, key: jax.Array):
        def one(ts, k):
            seg = replay_sample(buffer, k, c.batch_size, 1)
            batch = jax.tree.map(lambda x: x[:, 0], seg)
            ts, m = dqn_update(
                ts,
                batch,
                discount=c.gamma,
                double=c.double,
                huber_delta=c.huber_delta,
                tau=c.tau,
                target_period=c.target_period,
            )
            return ts, m["loss"]

        return jax.lax.scan(one, ts, jax.random.split(key, c.updates_per_step))

    def env_step(runner: DQNRunner, _):
        ts, buffer, env_state, obs, n, key = runner
        key, k_act, k_env, k_learn = jax.random.split(key, 4)
        eps = eps_fn(n)
        action, _ = epsilon_greedy(ts.apply_fn(ts.params, obs), k_act, eps)
        env_state, next_obs, reward, done, info = step_v(
            env_state, action, jax.random.split(k_env, c.num_envs)
        )
        terminal = done & ~info["truncated"] if "truncated" in info else done
        tr = DQNBatch(obs, action, reward, terminal.astype(jnp.float32), info["obs"])
        buffer = replay_add(buffer, jax.tree.map(lambda x: x[:, None], tr))
        ready = buffer.size >= c.learning_starts
        ts, losses = jax.lax.cond(
            ready,
            lambda t: learn(t, buffer, k_learn),
            lambda t: (t, jnp.zeros(c.updates_per_step)),
            ts,
        )
        out = {
            "success": jnp.sum(info["success"].astype(jnp.float32))
            if "success" in info
            else jnp.sum(reward),
            "episodes": jnp.sum(done.astype(jnp.float32)),
            "loss": losses.mean(),
            "learning": ready.astype(jnp.float32),
            "epsilon": eps,
        }
        runner = DQNRunner(ts, buffer, env_state, next_obs, n + c.num_envs, key)
        return runner, out

    def iteration(runner: DQNRunner, _):
        runner, out = jax.lax.scan(env_step, runner, None, length=c.steps_per_iteration)
        metrics = {
            "success_rate": out["success"].sum() / jnp.maximum(out["episodes"].sum(), 1.0),
            "episodes": out["episodes"].sum(),
            "loss": out["loss"].sum() / jnp.maximum(out["learning"].sum(), 1.0),
            "epsilon": out["epsilon"][-1],
            "env_steps": runner.env_steps,
        }
        return runner, metrics

    def train(key: jax.Array):
        k_net, k_env, key = jax.random.split(key, 3)
        params = net.init(k_net, jnp.zeros((1, env.obs_dim)))
        ts = DQNState.create(apply_fn=net.apply, params=params, tx=tx, target_params=params)
        env_state, obs = reset_v(jax.random.split(k_env, c.num_envs))
        example = DQNBatch(
            jnp.zeros((1, env.obs_dim)),
            jnp.zeros(1, jnp.int32),
            jnp.zeros(1),
            jnp.zeros(1),
            jnp.zeros((1, env.obs_dim)),
        )
        buffer = replay_init(example, c.buffer_size)
        runner = DQNRunner(ts, buffer, env_state, obs, jnp.zeros((), jnp.int32), key)
        return jax.lax.scan(iteration, runner, None, length=c.num_iterations)

    return train
