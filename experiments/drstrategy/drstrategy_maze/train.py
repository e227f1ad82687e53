"""Dr. Strategy in a state-based point maze: pure per-seed programs, seeds under ``vmap``.

Per seed: random-action segments fill the replay buffer; then ``rounds`` × (world-model
updates, landmark VQ updates, highway + explorer actor-critic updates in imagination,
per-landmark curiosity, collection of segments "landmark by curiosity → highway → explorer");
then the temporal-distance predictor (TDP) and two achievers are trained in imagination on
the same world model and data — Dr. Strategy's (focused sampling from the landmark nearest
the goal) and a LEXA-like flat one — and both are evaluated zero-shot on every room cell as
goal, from the top-left room. Both achievers see the same environment steps (none of their
own: they are trained in imagination only).

Three jitted programs (:class:`Run`): ``init``, the rounds as a ``segmented_scan_run`` in
``config.segments`` pieces checkpointed under ``workdir/rounds`` (a killed run resumes after
its last finished piece, bit-identically), and the evaluation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import distrax
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.nn.mlp import MLP
from jaxlab.rl import (
    LandmarkVQ,
    LatentWorldModel,
    MazeState,
    VQState,
    actor_critic_loss,
    disagreement_reward,
    ema_update,
    focused_starts,
    highway_reward,
    imagine,
    init_vq,
    knn_particle_reward,
    lambda_returns,
    landmark_curiosity,
    landmark_loss,
    make_point_maze,
    nearest_landmark,
    replay_add,
    replay_init,
    replay_sample,
    reseed_dead_codes,
    rooms_layout,
    temporal_distance_pairs,
    world_model_loss,
)
from jaxlab.rl.grid import room_of
from jaxlab.rl.rssm import RSSM, rssm_loss
from jaxlab.train import (
    Checkpointer,
    atomic_write_json,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    scan_run,
    segmented_scan_run,
)
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec, abstract

NUM_ACTIONS = 4


# --------------------------------------------------------------------------- maze
def make_env(c, start_room_only: bool = True, goal_radius: float = 1e-3, max_steps=None):
    layout = rooms_layout(c.rooms_per_side, c.room)
    walls = make_point_maze(layout).walls
    free = np.argwhere(~walls).astype(np.int32)
    rooms, door = room_of(free, c.room)
    start = free[(rooms == 0).all(1) & ~door] if start_room_only else free
    return make_point_maze(
        layout,
        start_cells=start,
        num_actions=NUM_ACTIONS,
        step_size=c.step_size,
        goal_radius=goal_radius,
        max_steps=max_steps or c.segment + 1,
    )


# --------------------------------------------------------------------------- agent state
# The four behaviours share one network shape and are trained under one ``vmap``; each sees
# the latent ``h`` and a context ``[C]`` (C = max(K, Z)): the landmark's one-hot (highway),
# zeros (explorer) or the goal latent (achievers).
HIGHWAY, EXPLORER, FLAT, DRSTRATEGY = range(4)


class AC(NamedTuple):
    actor: Any
    critic: Any


class Agent(NamedTuple):
    wm: Any
    vq: Any
    vq_state: VQState
    ac: AC  # leaves stacked [4, ...] (HIGHWAY, EXPLORER, FLAT, DRSTRATEGY)
    tdp: Any
    opt: Any  # (wm, vq, ac, tdp) optimiser states


class Nets(NamedTuple):
    wm: LatentWorldModel | RSSM
    vq: LandmarkVQ
    actor: MLP
    critic: MLP
    tdp: MLP


def make_nets(c) -> Nets:
    h2 = (c.hidden, c.hidden)
    if c.stochastic_latent:
        wm = RSSM(
            obs_dim=2,
            num_actions=NUM_ACTIONS,
            deter=c.latent,
            stoch=c.stoch,
            hidden=c.wm_hidden,
            embed_dim=c.latent,
            ensemble_size=c.ensemble,
        )
    else:
        wm = LatentWorldModel(
            obs_dim=2,
            num_actions=NUM_ACTIONS,
            latent=c.latent,
            hidden=c.wm_hidden,
            ensemble_size=c.ensemble,
        )
    return Nets(
        wm,
        LandmarkVQ(latent=c.latent, code_dim=c.code_dim, hidden=(c.wm_hidden,)),
        MLP(NUM_ACTIONS, h2, activation=jax.nn.elu),
        MLP(1, h2, activation=jax.nn.elu),
        MLP(1, h2, activation=jax.nn.elu),
    )


# The agent's latent state: ``h [Z]`` (deterministic model) or the RSSM's ``[h, z]``
# ``[Z + S]``. Landmarks live on its first ``Z`` entries (``h``, as in the paper).
def _state_dim(c) -> int:
    return c.latent + (c.stoch if c.stochastic_latent else 0)


def _h(c, x: jax.Array) -> jax.Array:
    return x[..., : c.latent]


def _ctx_dim(c) -> int:
    return max(c.num_landmarks, _state_dim(c))


def _pad(x: jax.Array, dim: int) -> jax.Array:
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, dim - x.shape[-1])])


def _txs(c):
    """The world model's and landmarks' optimiser, and the behaviours' and TDP's (config)."""
    return make_optimizer(c.wm_optimizer), make_optimizer(c.ac_optimizer)


def init_agent(key, c, nets: Nets) -> Agent:
    ks = jax.random.split(key, 6)
    z = _state_dim(c)
    wm = nets.wm.init(ks[0], jnp.zeros((1, 2)), jnp.zeros((1,), jnp.int32))
    vq = nets.vq.init(ks[1], jnp.zeros((1, c.latent)))

    def ac(key):
        k1, k2 = jax.random.split(key)
        x = jnp.zeros((1, z + _ctx_dim(c)))
        return AC(nets.actor.init(k1, x), nets.critic.init(k2, x))

    acs = jax.vmap(ac)(jax.random.split(ks[2], 4))
    tdp = nets.tdp.init(ks[3], jnp.zeros((1, 2 * z)))
    wtx, atx = _txs(c)
    opt = (wtx.init(wm), wtx.init(vq), jax.vmap(atx.init)(acs), atx.init(tdp))
    return Agent(wm, vq, init_vq(ks[4], c.num_landmarks, c.code_dim), acs, tdp, opt)


def landmark_latents(nets: Nets, agent: Agent) -> jax.Array:
    """Decoded landmarks as states: ``ĥ_l = D(e_l): [K, Z]``, with the RSSM
    ``[ĥ_l, μ_p(ĥ_l)]: [K, Z + S]`` (the prior's mean completes the state)."""
    h = nets.vq.apply(agent.vq, agent.vq_state.codebook, method=nets.vq.decode)
    if isinstance(nets.wm, RSSM):
        h = jnp.concatenate([h, nets.wm.apply(agent.wm, h, method=nets.wm.prior)[0]], -1)
    return h


def _policy(nets: Nets, actor, ctx):
    def pol(h, key):
        dist = distrax.Categorical(logits=nets.actor.apply(actor, jnp.concatenate([h, ctx], -1)))
        a = dist.sample(seed=key)
        return a, dist.log_prob(a), dist.entropy()

    return pol


def _imagine(nets, c, agent, actor, h0, ctx, key):
    def trans(h, a, *k):  # the RSSM samples its prior
        return nets.wm.apply(agent.wm, h, a, *k, method=nets.wm.transition)

    return imagine(
        trans, _policy(nets, actor, ctx), h0, key, c.horizon, stochastic=c.stochastic_latent
    )


def _explorer_reward(nets, wm, hs, acts):
    r = disagreement_reward(nets.wm.apply(wm, hs[:-1], acts, method=nets.wm.ensemble))
    return r / jax.lax.stop_gradient(jnp.mean(r) + 1e-8)  # batch-normalised


def _replay_latents(nets, wm, buffer, key, n):
    batch = replay_sample(buffer, key, n, 1)
    return jax.lax.stop_gradient(nets.wm.apply(wm, batch["obs"][:, 0], method=nets.wm.encode))


# --------------------------------------------------------------------------- one train step
def train_step(nets, c, agent: Agent, buffer, key, step_index) -> tuple[Agent, dict]:
    """Dreamer-style: a world-model + landmark update, then all behaviours and the TDP."""
    wtx, atx = _txs(c)
    o_wm, o_vq, o_ac, o_tdp = agent.opt
    k_wm, k_fs, k_seed, k_h, k_l, k_im, k_tdp = jax.random.split(key, 7)
    # World model on replay windows.
    b = replay_sample(buffer, k_wm, c.wm_batch, c.wm_length)
    if c.stochastic_latent:  # RSSM: posterior states of the windows start imagination

        def wm_loss_fn(p, b):
            return rssm_loss(
                p,
                nets.wm,
                b["obs"],
                b["action"][:, :-1],
                jax.random.fold_in(k_wm, 1),
                alpha=c.kl_balance,
                free_nats=c.free_nats,
                kl_scale=c.kl_scale,
            )
    else:

        def wm_loss_fn(p, b):
            return world_model_loss(p, nets.wm, b["obs"], b["action"][:, :-1])

    (wm, o_wm), (wm_loss, wm_aux) = optimizer_step(wm_loss_fn, wtx, has_aux=True)(
        (agent.wm, o_wm), b
    )
    if c.stochastic_latent:
        post = wm_aux[1].reshape(-1, wm_aux[1].shape[-1])
    # Landmarks: VQ-VAE on the latents h of the same windows; EMA codebook; re-seeding.
    if c.stochastic_latent:
        h = _h(c, post)
    else:
        h = jax.lax.stop_gradient(nets.wm.apply(wm, b["obs"].reshape(-1, 2), method=nets.wm.encode))
    (vq, o_vq), (vq_loss, (z_e, codes)) = optimizer_step(
        lambda p, x: landmark_loss(p, nets.vq, agent.vq_state.codebook, x), wtx, has_aux=True
    )((agent.vq, o_vq), h)
    state = ema_update(agent.vq_state, z_e, codes, decay=c.vq_decay)
    reseeded = reseed_dead_codes(state, z_e, k_seed, min_count=c.vq_min_count)
    state = jax.tree.map(
        lambda x, y: jnp.where(step_index % c.resample_every == 0, x, y), reseeded, state
    )
    agent = agent._replace(wm=wm, vq=vq, vq_state=state)
    # Behaviours in imagination.
    lm = landmark_latents(nets, agent)
    n, cd = c.imag_batch, _ctx_dim(c)
    if c.stochastic_latent:
        hr = post[jax.random.randint(k_h, (3 * n,), 0, post.shape[0])]
    else:
        hr = _replay_latents(nets, wm, buffer, k_h, 3 * n)
    h0, goals, h_other = hr[:n], hr[n : 2 * n], hr[2 * n :]
    lid = jax.random.randint(k_l, (n,), 0, c.num_landmarks)
    # Focused sampling on h: visited states of the goal's landmark (the full state of the
    # chosen candidate is looked up by its h).
    h_fs, _ = focused_starts(_h(c, goals), _h(c, lm), _h(c, h_other), k_fs)
    h_ds = h_other[nearest_landmark(h_fs, _h(c, h_other))] if c.stochastic_latent else h_fs
    half = n // 2
    starts = jnp.stack([h0, jnp.concatenate([h_other[:half], lm[lid[half:]]]), h_other, h_ds])
    g_ctx = _pad(goals, cd)
    ctx = jnp.stack(
        [_pad(jax.nn.one_hot(lid, c.num_landmarks), cd), jnp.zeros((n, cd)), g_ctx, g_ctx]
    )
    target = _h(c, lm[lid])

    def reward(i, hs, acts):
        hh = _h(c, hs[1:])
        r_hw = highway_reward(hh, jnp.broadcast_to(target[None], hh.shape))
        if c.knn_weight:
            r_hw = r_hw + c.knn_weight * jax.vmap(lambda x: knn_particle_reward(x, c.knn_k))(hh)
        r_ex = _explorer_reward(nets, wm, hs, acts)
        x = jnp.concatenate([hs[1:], jnp.broadcast_to(goals[None], hs[1:].shape)], -1)
        r_ach = -nets.tdp.apply(agent.tdp, x)[..., 0]
        return jnp.where(i == HIGHWAY, r_hw, jnp.where(i == EXPLORER, r_ex, r_ach))

    def loss(ac, i, h_start, cx, k):
        hs, acts, logp, ent = _imagine(nets, c, agent, ac.actor, h_start, cx, k)
        x = jnp.concatenate([hs, jnp.broadcast_to(cx[None], hs.shape[:2] + cx.shape[1:])], -1)
        v = nets.critic.apply(ac.critic, x)[..., 0]
        total, m = actor_critic_loss(
            reward(i, hs, acts),
            v,
            logp,
            ent,
            discount=c.discount,
            lambda_=c.lambda_,
            ent_coef=c.ent_coef,
        )
        return total, (m, hs)

    (acs, o_ac), (_, (m, hs)) = jax.vmap(
        optimizer_step(lambda p, xs: loss(p, *xs), atx, has_aux=True)
    )((agent.ac, o_ac), (jnp.arange(4), starts, ctx, jax.random.split(k_im, 4)))
    # TDP on both achievers' imagined trajectories (shared by the two arms).
    tr = jnp.concatenate([hs[FLAT], hs[DRSTRATEGY]], 1)  # [H + 1, 2B, Z]
    x, y, tgt = temporal_distance_pairs(tr, k_tdp, c.tdp_positives, c.tdp_neg_factor)

    def tdp_loss(p, batch):
        x, y, tgt = batch
        pred = nets.tdp.apply(p, jnp.concatenate([x, y], -1))[..., 0]
        return jnp.mean(jnp.square(pred - tgt))

    (tdp, o_tdp), l_tdp = optimizer_step(tdp_loss, atx)((agent.tdp, o_tdp), (x, y, tgt))
    agent = agent._replace(ac=acs, tdp=tdp, opt=(o_wm, o_vq, o_ac, o_tdp))
    return agent, {
        "wm_loss": wm_loss,
        "vq_loss": vq_loss,
        "tdp_loss": l_tdp,
        "returns": m["return"],
    }


def curiosity(nets, c, agent: Agent, key) -> jax.Array:
    """Landmark sampling distribution: mean explorer λ-return of rollouts from each landmark."""
    lm = landmark_latents(nets, agent)
    starts = jnp.repeat(jnp.arange(c.num_landmarks), c.curiosity_rollouts)
    ex = jax.tree.map(lambda x: x[EXPLORER], agent.ac)
    ctx = jnp.zeros((starts.shape[0], _ctx_dim(c)))
    hs, acts, _, _ = _imagine(nets, c, agent, ex.actor, lm[starts], ctx, key)
    r = _explorer_reward(nets, agent.wm, hs, acts)
    x = jnp.concatenate([hs, jnp.broadcast_to(ctx[None], hs.shape[:2] + ctx.shape[1:])], -1)
    v = nets.critic.apply(ex.critic, x)[..., 0]
    g = lambda_returns(r, jnp.full_like(r, c.discount), v[1:], c.lambda_)
    _, p = landmark_curiosity(g[0], starts, c.num_landmarks)
    return p


# --------------------------------------------------------------------------- environment
def to_unit(pos, size):
    """Maze positions in cells ``[..., 2]`` → the world model's input range [−1, 1]."""
    return pos / jnp.broadcast_to(size, pos.shape) * 2.0 - 1.0


def from_unit(u, size):
    """Inverse of :func:`to_unit`: ``[..., 2]`` in [−1, 1] → positions in cells."""
    return (u + 1.0) / 2.0 * jnp.broadcast_to(size, u.shape)


def act_episode(nets, c, env, agent: Agent, key, start, goal, lid, mode):
    """One episode in the maze; ``mode``: 0 random, 1 highway → explorer (collection),
    2 flat achiever, 3 highway → Dr. Strategy achiever (evaluation). Actions are sampled
    from the policies (acting with their mode did worse for both arms in a quick run).

    The highway phase runs until the latent is assigned to landmark ``lid`` or its MSE to
    ``ĥ_lid`` is below ``reach_mse``, or for ``max_highway_steps``. The episode stops moving
    once the goal is reached. Returns ``(positions [T, 2] in cells, actions [T], success,
    whether the highway reached its landmark)``.
    """
    lm = landmark_latents(nets, agent)
    size = jnp.asarray(env.size)
    cd = _ctx_dim(c)
    h_goal = nets.wm.apply(agent.wm, to_unit(goal, size), method=nets.wm.encode)
    hw_ctx = _pad(jax.nn.one_hot(lid, c.num_landmarks), cd)
    second = jnp.where(mode == 1, EXPLORER, jnp.where(mode == 2, FLAT, DRSTRATEGY))
    second_ctx = jnp.where(mode == 1, jnp.zeros(cd), _pad(h_goal, cd))
    actors = agent.ac.actor
    hw = jax.tree.map(lambda x: x[HIGHWAY], actors)
    nd = jax.tree.map(lambda x: x[second], actors)
    state = MazeState(pos=start, goal=goal, t=jnp.zeros((), jnp.int32))

    def latent(s_prev, a_prev, pos, t, k):
        """The agent's state at ``pos``: the encoder, or the RSSM's filtered posterior mean."""
        if not c.stochastic_latent:
            return nets.wm.apply(agent.wm, pos, method=nets.wm.encode)
        first = nets.wm.apply(agent.wm, pos, k, False, method=nets.wm.initial)[0]
        later = nets.wm.apply(agent.wm, s_prev, a_prev, pos, k, False, method=nets.wm.obs_step)[0]
        return jnp.where(t == 0, first, later)

    def step(carry, k):
        state, phase2, t, success, hit, s_prev, a_prev = carry
        k_a, k_env = jax.random.split(k)
        pos = env.observe(state)[:2]
        h = latent(s_prev, a_prev, pos, t, k_env)
        code = nearest_landmark(_h(c, h)[None], _h(c, lm))[0]
        reached = (code == lid) | (jnp.mean(jnp.square(_h(c, h - lm[lid]))) < c.reach_mse)
        hit = hit | (reached & ~phase2)
        phase2 = phase2 | reached | (t >= c.max_highway_steps) | (mode == 2)
        lg = jnp.where(
            phase2,
            nets.actor.apply(nd, jnp.concatenate([h, second_ctx])),
            nets.actor.apply(hw, jnp.concatenate([h, hw_ctx])),
        )
        lg = jnp.where(mode == 0, jnp.zeros_like(lg), lg)
        a = jax.random.categorical(k_a, lg)
        new, _, _, _, info = env.step(state, a, k_env)
        state = jax.tree.map(lambda s, n: jnp.where(success, s, n), state, new)
        return (state, phase2, t + 1, success | info["success"], hit, h, a), (carry[0].pos, a)

    f = jnp.zeros((), bool)
    i0 = jnp.zeros((), jnp.int32)
    carry = (state, f, i0, f, f, jnp.zeros(_state_dim(c)), i0)
    (_, _, _, success, hit, _, _), (pos, acts) = jax.lax.scan(
        step, carry, jax.random.split(key, c.segment)
    )
    return pos, acts.astype(jnp.int32), success, hit


def coverage(walls: np.ndarray, pos: jax.Array) -> jax.Array:
    """Fraction of free cells visited by positions ``[..., 2]``."""
    r_, c_ = walls.shape
    col = jnp.clip(jnp.floor(pos[..., 0]).astype(jnp.int32), 0, c_ - 1).reshape(-1)
    row = jnp.clip(jnp.floor(pos[..., 1]).astype(jnp.int32), 0, r_ - 1).reshape(-1)
    visited = jnp.zeros((r_, c_), bool).at[row, col].set(True)
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


def make_run(c) -> tuple[Run, dict]:
    """A seed's :class:`Run` and the maze's ``meta`` (goal rooms, goals, walls)."""
    nets = make_nets(c)
    env = make_env(c, goal_radius=c.goal_radius)  # start room only
    walls = env.walls
    free = np.argwhere(~walls).astype(np.int32)
    rooms, door = room_of(free, c.room)
    goal_cells = free[~door]
    goal_rooms = rooms[~door].sum(1)  # rooms away from the start room (0, 0)
    goals = jnp.asarray(goal_cells[:, ::-1].astype(np.float32) + 0.5)  # (x, y)
    size = jnp.asarray(env.size)
    nowhere = jnp.array([-100.0, -100.0])  # an unreachable goal for collection episodes
    n_goals, n_cov, n_seg = goals.shape[0], c.coverage_segments, c.segments_per_round

    def episodes(agent, key, goal, lid, mode):
        k_s, k_e = jax.random.split(key)
        starts = jax.vmap(lambda k: env.reset(k)[0].pos)(jax.random.split(k_s, mode.shape[0]))
        return jax.vmap(lambda k, s, g, i, m: act_episode(nets, c, env, agent, k, s, g, i, m))(
            jax.random.split(k_e, mode.shape[0]), starts, goal, lid, mode
        )

    def init(key):
        """A seed's carry before round 0, ``(agent, buffer, p, round keys [R + 1])``, and
        its evaluation key."""
        k_init, k_rounds, k_eval = jax.random.split(key, 3)
        agent = init_agent(k_init, c, nets)
        buffer = replay_init(
            {"obs": jnp.zeros((c.segment, 2)), "action": jnp.zeros((c.segment,), jnp.int32)},
            (c.rounds + 1) * n_seg,
        )
        p0 = jnp.full((c.num_landmarks,), 1.0 / c.num_landmarks)
        return (agent, buffer, p0, jax.random.split(k_rounds, c.rounds + 1)), k_eval

    def round_(carry, r):
        """Round ``r`` of a seed: collection, ``train_steps`` train steps, curiosity."""
        agent, buffer, p, keys = carry
        k_l, k_col, k_train, k_cur = jax.random.split(keys[r], 4)
        # Collect: landmark by curiosity, highway, explorer (round 0: random actions).
        lid = jax.random.categorical(k_l, jnp.log(p), shape=(n_seg,))
        mode = jnp.where(r == 0, 0, 1) * jnp.ones(n_seg, jnp.int32)
        pos, acts, _, _ = episodes(agent, k_col, jnp.broadcast_to(nowhere, (n_seg, 2)), lid, mode)
        buffer = replay_add(buffer, {"obs": to_unit(pos, size), "action": acts})
        agent, m = scan_run(
            lambda a, xs: train_step(nets, c, a, buffer, xs[0], xs[1]),
            agent,
            (
                jax.random.split(k_train, c.train_steps),
                r * c.train_steps + jnp.arange(c.train_steps),
            ),
        )
        p = curiosity(nets, c, agent, k_cur)
        return (agent, buffer, p, keys), dict(jax.tree.map(lambda x: x[-1], m), landmark_prob=p)

    def finish(carry, k_eval):
        """A seed's evaluation after the last round. One batch of episodes: evaluation
        (every goal; flat, Dr. Strategy) and coverage (curiosity-sampled vs uniformly
        sampled landmarks, highway then explorer)."""
        agent, buffer, p, _ = carry
        lm = landmark_latents(nets, agent)
        h_goals = nets.wm.apply(agent.wm, to_unit(goals, size), method=nets.wm.encode)
        l_goal = nearest_landmark(_h(c, h_goals), _h(c, lm))
        k_c, k_u, k_ep = jax.random.split(k_eval, 3)
        l_cov = jnp.concatenate(
            [
                jax.random.categorical(k_c, jnp.log(p), shape=(n_cov,)),
                jax.random.randint(k_u, (n_cov,), 0, c.num_landmarks),
            ]
        )
        goal = jnp.concatenate([goals, goals, jnp.broadcast_to(nowhere, (2 * n_cov, 2))])
        lid = jnp.concatenate([l_goal, l_goal, l_cov])
        mode = jnp.concatenate(
            [jnp.full(n_goals, 2), jnp.full(n_goals, 3), jnp.ones(2 * n_cov, jnp.int32)]
        )
        # Paired: the flat and Dr. Strategy episodes of a goal share their key and start.
        keys = jax.random.split(k_ep, n_goals + 2 * n_cov)
        keys = jnp.concatenate([keys[:n_goals], keys])
        starts = jax.vmap(lambda k: env.reset(k)[0].pos)(keys)
        pos, _, success, hit = jax.vmap(
            lambda k, s, g, i, m: act_episode(nets, c, env, agent, k, s, g, i, m)
        )(keys, starts, goal, lid, mode)
        obs = buffer.data["obs"].reshape(-1, 2)
        if c.stochastic_latent:  # filtered posterior means along the stored segments
            h_all = nets.wm.apply(
                agent.wm,
                buffer.data["obs"],
                buffer.data["action"][:, :-1],
                k_eval,
                False,
                method=nets.wm.observe,
            )[0]
            h_all = h_all.reshape(-1, h_all.shape[-1])
        else:
            h_all = nets.wm.apply(agent.wm, obs, method=nets.wm.encode)
        e = 2 * n_goals
        return {
            "success_flat": success[:n_goals].astype(jnp.float32),
            "success_ds": success[n_goals:e].astype(jnp.float32),
            "highway_reach_eval": jnp.mean(hit[n_goals:e].astype(jnp.float32)),
            "highway_reach_explore": jnp.mean(hit[e:].astype(jnp.float32)),
            "path_flat": pos[:n_goals],
            "path_ds": pos[n_goals:e],
            "coverage_curiosity": coverage(walls, pos[e : e + n_cov]),
            "coverage_uniform": coverage(walls, pos[e + n_cov :]),
            "coverage_replay": coverage(walls, from_unit(obs, size)),
            "replay_pos": from_unit(obs, size),
            "replay_code": nearest_landmark(_h(c, h_all), _h(c, lm)),
            "landmark_pos": from_unit(nets.wm.apply(agent.wm, lm, method=nets.wm.decode), size),
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
    lanes = np.concatenate([np.arange(n), np.zeros(-n % mesh.shape[RUNS_AXIS], np.int64)])
    keys = jnp.stack([jax.random.key(config.seed + int(i)) for i in lanes])
    carry, k_eval = batch_runs(prog.init, fast_compile=config.fast_compile, mesh=mesh)(keys)
    carry, hist = segmented_scan_run(
        jax.vmap(prog.round_, in_axes=(0, None)),
        carry,
        length=config.rounds + 1,
        segments=config.segments,
        checkpointer=Checkpointer(workdir),
        fast_compile=config.fast_compile,
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
    for k in ("wm_loss", "vq_loss", "tdp_loss"):
        out[f"{k}_final"] = np.asarray(hist[k][:, -1]).tolist()
    _plot_landmarks(res, meta, workdir)
    np.savez(
        os.path.join(workdir, "rollouts.npz"),
        walls=meta["walls"],
        goals=meta["goals"],
        goal_rooms=rooms,
        path_flat=np.asarray(res["path_flat"][0]),
        path_ds=np.asarray(res["path_ds"][0]),
        success_flat=np.asarray(res["success_flat"][0]),
        success_ds=np.asarray(res["success_ds"][0]),
    )
    atomic_write_json(os.path.join(workdir, "metrics.json"), out)
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one :func:`train_step` (world model, landmarks, the behaviours in
    imagination, TDP) of every seed on a full replay buffer, the seeds split over ``runs``
    (padded to it); the collection and evaluation episodes are not planned."""
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = -(-config.num_seeds // runs) * runs
    nets = make_nets(config)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    capacity = (config.rounds + 1) * config.segments_per_round
    agents, buffers = jax.eval_shape(
        jax.vmap(
            lambda k: (
                init_agent(k, config, nets),
                replay_init(
                    {
                        "obs": jnp.zeros((config.segment, 2)),
                        "action": jnp.zeros((config.segment,), jnp.int32),
                    },
                    capacity,
                ),
            )
        ),
        keys,
    )
    steps = jax.ShapeDtypeStruct((lanes,), jnp.int32)
    spmd = RUNS_AXIS if runs > 1 else None
    fn = jax.vmap(lambda a, b, k, t: train_step(nets, config, a, b, k, t), spmd_axis_name=spmd)
    return PlanSpec(
        fn=fn,
        abstract_args=abstract((agents, buffers, keys, steps), runs_sharding(mesh)),
        steps_per_run=(config.rounds + 1) * config.train_steps,
        num_runs=config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one Dr. Strategy train step of {config.num_seeds} seeds ({lanes} with padding, "
        f"over runs), replay of {capacity} segments; collection and evaluation not planned",
    )
