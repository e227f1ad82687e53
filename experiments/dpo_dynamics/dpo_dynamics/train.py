"""DPO vs SFT on a frozen-embedding, trainable-unembedding model: who is learned first."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from scipy import stats

from jaxlab.align import (
    sample_behaviour_preferences,
    unembedding_dpo_loss,
    unembedding_sft_loss,
)
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract


def _tag(delta: float) -> str:
    return f"delta{delta:g}".replace(".", "p")


def _geometry(key: jax.Array, dim: int, num: int, offset_norm: float):
    k_u, k_c = jax.random.split(key)
    q, _ = jnp.linalg.qr(jax.random.normal(k_u, (dim, num + 1)))
    directions = q[:, :num].T  # orthonormal behaviour directions u_k
    offset = q[:, num] * offset_norm  # shared offset c, orthogonal to them
    del k_c
    return directions, offset


def _margin_direction(w: jax.Array) -> jax.Array:
    return w[0] - w[1]  # w_Yes − w_No


def _policy_accuracy(w, eval_batch, flip, num_beh: int) -> jax.Array:
    """Per behaviour ``[K]``: share of eval prompts where the head prefers the chosen answer
    (the rejected one when ``flip``)."""
    chosen = jnp.where(flip, eval_batch.rejected, eval_batch.chosen)
    sign = jnp.where(chosen == 0, 1.0, -1.0)
    onehot = jax.nn.one_hot(eval_batch.behaviour, num_beh)
    correct = (sign * (eval_batch.embeddings @ _margin_direction(w)) > 0).astype(jnp.float32)
    return (onehot * correct[:, None]).sum(0) / onehot.sum(0)


def _train(key, w0, w_ref, weights, flip, problem, config, loss: str, steps: int):
    """One run of the head with ``config.optimizer``: its final head and per-step eval
    metrics per behaviour."""
    tx = make_optimizer(config.optimizer)
    step = _step_fn(key, w0, w_ref, weights, flip, problem, config, loss, tx)
    (w, _), history = scan_run(step, (w0, tx.init(w0)), length=steps)
    return w, history


def _step_fn(key, w0, w_ref, weights, flip, problem, config, loss: str, tx):
    """``((w, opt_state), t) -> ((w, opt_state), metrics)``: one optimiser step of a run of
    :func:`_train`."""
    directions, deltas, offset, eval_batch = problem
    num_beh = deltas.shape[0]
    beta = config.beta
    g_eval = eval_batch.embeddings
    chosen_eval = jnp.where(flip, eval_batch.rejected, eval_batch.chosen)
    sign_eval = jnp.where(chosen_eval == 0, 1.0, -1.0)
    onehot = jax.nn.one_hot(eval_batch.behaviour, num_beh)  # [n, K]
    counts = onehot.sum(0)
    v0 = _margin_direction(w0)
    v_ref = _margin_direction(w_ref)

    def objective(w, batch):
        chosen = jnp.where(flip, batch.rejected, batch.chosen)
        if loss == "dpo":
            return unembedding_dpo_loss(w, w_ref, batch.embeddings, chosen, 1 - chosen, beta)
        return unembedding_sft_loss(w, batch.embeddings, chosen)

    update = optimizer_step(objective, tx)

    def step(carry, t):
        batch = sample_behaviour_preferences(
            jax.random.fold_in(key, t),
            config.batch_size,
            directions,
            deltas,
            offset,
            weights,
            config.noise_scale,
        )
        (w, opt_state), _ = update(carry, batch)
        v = _margin_direction(w)
        implicit = sign_eval * (g_eval @ (v - v_ref))  # sign of the DPO implicit-reward margin
        per_beh = lambda x: (onehot * x[:, None]).sum(0) / counts  # noqa: E731
        metrics = {
            "accuracy": per_beh((implicit > 0).astype(jnp.float32)),
            # The policy itself prefers the chosen answer.
            "policy_accuracy": _policy_accuracy(w, eval_batch, flip, num_beh),
            "loss": per_beh(jax.nn.softplus(-beta * implicit)),
            "projection": directions @ (v - v0),  # Δ(w_Yes − w_No)·u_k
        }
        return (w, opt_state), metrics

    return step


def _first_reach(curve: np.ndarray, level: float) -> np.ndarray:
    """First step (1-based) where ``curve[..., t, k] >= level``; never: the run length."""
    reached = curve >= level
    first = np.argmax(reached, axis=-2) + 1
    return np.where(reached.any(axis=-2), first, curve.shape[-2]).astype(float)


def _spearman(deltas: np.ndarray, steps: np.ndarray) -> list[float]:
    out = []
    for row in steps:
        rho = stats.spearmanr(deltas, -row).statistic
        out.append(0.0 if not np.isfinite(rho) else float(rho))
    return out


def _linear_r2(curve: np.ndarray) -> np.ndarray:
    """R² of a straight-line fit of ``curve[..., t]`` over t."""
    t = np.arange(curve.shape[-1], dtype=float)
    t = t - t.mean()
    y = curve - curve.mean(-1, keepdims=True)
    slope = (y * t).sum(-1) / (t * t).sum()
    resid = y - slope[..., None] * t
    return 1.0 - (resid**2).sum(-1) / np.maximum((y**2).sum(-1), 1e-30)


def _problem(k_geo, k_eval, deltas, config):
    """``(directions, deltas, offset, eval_batch)`` of one seed (equal behaviour weights)."""
    num_beh = deltas.shape[0]
    directions, offset = _geometry(k_geo, config.dim, num_beh, config.offset_norm)
    equal = jnp.full((num_beh,), 1.0 / num_beh)
    eval_batch = sample_behaviour_preferences(
        k_eval, config.eval_size, directions, deltas, offset, equal, config.noise_scale
    )
    return directions, deltas, offset, eval_batch


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Every seed's five runs (vmapped, split over ``runs``); the DPO-aligned heads are saved
    as the checkpoint of step ``num_steps`` in ``workdir`` (seconds-long: nothing resumes)."""
    deltas_np = np.asarray(config.deltas, float)
    num_beh = len(deltas_np)
    deltas = jnp.asarray(deltas_np, jnp.float32)
    equal = jnp.full((num_beh,), 1.0 / num_beh)
    unequal = jnp.asarray(config.unequal_weights, jnp.float32)

    def one_seed(key):
        k_geo, k_eval, k_init, k_a, k_b, k_c, k_d, k_e = jax.random.split(key, 8)
        problem = _problem(k_geo, k_eval, deltas, config)
        eval_batch = problem[3]
        w0 = config.init_std * jax.random.normal(k_init, (2, config.dim))
        run = functools.partial(_train, problem=problem, config=config)
        steps = config.num_steps
        w_dpo, dpo = run(k_a, w0, w0, equal, False, loss="dpo", steps=steps)
        _, sft = run(k_b, w0, w0, equal, False, loss="sft", steps=steps)
        _, uneq = run(k_c, w0, w0, unequal, False, loss="dpo", steps=steps)
        # Misalignment: flipped preferences from the aligned head (its own reference, as a
        # DPO run from a checkpoint would be) vs from the fresh head.
        ms = config.misalign_steps
        _, mis_aligned = run(k_d, w_dpo, w_dpo, equal, True, loss="dpo", steps=ms)
        _, mis_fresh = run(k_d, w0, w0, equal, True, loss="dpo", steps=ms)
        del k_e
        # Chance: how often the untrained head already prefers the flipped answers.
        chance = _policy_accuracy(w0, eval_batch, True, num_beh).mean()
        return dpo, sft, uneq, mis_aligned, mis_fresh, chance, w_dpo

    keys = jax.random.split(jax.random.key(config.seed), config.num_seeds)
    runs = batch_runs(one_seed, in_axes=0, method="vmap", mesh=mesh_from_config(config, RUNS_AXIS))
    *out, w_dpo = runs(keys)
    dpo, sft, uneq, mis_aligned, mis_fresh, chance = to_host(out)
    checkpoints = Checkpointer(workdir)
    if checkpoints.latest_step() is None:
        checkpoints.save(config.num_steps, w_dpo)
    checkpoints.close()
    level = config.accuracy_level
    results: dict[str, list[float]] = {}
    for name, hist in (("dpo", dpo), ("sft", sft), ("unequal", uneq)):
        steps90 = _first_reach(np.asarray(hist["accuracy"]), level)  # [seeds, K]
        for k, delta in enumerate(deltas_np):
            results[f"steps90_{name}_{_tag(delta)}"] = steps90[:, k].tolist()
            results[f"final_accuracy_{name}_{_tag(delta)}"] = np.asarray(hist["accuracy"])[
                :, -1, k
            ].tolist()
        results[f"spearman_{name}"] = _spearman(deltas_np, steps90)
    proj = np.moveaxis(np.asarray(dpo["projection"]), -1, -2)  # [seeds, K, T]
    early = proj[..., : config.early_steps]
    slopes = early[..., -1] / config.early_steps  # Δ projection per step over the window
    for k, delta in enumerate(deltas_np):
        results[f"early_slope_{_tag(delta)}"] = slopes[:, k].tolist()
    results["early_r2"] = _linear_r2(early).mean(-1).tolist()
    results["full_r2"] = _linear_r2(proj).mean(-1).tolist()
    results["spearman_early_slope"] = [
        float(stats.spearmanr(deltas_np, row).statistic) for row in slopes
    ]
    results["misalign_start_accuracy_fresh"] = np.asarray(chance).tolist()
    for name, hist in (("aligned", mis_aligned), ("fresh", mis_fresh)):
        policy = np.asarray(hist["policy_accuracy"]).mean(-1)[..., None]  # [seeds, T, 1]
        win = config.misalign_level
        results[f"misalign_steps_{name}"] = _first_reach(policy, win)[:, 0].tolist()
        # DPO's own training accuracy (implicit reward vs the run's reference) to 90 %.
        implicit = np.asarray(hist["accuracy"]).mean(-1)[..., None]
        results[f"misalign_implicit_steps_{name}"] = _first_reach(implicit, level)[:, 0].tolist()
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one DPO step (with its per-step evaluation) of every seed, the
    seeds split over ``runs`` (padded to it); a seed's five runs (DPO, SFT, unequal
    weights: ``num_steps`` each; two misalignment runs: ``misalign_steps`` each) are
    counted as DPO steps."""
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    deltas = jnp.asarray(config.deltas, jnp.float32)
    weights = jnp.full(deltas.shape, 1.0 / deltas.shape[0])
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    problems = jax.eval_shape(jax.vmap(lambda k: _problem(k, k, deltas, config)), keys)
    tx = make_optimizer(config.optimizer)
    heads = jax.ShapeDtypeStruct((lanes, 2, config.dim), jnp.float32)
    carry = (heads, jax.eval_shape(jax.vmap(tx.init), heads))
    spmd = RUNS_AXIS if runs > 1 else None

    def fn(keys, carry, problems, t):
        def one(k, c, p):
            return _step_fn(k, c[0], c[0], weights, False, p, config, "dpo", tx)(c, t)

        return jax.vmap(one, spmd_axis_name=spmd)(keys, carry, problems)

    split = runs_sharding(mesh)
    return PlanSpec(
        fn=fn,
        abstract_args=(
            *abstract((keys, carry, problems), split),
            abstract(jax.ShapeDtypeStruct((), jnp.int32), replicated(mesh)),
        ),
        steps_per_run=3 * config.num_steps + 2 * config.misalign_steps,
        num_runs=config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one DPO step (batch {config.batch_size}, eval {config.eval_size} prompts) of "
        f"{config.num_seeds} seeds ({lanes} with padding, over runs); a seed's five runs "
        "counted in its steps",
    )
