"""MSCP-style planners from passive data: passive collection, pre-training, guided PPO.

One program per maze setting: the passive data and the planners' pre-training run for all
seeds under one ``vmap``; the online phase runs every (arm, seed) pair under one ``vmap``
of the PPO harness (``jaxlab.trainers.rl``), with the arm given as data (switches), so all
arms share one compiled program and the seeds' random streams (paired comparisons).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax

from jaxlab.nn.mlp import MLP
from jaxlab.rl import cell_distances, make_point_maze, rooms_layout, shortest_path_direction
from jaxlab.rl.grid import room_cells
from jaxlab.rl.mscp import (
    ensemble_disagreement,
    goal_value_loss,
    idm_loss,
    proposal_loss,
    propose,
    select_subgoal,
)
from jaxlab.train import (
    Checkpointer,
    atomic_write_json,
    batch_runs,
    config_digest,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    resumable,
    runs_sharding,
    scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab.trainers.rl import Guide, PPOConfig, make_ppo_train

# (guide toward the fast proposal, slow sub-goals, pessimism, BC on IDM-labelled passive data)
ARMS = {
    "scratch": (0.0, 0.0, 0.0, 0.0),
    "idm_bc": (0.0, 0.0, 0.0, 1.0),
    "fast": (1.0, 0.0, 1.0, 0.0),
    "fast_slow": (1.0, 1.0, 1.0, 0.0),
    "fast_slow_nopess": (1.0, 1.0, 0.0, 0.0),
}
SETTINGS = {  # name: (layout key, noisy, arms, passive rooms)
    "main": ("layout", False, tuple(ARMS), "limited"),
    "long": ("long_layout", False, ("fast", "fast_slow"), "all"),
    "noisy": ("layout", True, ("scratch", "fast_slow"), "limited"),
}


def make_envs(config, layout_key: str, noisy: bool, coverage: str):
    n = {"four_rooms": 2, "nine_rooms": 3}[config[layout_key]]
    long = layout_key == "long_layout"
    layout = rooms_layout(n, config.room)
    noise = config.noise if noisy else 0.0
    task = make_point_maze(
        layout,
        start_cells=room_cells(n, config.room, [(0, 0)]),
        goal_cells=room_cells(n, config.room, [(n - 1, n - 1)]),
        step_size=config.step_size,
        noise=noise,
        max_steps=config.long_max_steps if long else config.max_steps,
    )
    rooms = [(i, j) for i in range(n) for j in range(n)]
    if coverage == "limited":  # leave out the bottom-left room
        rooms = [r for r in rooms if r != (n - 1, 0)]
    cells = room_cells(n, config.room, rooms)
    traj_len = config.long_traj_len if long else config.traj_len
    passive = make_point_maze(
        layout,
        start_cells=cells,
        goal_cells=cells,
        step_size=config.step_size,
        noise=noise,
        goal_radius=1e-3,
        max_steps=traj_len + 1,  # one episode per trajectory
    )
    return task, passive, traj_len


def collect_passive(key, env, dist, traj_len: int, eps: float):
    """One state-only trajectory ``[T, 2]`` (normalised positions) of a noisy expert."""
    k_reset, key = jax.random.split(key)
    state, obs = env.reset(k_reset)
    dirs = jnp.asarray(env.directions)

    def step(carry, k):
        state, obs = carry
        k_eps, k_rand, k_env = jax.random.split(k, 3)
        want = shortest_path_direction(env, dist, state.pos, state.goal)
        expert = jnp.argmax(dirs @ want)
        rand = jax.random.randint(k_rand, (), 0, env.num_actions)
        a = jnp.where(jax.random.uniform(k_eps) < eps, rand, expert)
        state, obs2, _, _, _ = env.step(state, a, k_env)
        return (state, obs2), obs[:2]

    (_, last), states = jax.lax.scan(step, (state, obs), jax.random.split(key, traj_len - 1))
    return jnp.concatenate([states, last[None, :2]], 0)


class Planners(NamedTuple):
    proposal: Any
    value: Any


def pretrain(key, states, config, reach_radius: float):
    """Fit the fast proposal model and the slow goal value on passive states ``[N, T, 2]``."""
    n, t_len, _ = states.shape
    h = (config.hidden, config.hidden)
    prop_net, value_net = MLP(2, h), MLP(1, h)
    k_p, k_v, key = jax.random.split(key, 3)
    params = Planners(prop_net.init(k_p, jnp.zeros((1, 4))), value_net.init(k_v, jnp.zeros((1, 4))))
    tx = make_optimizer(config.pretrain_optimizer)
    b = config.pretrain_batch

    def loss_fn(p, batch):
        target_v, k = batch
        ks = jax.random.split(k, 6)
        i = jax.random.randint(ks[0], (b,), 0, n)
        t = jax.random.randint(ks[1], (b,), 0, t_len - 1)
        s, s1 = states[i, t], states[i, t + 1]
        k_sub = jnp.minimum(
            t + jax.random.randint(ks[2], (b,), 1, config.proposal_horizon + 1), t_len - 1
        )
        l_prop = proposal_loss(p.proposal, prop_net.apply, s, s1, states[i, k_sub])
        # Hindsight goals: a later state of the same trajectory, or any passive state (with
        # probability random_goal_frac).
        fut = jax.random.randint(ks[3], (b,), 0, t_len) % (t_len - 1 - t) + t + 1
        j = jax.random.randint(ks[4], (b,), 0, n)
        rand = states[j, jax.random.randint(ks[5], (b,), 0, t_len)]
        use_rand = (jax.random.uniform(k, (b,)) < config.random_goal_frac)[:, None]
        g = jnp.where(use_rand, rand, states[i, fut])
        l_val = goal_value_loss(
            p.value,
            target_v,
            value_net.apply,
            s,
            s1,
            g,
            gamma=config.gamma_value,
            reach_radius=reach_radius,
            tau=config.expectile,
        )
        return l_prop + l_val, (l_prop, l_val)

    def step(carry, k):
        p, opt, target_v = carry
        (p, opt), (_, (lp, lv)) = optimizer_step(loss_fn, tx, has_aux=True)((p, opt), (target_v, k))
        target_v = optax.incremental_update(p.value, target_v, config.target_tau)
        return (p, opt, target_v), {"proposal_loss": lp, "value_loss": lv}

    carry = (params, tx.init(params), params.value)
    (params, _, _), hist = scan_run(step, carry, jax.random.split(key, config.pretrain_steps))
    return params, hist


class GuideArgs(NamedTuple):
    flags: jax.Array  # [4] (guide, slow, pessimism, bc) switches of the arm
    planners: Planners
    candidates: jax.Array  # [M, 2]
    passive: jax.Array  # [N, T, 2]


def make_guide(config, num_actions: int, min_value: float) -> Guide:
    h = (config.hidden, config.hidden)
    prop_net, value_net, idm_net = MLP(2, h), MLP(1, h), MLP(num_actions, h)
    tx = make_optimizer(config.idm_optimizer)
    e = config.idm_ensemble

    def idm_logits(idm, s, s_next):  # [E, n, K]
        x = jnp.concatenate([s, config.idm_delta_scale * (s_next - s)], -1)
        return jax.vmap(lambda p: idm_net.apply(p, x))(idm)

    def init(key, args: GuideArgs):
        idm = jax.vmap(lambda k: idm_net.init(k, jnp.zeros((1, 4))))(jax.random.split(key, e))
        return args, idm, tx.init(idm)

    def targets(gstate, obs):
        args, idm, _ = gstate
        guide_on, slow_on, pess_on, _ = args.flags
        s, g = obs[:, :2], obs[:, 2:]
        c = args.candidates
        n, m = s.shape[0], c.shape[0]

        def value(x, y):
            return value_net.apply(args.planners.value, jnp.concatenate([x, y], -1))[..., 0]

        c_b = jnp.broadcast_to(c[None], (n, m, 2))
        v_sc = value(jnp.broadcast_to(s[:, None], (n, m, 2)), c_b)
        v_cg = value(c_b, jnp.broadcast_to(g[:, None], (n, m, 2)))
        v_sg = value(s, g)
        g_slow = jax.vmap(select_subgoal, in_axes=(0, 0, 0, None, 0, None))(
            v_sc, v_cg, v_sg, c, g, min_value
        )
        g_sub = jnp.where(slow_on > 0, g_slow, g)
        s_hat = propose(args.planners.proposal, prop_net.apply, s, g_sub)
        p_bar, u = jax.vmap(ensemble_disagreement, in_axes=1)(idm_logits(idm, s, s_hat))
        weight = guide_on * jnp.exp(-config.beta * pess_on * u)
        return p_bar, weight

    def update(gstate, tr, key):
        args, idm, opt = gstate
        s = tr.obs[..., :2].reshape(-1, 2)
        s1 = tr.next_obs[..., :2].reshape(-1, 2)
        a = tr.actions.reshape(-1)
        bsz = min(config.idm_batch, s.shape[0])

        def loss(p, idx):  # each member its own bootstrap minibatch
            per = jax.vmap(lambda pe, ie: idm_loss(pe, idm_net.apply, s[ie], s1[ie], a[ie]))
            return jnp.sum(per(p, idx))

        def step(carry, k):
            idx = jax.random.randint(k, (e, bsz), 0, s.shape[0])
            carry, val = optimizer_step(loss, tx)(carry, idx)
            return carry, val / e

        (idm, opt), losses = jax.lax.scan(step, (idm, opt), jax.random.split(key, config.idm_steps))
        return (args, idm, opt), {"idm_loss": losses[-1]}

    def extra_bc(gstate, key):
        args, idm, _ = gstate
        n, t_len, _ = args.passive.shape
        k_i, k_t = jax.random.split(key)
        i = jax.random.randint(k_i, (config.bc_batch,), 0, n)
        t = jax.random.randint(k_t, (config.bc_batch,), 0, t_len - 1)
        s, s1, goal = args.passive[i, t], args.passive[i, t + 1], args.passive[i, -1]
        p_bar, _ = jax.vmap(ensemble_disagreement, in_axes=1)(idm_logits(idm, s, s1))
        weight = args.flags[3] * jnp.ones(config.bc_batch)
        return jnp.concatenate([s, goal], -1), jax.lax.stop_gradient(p_bar), weight

    return Guide(init=init, targets=targets, update=update, extra_bc=extra_bc)


def ppo_config(entry: ml_collections.ConfigDict) -> PPOConfig:
    """:class:`PPOConfig` with every field from the config entry (none left to a default).

    Raises:
      ValueError: the entry lacks a field of :class:`PPOConfig` or has an unknown one.
    """
    hp = entry.to_dict()
    fields = {f.name for f in dataclasses.fields(PPOConfig)}
    if set(hp) != fields:
        raise ValueError(
            f"config.ppo must set exactly PPOConfig's fields: missing "
            f"{sorted(fields - set(hp))}, unknown {sorted(set(hp) - fields)}"
        )
    return PPOConfig(**{**hp, "hidden": tuple(hp["hidden"])})


def setting_programs(config, name: str):
    """``(prepare, train, arms)`` of one setting: ``prepare(key)`` collects a seed's passive
    data and pre-trains its planners; ``train(key, GuideArgs)`` is one arm's online PPO."""
    layout_key, noisy, arms, coverage = SETTINGS[name]
    task, passive_env, traj_len = make_envs(config, layout_key, noisy, coverage)
    dist = jnp.asarray(cell_distances(passive_env.walls))
    size = float(task.size[0])
    reach = task.goal_radius * 2.0 / size  # goal radius in normalised units

    def prepare(key):
        k_data, k_pre, k_c = jax.random.split(key, 3)
        states = jax.vmap(
            lambda k: collect_passive(k, passive_env, dist, traj_len, config.expert_eps)
        )(jax.random.split(k_data, config.num_traj))
        planners, hist = pretrain(k_pre, states, config, reach)
        flat = states.reshape(-1, 2)
        cand = flat[jax.random.randint(k_c, (config.num_candidates,), 0, flat.shape[0])]
        return states, planners, cand, hist

    gamma = config.gamma_value
    min_value = -(1 - gamma**config.subgoal_horizon) / (1 - gamma)
    train = make_ppo_train(
        task, ppo_config(config.ppo), make_guide(config, task.num_actions, min_value)
    )
    return prepare, train, arms


def pretrained(config, name: str, prepare, seed_keys, mesh, workdir: str | None):
    """Every seed's ``prepare`` (passive data, pre-trained planners, sub-goal candidates,
    pre-training losses), checkpointed under ``workdir/<name>-<config digest>`` once it
    finishes (:func:`jaxlab.train.config_digest`): a run killed in the online phase
    restores it instead of pre-training again (the same arrays, so the same online
    results), and a run of another config never restores it. ``workdir=None`` keeps
    nothing."""
    folder = None if workdir is None else os.path.join(workdir, f"{name}-{config_digest(config)}")
    checkpointer = None if folder is None else Checkpointer(folder)
    if checkpointer is not None and checkpointer.latest_step() is not None:
        template = jax.eval_shape(jax.vmap(prepare), seed_keys)
        return checkpointer.restore(template)[0]
    prepared = batch_runs(prepare, fast_compile=config.fast_compile, mesh=mesh)(seed_keys)
    if checkpointer is not None:
        checkpointer.save(config.pretrain_steps, to_host(prepared))
        checkpointer.wait()
    return prepared


def run_setting(config, name: str, seed_keys, workdir: str | None = None) -> dict[str, jax.Array]:
    """All arms × seeds of one setting (arms: ``SETTINGS[name][2]``); returns success
    curves ``[arms, seeds, updates]``, the env steps of the updates, the last update's PPO
    loss ``[arms, seeds]`` and the pre-training losses ``[seeds]``. The pre-training is
    checkpointed in ``workdir`` (:func:`pretrained`)."""
    prepare, train, arms = setting_programs(config, name)
    mesh = mesh_from_config(config, RUNS_AXIS)
    states, planners, cand, hist = pretrained(config, name, prepare, seed_keys, mesh, workdir)
    n_arms, n_seeds = len(arms), seed_keys.shape[0]
    flags = jnp.repeat(jnp.asarray([ARMS[a] for a in arms]), n_seeds, axis=0)
    rep = lambda x: jnp.tile(x, (n_arms,) + (1,) * (x.ndim - 1))  # noqa: E731
    args = GuideArgs(flags, jax.tree.map(rep, planners), rep(cand), rep(states))
    keys = jax.random.split(jax.random.fold_in(seed_keys[0], 7), n_seeds)
    # Metrics only: the final runners (parameters, env states, keys) stay in the program.
    online = lambda key, guide_args: train(key, guide_args)[1]  # noqa: E731
    metrics = batch_runs(online, in_axes=(0, 0), fast_compile=config.fast_compile, mesh=mesh)(
        jnp.tile(keys, (n_arms,)), args
    )
    return {
        "curves": metrics["success_rate"].reshape(n_arms, n_seeds, -1),
        "env_steps": metrics["env_steps"][0],
        "ppo_loss": metrics["loss"][:, -1].reshape(n_arms, n_seeds),
        "pretrain_value_loss": hist["value_loss"][:, -1],
        "pretrain_proposal_loss": hist["proposal_loss"][:, -1],
    }


def setting_results(config, name: str, seed_keys, workdir: str) -> dict[str, Any]:
    """:func:`run_setting` on the host (with its ``arms``), once per config
    (:func:`jaxlab.train.resumable`): a run killed and started again resumes at its first
    unfinished setting, and within it after the pre-training. Settings depend only on the
    seeds, so the results are those of one run."""
    out = resumable(workdir, name, config, run_setting, config, name, seed_keys, workdir)
    return dict(out, arms=SETTINGS[name][2])


def _plot(results, workdir: str) -> None:
    from matplotlib.figure import Figure  # no pyplot: no backend, no global state

    fig = Figure(figsize=(5 * len(results), 3.5))
    axes = fig.subplots(1, len(results))
    for ax, (name, r) in zip(np.atleast_1d(axes), results.items(), strict=True):
        for arm, curve in zip(r["arms"], r["curves"], strict=True):
            mean = curve.mean(0)
            se = curve.std(0) / np.sqrt(max(curve.shape[0], 1))
            ax.plot(r["env_steps"], mean, label=arm)
            ax.fill_between(r["env_steps"], mean - se, mean + se, alpha=0.2)
        ax.set(title=name, xlabel="environment steps", ylabel="success rate")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(workdir, "success_curves.png"), dpi=100)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, Any]:
    os.makedirs(workdir, exist_ok=True)
    seed_keys = jnp.stack([jax.random.key(config.seed + i) for i in range(config.num_seeds)])
    results = {name: setting_results(config, name, seed_keys, workdir) for name in SETTINGS}
    out: dict[str, Any] = {}
    auc = {}
    for name, r in results.items():
        prefix = {"main": "", "long": "long_", "noisy": "noisy_"}[name]
        for arm, curve in zip(r["arms"], r["curves"], strict=True):
            auc[prefix + arm] = curve.mean(1)
            out[f"auc_{prefix}{arm}"] = curve.mean(1).tolist()
            out[f"final_{prefix}{arm}"] = curve[:, -max(1, curve.shape[1] // 5) :].mean(1).tolist()
    out["gain_identifiable"] = (auc["fast_slow"] - auc["scratch"]).tolist()
    out["gain_nonidentifiable"] = (auc["noisy_fast_slow"] - auc["noisy_scratch"]).tolist()
    out["pretrain_value_loss"] = results["main"]["pretrain_value_loss"].tolist()
    # Diagnostic (no claim): the last update's PPO loss, per seed, averaged over every
    # setting's arms; unlike the success rates it is never 0 at smoke sizes, so the 1-device,
    # 8-device and multi-host runs are compared on the online phase itself.
    out["ppo_final_loss"] = np.mean(
        np.concatenate([r["ppo_loss"] for r in results.values()]), 0
    ).tolist()
    atomic_write_json(
        os.path.join(workdir, "curves.json"),
        {
            n: {
                "arms": list(r["arms"]),
                "env_steps": r["env_steps"].tolist(),
                "success_rate": r["curves"].tolist(),
            }
            for n, r in results.items()
        },
    )
    _plot(results, workdir)
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the online PPO of the main setting's arms × seeds (the run's
    ``vmap(train)``), lanes split over ``runs``, passive data and planners abstract.

    A call is the whole online phase, whose ``num_updates`` PPO updates are a scan (with
    the rollout, epoch and minibatch loops inside an update), each loop counted at its trip
    count. Passive collection and pre-training (one
    scan per seed, ≈ 4× fewer FLOPs) are not planned.
    """
    prepare, train, arms = setting_programs(config, "main")
    lanes_needed = len(arms) * config.num_seeds
    lanes = padded_runs(lanes_needed, mesh)
    split = runs_sharding(mesh)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    states, planners, cand, _ = jax.eval_shape(jax.vmap(prepare), keys)
    args = GuideArgs(jax.ShapeDtypeStruct((lanes, 4), jnp.float32), planners, cand, states)
    total = sum(len(SETTINGS[name][2]) for name in SETTINGS) * config.num_seeds
    return PlanSpec(
        fn=jax.vmap(train),
        abstract_args=(abstract(keys, split), abstract(args, split)),
        steps_per_run=1,
        num_runs=total,
        runs_per_call=lanes_needed,
        note=f"the {config.ppo.num_updates} guided PPO updates (rollout with sub-goal "
        "planning, IDM ensemble, PPO epochs) of every arm × seed of a setting; passive data "
        "and pre-training not planned",
    )
