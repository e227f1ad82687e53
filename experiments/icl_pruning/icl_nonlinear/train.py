"""Trains the one-layer nonlinear transformer on pattern tasks; ICL error, OOD, pruning."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.theory import (
    icl_attention,
    icl_forward,
    icl_hinge_loss,
    init_icl_params,
    magnitude_prune,
    make_icl_patterns,
    sample_icl_prompt,
    weighted_vote,
)
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    jit_run,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    segmented_scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract

TRAIN_PAIRS = ((0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3))  # every IDR pattern covered


def _tag(value: float) -> str:
    return f"{value:g}".replace(".", "p")


def _prompts(key, pos, neg, irrelevant, alpha, length, num, config):
    """``num`` prompts cycling over the tasks ``pos[t] → +1, neg[t] → −1``."""
    keys = jax.random.split(key, num)
    task = jnp.arange(num) % pos.shape[0]
    return jax.vmap(
        lambda k, t: sample_icl_prompt(
            k, pos[t], neg[t], irrelevant, alpha, length, config.kappa, config.noise
        )
    )(keys, task)


def _error(score_fn, prompts) -> jax.Array:
    scores = jax.vmap(score_fn)(prompts.demos, prompts.query)
    return jnp.mean(jnp.sign(scores) != prompts.label)


def _attention_mass(params, mass_set) -> jax.Array:
    """Mean attention on same-pattern demonstrations over the prompts of ``mass_set``."""
    w = jax.vmap(lambda d, q: icl_attention(params, d, q))(mass_set.demos, mass_set.query)
    return jnp.mean(jnp.sum(w * mass_set.same, axis=-1))


def _loss(params, batch) -> jax.Array:
    losses = jax.vmap(icl_hinge_loss, (None, 0, 0, 0))(
        params, batch.demos, batch.query, batch.label
    )
    return jnp.mean(losses)


def _setup(key: jax.Array, config: ml_collections.ConfigDict, tx):
    """One seed before training: ``(carry0, mass_init, problem)``. ``carry0 = ((params0,
    opt_state0), data)``, ``data`` what the steps read (the train key, the training tasks,
    the attention-mass prompts); ``problem`` what the evaluation reads."""
    train_pairs = np.asarray(TRAIN_PAIRS)
    n_tok = config.dim + 1
    k_pat, k_rot, k_init, k_train, k_mass, k_eval, k_prune = jax.random.split(key, 7)
    mu, nu = make_icl_patterns(k_pat, config.dim, config.num_relevant, config.num_irrelevant)
    # OOD: relevant patterns from combinations of the IDR ones, rotated IDI patterns.
    mu_ood = jnp.stack([mu[0] + mu[1], mu[2] + mu[3]]) / jnp.sqrt(2.0)
    rot, _ = jnp.linalg.qr(jax.random.normal(k_rot, (nu.shape[0], nu.shape[0])))
    nu_ood = rot @ nu
    pos_tr, neg_tr = mu[train_pairs[:, 0]], mu[train_pairs[:, 1]]
    params0 = init_icl_params(k_init, n_tok, config.num_neurons, init_scale=config.init_scale)
    mass_set = _prompts(
        k_mass, pos_tr, neg_tr, nu, 0.5, config.train_length, config.mass_prompts, config
    )
    data = {"k_train": k_train, "pos": pos_tr, "neg": neg_tr, "nu": nu, "mass_set": mass_set}
    problem = {
        "mu": mu,
        "nu": nu,
        "mu_ood": mu_ood,
        "nu_ood": nu_ood,
        "k_eval": k_eval,
        "k_prune": k_prune,
    }
    return ((params0, tx.init(params0)), data), _attention_mass(params0, mass_set), problem


def _step_fn(config: ml_collections.ConfigDict, tx):
    """``(carry, t) -> (carry, {"loss", "mass"})``: one SGD step of one seed (the carry of
    :func:`_setup`; ``data`` passes through)."""
    train_alphas = jnp.asarray(config.train_alphas, jnp.float32)
    update = optimizer_step(_loss, tx)

    def step(carry, t):
        state, data = carry
        k = jax.random.fold_in(data["k_train"], t)
        k_a, k_p = jax.random.split(k)
        alpha = train_alphas[jax.random.randint(k_a, (), 0, train_alphas.shape[0])]
        batch = _prompts(
            k_p,
            data["pos"],
            data["neg"],
            data["nu"],
            alpha,
            config.train_length,
            config.batch_size,
            config,
        )
        state, loss = update(state, batch)
        return (state, data), {"loss": loss, "mass": _attention_mass(state[0], data["mass_set"])}

    return step


def _train(config: ml_collections.ConfigDict, workdir: str):
    """Every seed's training run: ``init`` (``batch_runs``, seeds over ``runs``), then the
    vmapped steps as :func:`segmented_scan_run` in ``config.segments`` pieces,
    checkpointed in ``workdir``. Returns ``(params0, params, history, mass_init, problem)``
    (history ``[seeds, steps]`` per metric, on the host)."""
    tx = make_optimizer(config.optimizer)
    keys = jax.random.split(jax.random.key(config.seed), config.num_seeds)
    mesh = mesh_from_config(config, RUNS_AXIS)
    init = batch_runs(
        functools.partial(_setup, config=config, tx=tx),
        in_axes=0,
        method="vmap",
        fast_compile=config.fast_compile,
        mesh=mesh,
    )
    carry0, mass_init, problem = init(keys)
    ((params, _), _), history = segmented_scan_run(
        jax.vmap(_step_fn(config, tx), in_axes=(0, None)),
        carry0,
        length=config.num_steps,
        segments=config.segments,
        checkpointer=Checkpointer(workdir),
        fast_compile=config.fast_compile,
        mesh=mesh,
    )
    history = {name: np.moveaxis(h, 0, 1) for name, h in history.items()}
    return carry0[0][0], params, history, mass_init, problem


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    train_pairs = np.asarray(TRAIN_PAIRS)
    test_pairs = train_pairs[:, ::-1]  # the reversed pairs: unseen, labels flipped
    alphas = jnp.asarray(config.alphas, jnp.float32)
    rates = jnp.asarray(config.prune_rates, jnp.float32)

    params0, params, history, mass_init, problem = _train(config, workdir)

    def split_errors(length):
        # One compiled program per prompt length: vmapped over seeds and α.
        @functools.partial(jit_run, fast_compile=config.fast_compile)
        def run(p, pos, neg, irrelevant, key):
            def at(alpha):
                prompts = _prompts(
                    key, pos, neg, irrelevant, alpha, length, config.eval_prompts, config
                )
                return (
                    _error(lambda d, q: icl_forward(p, d, q), prompts),
                    _error(weighted_vote, prompts),
                )

            return jax.vmap(at)(alphas)

        return jax.vmap(run)

    def task_vectors(split):
        mu = problem["mu"]
        if split == "unseen":
            return (
                mu[:, test_pairs[:, 0]],
                mu[:, test_pairs[:, 1]],
                problem["nu"],
                jax.vmap(lambda k: jax.random.fold_in(k, 0))(problem["k_eval"]),
            )
        ood = problem["mu_ood"]
        return (
            ood[:, jnp.array([0, 1])],
            ood[:, jnp.array([1, 0])],
            problem["nu_ood"],
            jax.vmap(lambda k: jax.random.fold_in(k, 1))(problem["k_eval"]),
        )

    evals = {}
    for length in config.lengths:
        fn = split_errors(length)
        for split in ("unseen", "ood"):
            vecs = task_vectors(split)
            evals[("trained", split, length)] = to_host(fn(params, *vecs))
            evals[("untrained", split, length)] = to_host(fn(params0, *vecs))

    @functools.partial(jit_run, fast_compile=config.fast_compile)
    @jax.vmap
    def prune_all(p, mu, nu, k_prune):
        prune_set = _prompts(
            k_prune,
            mu[test_pairs[:, 0]],
            mu[test_pairs[:, 1]],
            nu,
            config.prune_alpha,
            config.prune_length,
            config.eval_prompts,
            config,
        )

        def pruned_error(rate, order):
            q = magnitude_prune(p, rate, order, key=jax.random.fold_in(k_prune, 1))
            losses = jax.vmap(icl_hinge_loss, (None, 0, 0, 0))(
                q, prune_set.demos, prune_set.query, prune_set.label
            )
            return _error(lambda d, x: icl_forward(q, d, x), prune_set), jnp.mean(losses)

        return {
            order: jax.vmap(lambda r, o=order: pruned_error(r, o))(rates)
            for order in ("smallest", "random", "largest")
        }

    pruned = to_host(prune_all(params, problem["mu"], problem["nu"], problem["k_prune"]))
    history = to_host(history)
    results: dict[str, list[float]] = {}
    for split in ("unseen", "ood"):
        for length in config.lengths:
            model_err, vote_err = evals[("trained", split, length)]
            untrained_err, _ = evals[("untrained", split, length)]
            for j, alpha in enumerate(config.alphas):
                tag = f"l{length}_a{_tag(alpha)}"
                results[f"error_{split}_{tag}"] = np.asarray(model_err)[:, j].tolist()
                results[f"vote_error_{split}_{tag}"] = np.asarray(vote_err)[:, j].tolist()
                results[f"untrained_error_{split}_{tag}"] = np.asarray(untrained_err)[:, j].tolist()
    for order in ("smallest", "random", "largest"):
        errs, losses = (np.asarray(a) for a in pruned[order])  # [seeds, R] each
        for i, rate in enumerate(config.prune_rates):
            results[f"prune_error_{order}_r{_tag(rate)}"] = errs[:, i].tolist()
            results[f"prune_hinge_{order}_r{_tag(rate)}"] = losses[:, i].tolist()
    mass = np.asarray(history["mass"])  # [seeds, T]
    results["attention_mass_init"] = to_host(mass_init).tolist()
    results["attention_mass_final"] = mass[:, -1].tolist()
    results["train_loss_final"] = np.asarray(history["loss"])[:, -10:].mean(-1).tolist()
    norms = np.sort(to_host(jnp.linalg.norm(params.w_o, axis=-1)), axis=-1)
    results["neuron_norm_top_quarter_share"] = (
        norms[:, -norms.shape[1] // 4 :].sum(-1) / norms.sum(-1)
    ).tolist()
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one SGD step (a batch of prompts, hinge loss, attention mass) of
    every seed, as :func:`_train`'s segments vmap it, the seeds split over ``runs`` (padded
    to it); set-up, evaluation and pruning not planned."""
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    spmd = RUNS_AXIS if runs > 1 else None
    sharding = runs_sharding(mesh) if runs > 1 else replicated(mesh)
    tx = make_optimizer(config.optimizer)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    carry = jax.eval_shape(jax.vmap(lambda k: _setup(k, config, tx)[0]), keys)
    step = _step_fn(config, tx)

    def fn(carry, t):
        return jax.vmap(step, in_axes=(0, None), spmd_axis_name=spmd)(carry, t)

    return PlanSpec(
        fn=fn,
        abstract_args=(
            abstract(carry, sharding),
            abstract(jax.ShapeDtypeStruct((), jnp.int32), replicated(mesh)),
        ),
        steps_per_run=config.num_steps,
        num_runs=config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one SGD step (batch {config.batch_size} prompts, hinge loss, attention mass) "
        f"of {config.num_seeds} seeds ({lanes} with padding, over runs); set-up, evaluation "
        "and pruning not planned",
    )
