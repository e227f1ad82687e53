"""Dr. Strategy in a state-based point maze: pure per-seed programs, seeds under ``vmap``.

The agent (world model, landmarks, highway / explorer / achiever behaviours, TDP) is
:mod:`jaxlab.rl.drstrategy_agent`; this file is the experiment around it. Per seed:
random-action segments fill the replay buffer; then ``rounds`` × (collection of segments
"landmark by curiosity → highway → explorer", ``train_steps`` agent updates, the landmarks'
curiosity). Both achievers (Dr. Strategy's, with focused sampling from the landmark nearest
the goal, and a LEXA-like flat one) are trained in imagination on the same world model, data
and TDP, so they see the same environment steps, and are evaluated zero-shot on every room
cell as goal, from the top-left room.

Three jitted programs (:class:`Run`): ``init``, the rounds as a ``segmented_scan_run`` in
``config.segments`` pieces checkpointed under ``workdir/rounds`` (a killed run resumes after
its last finished piece, bit-identically), and the evaluation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.rl import (
    DrStrategyConfig,
    PointMaze,
    drstrategy_curiosity,
    drstrategy_decode,
    drstrategy_encode,
    drstrategy_episode,
    drstrategy_filter,
    drstrategy_init,
    drstrategy_landmark_of,
    drstrategy_landmark_states,
    drstrategy_update,
    make_point_maze,
    replay_add,
    replay_init,
    rooms_layout,
)
from jaxlab.rl.drstrategy_agent import (
    ACHIEVE_DRSTRATEGY,
    ACHIEVE_FLAT,
    EXPLORE,
    RANDOM,
    DrStrategyAgent,
)
from jaxlab.rl.grid import room_of
from jaxlab.rl.replay import ReplayBuffer
from jaxlab.train import (
    Checkpointer,
    atomic_write_json,
    atomic_write_npz,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    runs_sharding,
    scan_run,
    segmented_scan_run,
)
from jaxlab.train.lifecycle import padded_runs, run_lanes
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec, abstract

NUM_ACTIONS = 4
OBS_DIM = 2  # the agent observes its position, scaled to [-1, 1]


# --------------------------------------------------------------------------- config
def agent_config(config: ml_collections.ConfigDict) -> DrStrategyConfig:
    """The agent's hyper-parameters from the experiment's config."""
    return DrStrategyConfig(
        obs_dim=OBS_DIM,
        num_actions=NUM_ACTIONS,
        stochastic_latent=bool(config.stochastic_latent),
        latent_dim=config.latent,
        stoch_dim=config.stoch,
        world_model_hidden=config.wm_hidden,
        ensemble_size=config.ensemble,
        num_landmarks=config.num_landmarks,
        code_dim=config.code_dim,
        policy_hidden=config.hidden,
        kl_balance=config.kl_balance,
        free_nats=config.free_nats,
        kl_scale=config.kl_scale,
        codebook_decay=config.vq_decay,
        dead_code_min_count=config.vq_min_count,
        reseed_every=config.resample_every,
        model_batch=config.wm_batch,
        model_length=config.wm_length,
        imagination_batch=config.imag_batch,
        horizon=config.horizon,
        discount=config.discount,
        lambda_=config.lambda_,
        entropy_coef=config.ent_coef,
        knn_weight=config.knn_weight,
        knn_k=config.knn_k,
        tdp_positives=config.tdp_positives,
        tdp_neg_factor=config.tdp_neg_factor,
        episode_length=config.segment,
        reach_mse=config.reach_mse,
        max_highway_steps=config.max_highway_steps,
        curiosity_rollouts=config.curiosity_rollouts,
        model_optimizer=make_optimizer(config.wm_optimizer),
        behaviour_optimizer=make_optimizer(config.ac_optimizer),
    )


def empty_replay(config: ml_collections.ConfigDict) -> ReplayBuffer:
    """A replay buffer for every round's segments: ``{"obs": [T, 2], "action": [T]}``."""
    example = {
        "obs": jnp.zeros((config.segment, OBS_DIM)),
        "action": jnp.zeros((config.segment,), jnp.int32),
    }
    return replay_init(example, (config.rounds + 1) * config.segments_per_round)


# --------------------------------------------------------------------------- maze
def make_env(
    config: ml_collections.ConfigDict,
    start_room_only: bool = True,
    goal_radius: float = 1e-3,
    max_steps: int | None = None,
) -> PointMaze:
    """The ``rooms_per_side²``-room maze; starts in the top-left room (or anywhere)."""
    layout = rooms_layout(config.rooms_per_side, config.room)
    walls = make_point_maze(layout).walls
    free = np.argwhere(~walls).astype(np.int32)
    rooms, door = room_of(free, config.room)
    start = free[(rooms == 0).all(1) & ~door] if start_room_only else free
    return make_point_maze(
        layout,
        start_cells=start,
        num_actions=NUM_ACTIONS,
        step_size=config.step_size,
        goal_radius=goal_radius,
        max_steps=max_steps or config.segment + 1,
    )


def to_unit(pos: jax.Array, size: jax.Array) -> jax.Array:
    """Maze positions in cells ``[..., 2]`` → the world model's input range [−1, 1]."""
    return pos / jnp.broadcast_to(size, pos.shape) * 2.0 - 1.0


def from_unit(u: jax.Array, size: jax.Array) -> jax.Array:
    """Inverse of :func:`to_unit`: ``[..., 2]`` in [−1, 1] → positions in cells."""
    return (u + 1.0) / 2.0 * jnp.broadcast_to(size, u.shape)


def coverage(walls: np.ndarray, pos: jax.Array) -> jax.Array:
    """Fraction of free cells visited by positions ``[..., 2]``."""
    rows, cols = walls.shape
    col = jnp.clip(jnp.floor(pos[..., 0]).astype(jnp.int32), 0, cols - 1).reshape(-1)
    row = jnp.clip(jnp.floor(pos[..., 1]).astype(jnp.int32), 0, rows - 1).reshape(-1)
    visited = jnp.zeros((rows, cols), bool).at[row, col].set(True)
    free = jnp.asarray(~walls)
    return jnp.sum(visited & free) / jnp.sum(free)


# --------------------------------------------------------------------------- one seed
class Run(NamedTuple):
    """A seed's program in three pure pieces: ``init(key) -> (carry, k_eval)``,
    ``round_(carry, r) -> (carry, metrics)`` (one round; ``lax.scan`` it over
    ``r = 0 .. rounds``) and ``finish(carry, k_eval) -> results``."""

    init: Callable
    round_: Callable
    finish: Callable


def make_run(config: ml_collections.ConfigDict) -> tuple[Run, dict]:
    """A seed's :class:`Run` and the maze's ``meta`` (goal rooms, goals, walls)."""
    agent_cfg = agent_config(config)
    env = make_env(config, goal_radius=config.goal_radius)  # start room only
    walls = env.walls
    free = np.argwhere(~walls).astype(np.int32)
    rooms, door = room_of(free, config.room)
    goal_cells = free[~door]
    goal_rooms = rooms[~door].sum(1)  # rooms away from the start room (0, 0)
    goals = jnp.asarray(goal_cells[:, ::-1].astype(np.float32) + 0.5)  # (x, y)
    size = jnp.asarray(env.size)
    nowhere = jnp.array([-100.0, -100.0])  # an unreachable goal for collection episodes
    n_goals, n_cov = goals.shape[0], config.coverage_segments
    n_seg = config.segments_per_round

    def episodes(agent: DrStrategyAgent, keys, starts, goal, landmark, mode):
        return jax.vmap(
            lambda k, s, g, i, m: drstrategy_episode(agent, agent_cfg, env, k, s, g, i, m)
        )(keys, starts, goal, landmark, mode)

    def init(key):
        """A seed's carry before round 0, ``(agent, buffer, p, round keys [R + 1])``, and
        its evaluation key."""
        k_init, k_rounds, k_eval = jax.random.split(key, 3)
        agent = drstrategy_init(k_init, agent_cfg)
        p0 = jnp.full((config.num_landmarks,), 1.0 / config.num_landmarks)
        carry = (agent, empty_replay(config), p0, jax.random.split(k_rounds, config.rounds + 1))
        return carry, k_eval

    def round_(carry, r):
        """Round ``r`` of a seed: collection, ``train_steps`` agent updates, curiosity."""
        agent, buffer, p, keys = carry
        k_landmark, k_collect, k_train, k_curiosity = jax.random.split(keys[r], 4)
        # Collect: landmark by curiosity, highway, explorer (round 0: random actions).
        landmark = jax.random.categorical(k_landmark, jnp.log(p), shape=(n_seg,))
        mode = jnp.where(r == 0, RANDOM, EXPLORE) * jnp.ones(n_seg, jnp.int32)
        k_starts, k_episodes = jax.random.split(k_collect)
        starts = jax.vmap(lambda k: env.reset(k)[0].pos)(jax.random.split(k_starts, n_seg))
        pos, actions, _, _ = episodes(
            agent,
            jax.random.split(k_episodes, n_seg),
            starts,
            jnp.broadcast_to(nowhere, (n_seg, 2)),
            landmark,
            mode,
        )
        buffer = replay_add(buffer, {"obs": to_unit(pos, size), "action": actions})
        agent, metrics = scan_run(
            lambda a, xs: drstrategy_update(a, agent_cfg, buffer, xs[0], xs[1]),
            agent,
            (
                jax.random.split(k_train, config.train_steps),
                r * config.train_steps + jnp.arange(config.train_steps),
            ),
        )
        p = drstrategy_curiosity(agent, agent_cfg, k_curiosity)
        last = jax.tree.map(lambda x: x[-1], metrics)
        return (agent, buffer, p, keys), dict(last, landmark_prob=p)

    def finish(carry, k_eval):
        """A seed's evaluation after the last round. One batch of episodes: evaluation
        (every goal; flat, Dr. Strategy) and coverage (curiosity-sampled vs uniformly
        sampled landmarks, highway then explorer)."""
        agent, buffer, p, _ = carry
        goal_states = drstrategy_encode(agent, agent_cfg, to_unit(goals, size))
        goal_landmark = drstrategy_landmark_of(agent, agent_cfg, goal_states)
        k_curious, k_uniform, k_episodes = jax.random.split(k_eval, 3)
        coverage_landmark = jnp.concatenate(
            [
                jax.random.categorical(k_curious, jnp.log(p), shape=(n_cov,)),
                jax.random.randint(k_uniform, (n_cov,), 0, config.num_landmarks),
            ]
        )
        goal = jnp.concatenate([goals, goals, jnp.broadcast_to(nowhere, (2 * n_cov, 2))])
        landmark = jnp.concatenate([goal_landmark, goal_landmark, coverage_landmark])
        mode = jnp.concatenate(
            [
                jnp.full(n_goals, ACHIEVE_FLAT),
                jnp.full(n_goals, ACHIEVE_DRSTRATEGY),
                jnp.full(2 * n_cov, EXPLORE, jnp.int32),
            ]
        )
        # Paired: the flat and Dr. Strategy episodes of a goal share their key and start.
        keys = jax.random.split(k_episodes, n_goals + 2 * n_cov)
        keys = jnp.concatenate([keys[:n_goals], keys])
        starts = jax.vmap(lambda k: env.reset(k)[0].pos)(keys)
        pos, _, success, reached = episodes(agent, keys, starts, goal, landmark, mode)
        obs = buffer.data["obs"].reshape(-1, OBS_DIM)
        # The agent's states along the stored segments (filtered posterior means).
        states = drstrategy_filter(
            agent, agent_cfg, buffer.data["obs"], buffer.data["action"][:, :-1], k_eval
        )
        states = states.reshape(-1, states.shape[-1])
        landmark_states = drstrategy_landmark_states(agent, agent_cfg)
        e = 2 * n_goals
        return {
            "success_flat": success[:n_goals].astype(jnp.float32),
            "success_ds": success[n_goals:e].astype(jnp.float32),
            "highway_reach_eval": jnp.mean(reached[n_goals:e].astype(jnp.float32)),
            "highway_reach_explore": jnp.mean(reached[e:].astype(jnp.float32)),
            "path_flat": pos[:n_goals],
            "path_ds": pos[n_goals:e],
            "coverage_curiosity": coverage(walls, pos[e : e + n_cov]),
            "coverage_uniform": coverage(walls, pos[e + n_cov :]),
            "coverage_replay": coverage(walls, from_unit(obs, size)),
            "replay_pos": from_unit(obs, size),
            "replay_code": drstrategy_landmark_of(agent, agent_cfg, states),
            "landmark_pos": from_unit(drstrategy_decode(agent, agent_cfg, landmark_states), size),
        }

    return Run(init, round_, finish), dict(
        goal_rooms=goal_rooms, goals=np.asarray(goals), walls=walls
    )


def _plot_landmarks(res, meta, workdir: str, seed_index: int = 0) -> str:
    from matplotlib.figure import Figure  # no pyplot: no backend, no global state

    walls = meta["walls"]
    pos = np.asarray(res["replay_pos"][seed_index])
    code = np.asarray(res["replay_code"][seed_index])
    lm = np.asarray(res["landmark_pos"][seed_index])
    fig = Figure(figsize=(4.5, 4.5))
    ax = fig.subplots()
    ax.imshow(walls, cmap="Greys", extent=(0, walls.shape[1], walls.shape[0], 0), alpha=0.6)
    ax.scatter(pos[:, 0], pos[:, 1], c=code, cmap="tab20", s=2, alpha=0.5)
    ax.scatter(
        lm[:, 0], lm[:, 1], c=np.arange(len(lm)), cmap="tab20", marker="*", s=180, edgecolors="k"
    )
    ax.set(title="replay states by landmark; ★ decoded landmarks", xticks=[], yticks=[])
    fig.tight_layout()
    path = os.path.join(workdir, "landmarks.png")
    fig.savefig(path, dpi=100)
    return path


def _train(prog: Run, config: ml_collections.ConfigDict, workdir: str) -> tuple[dict, dict]:
    """Every seed's run: ``init`` (``batch_runs``, seeds over ``runs``, padded to it with
    copies of seed 0, dropped), the vmapped rounds as :func:`segmented_scan_run` in
    ``config.segments`` pieces checkpointed under ``workdir`` (a killed run resumes
    bit-identically), then ``finish``. Returns the results and the per-round history, both
    ``[seeds, ...]`` on the host."""
    mesh = mesh_from_config(config, RUNS_AXIS)
    n = config.num_seeds
    lanes = run_lanes(n, mesh)
    keys = jnp.stack([jax.random.key(config.seed + int(i)) for i in lanes])
    carry, k_eval = batch_runs(prog.init, fast_compile=config.fast_compile, mesh=mesh)(keys)
    carry, hist = segmented_scan_run(
        jax.vmap(prog.round_, in_axes=(0, None)),
        carry,
        length=config.rounds + 1,
        segments=config.segments,
        checkpointer=Checkpointer(workdir),
        fast_compile=config.fast_compile,
        mesh=mesh,
    )
    res = batch_runs(prog.finish, fast_compile=config.fast_compile, mesh=mesh)(carry, k_eval)
    res = jax.device_get(jax.tree.map(lambda a: a[:n], res))
    return res, jax.tree.map(lambda h: np.moveaxis(h, 0, 1)[:n], hist)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, Any]:
    """Trains and evaluates every seed; the rounds keep checkpoints under
    ``workdir/rounds``."""
    os.makedirs(workdir, exist_ok=True)
    prog, meta = make_run(config)
    res, hist = _train(prog, config, os.path.join(workdir, "rounds"))
    rooms = meta["goal_rooms"]
    out: dict[str, Any] = {}
    for arm, key in (("flat", "success_flat"), ("drstrategy", "success_ds")):
        s = np.asarray(res[key])  # [seeds, goals]
        for d in range(int(rooms.max()) + 1):
            out[f"success_{arm}_rooms{d}"] = s[:, rooms == d].mean(1).tolist()
        out[f"success_far_{arm}"] = s[:, rooms >= config.far_rooms].mean(1).tolist()
        out[f"success_all_{arm}"] = s.mean(1).tolist()
    for k in (
        "coverage_curiosity",
        "coverage_uniform",
        "coverage_replay",
        "highway_reach_eval",
        "highway_reach_explore",
    ):
        out[k] = np.asarray(res[k]).tolist()
    for name, k in (
        ("wm_loss", "world_model_loss"),
        ("vq_loss", "landmark_loss"),
        ("tdp_loss", "tdp_loss"),
    ):
        out[f"{name}_final"] = np.asarray(hist[k][:, -1]).tolist()
    _plot_landmarks(res, meta, workdir)
    atomic_write_npz(
        os.path.join(workdir, "rollouts.npz"),
        {
            "walls": meta["walls"],
            "goals": meta["goals"],
            "goal_rooms": rooms,
            "path_flat": res["path_flat"][0],
            "path_ds": res["path_ds"][0],
            "success_flat": res["success_flat"][0],
            "success_ds": res["success_ds"][0],
        },
    )
    atomic_write_json(os.path.join(workdir, "metrics.json"), out)
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one :func:`jaxlab.rl.drstrategy_update` (world model, landmarks,
    the behaviours in imagination, TDP) of every seed on a full replay buffer, the seeds split
    over ``runs`` (padded to it); the collection and evaluation episodes are not planned."""
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    agent_cfg = agent_config(config)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    capacity = (config.rounds + 1) * config.segments_per_round
    agents, buffers = jax.eval_shape(
        jax.vmap(lambda k: (drstrategy_init(k, agent_cfg), empty_replay(config))), keys
    )
    steps = jax.ShapeDtypeStruct((lanes,), jnp.int32)
    spmd = RUNS_AXIS if runs > 1 else None
    fn = jax.vmap(lambda a, b, k, t: drstrategy_update(a, agent_cfg, b, k, t), spmd_axis_name=spmd)
    return PlanSpec(
        fn=fn,
        abstract_args=abstract((agents, buffers, keys, steps), runs_sharding(mesh)),
        steps_per_run=(config.rounds + 1) * config.train_steps,
        num_runs=config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one Dr. Strategy train step of {config.num_seeds} seeds ({lanes} with padding, "
        f"over runs), replay of {capacity} segments; collection and evaluation not planned",
    )
