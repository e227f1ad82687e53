"""ADR-GD vs PGD: L∞ attacks on the best wrong-class margin of a digits MLP.

For an image x of class y and each wrong class j, the margin m_j(x') = f_j(x') − f_y(x') is a
ReLU MLP with a scalar output (the last layer's columns j and y subtracted), maximised over
the box [max(x − ε, 0), min(x + ε, 1)] by ADR-GD and by sign-gradient PGD with the same
number of steps per target; an attack succeeds when max_j m_j > 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from sklearn.datasets import load_digits

from jaxlab.optim import adr_gd, projected_gradient_ascent
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    scan_run,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract


def _load(seed: int = 0):
    x, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    x, y = (x[order] / 16.0).astype(np.float32), y[order].astype(np.int32)
    cut = int(0.7 * len(y))
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])


def _init(key, sizes):
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        w = jax.random.normal(jax.random.fold_in(key, i), (n_in, n_out)) * jnp.sqrt(2.0 / n_in)
        layers.append((w, jnp.zeros(n_out)))
    return layers


def _logits(params, x):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b[None])
    w, b = params[-1]
    return h @ w + b[None]


def _train(key, x, y, sizes, steps, optimizer):
    """One classifier: full-batch cross-entropy (``optimizer``: a config entry for
    :func:`jaxlab.train.make_optimizer`)."""
    opt = make_optimizer(optimizer)
    params = _init(key, sizes)
    step = optimizer_step(
        lambda p, _: optax.softmax_cross_entropy_with_integer_labels(_logits(p, x), y).mean(), opt
    )
    (params, _), _ = scan_run(step, (params, opt.init(params)), length=steps)
    return params


def _margin_nets(params, label):
    """The 10 margin networks f_j − f_y of one image (the j = y row is identically 0)."""
    w, b = params[-1]
    last_w = (w - w[:, label][:, None]).T[:, :, None]  # [10, h, 1]
    last_b = (b - b[label])[:, None]  # [10, 1]
    return last_w, last_b


def _attack(params, x, label, eps, num_steps, adr_kw, pgd_lr):
    """Best margins over the 9 wrong classes found by ADR-GD and PGD for one image."""
    hidden = list(params[:-1])
    lower, upper = jnp.clip(x - eps, 0.0, 1.0), jnp.clip(x + eps, 0.0, 1.0)
    last_w, last_b = _margin_nets(params, label)
    keys = jax.random.split(jax.random.fold_in(jax.random.key(0), label), 10)

    def adr_one(w, b, k):
        return adr_gd(
            hidden + [(w, b)], x, lower=lower, upper=upper, num_steps=num_steps, key=k, **adr_kw
        ).best_value

    def pgd_one(w, b):
        return projected_gradient_ascent(
            hidden + [(w, b)],
            x,
            lower=lower,
            upper=upper,
            num_steps=num_steps,
            lr=pgd_lr,
            gradient="sign",
        ).best_value

    wrong = jnp.arange(10) != label
    adr = jnp.where(wrong, jax.vmap(adr_one)(last_w, last_b, keys), -jnp.inf).max()
    pgd = jnp.where(wrong, jax.vmap(pgd_one)(last_w, last_b), -jnp.inf).max()
    return adr, pgd


def _attack_images(num_steps: int, adr_kw: dict):
    """``run(x, y, nets, eps, pgd_lr)``: one image index under every seed's classifier
    (``x``: [num_seeds, 64], ``y``: [num_seeds], ``nets``: stacked over seeds) -> (ADR-GD,
    PGD) best margins, each [num_seeds]: one run of the attack program (one ε for all)."""

    def run(x, y, nets, eps, pgd_lr):
        return jax.vmap(lambda p, x, y: _attack(p, x, y, eps, num_steps, adr_kw, pgd_lr))(
            nets, x, y
        )

    return run


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Trains ``num_seeds`` classifiers (vmap), saves them as the checkpoint of step
    ``train_steps`` in ``workdir``, attacks ``num_images`` test images each."""
    (x_tr, y_tr), (x_te, y_te) = _load()
    sizes = (x_tr.shape[1], *config.hidden, 10)
    seeds = jnp.arange(config.seed, config.seed + config.num_seeds)
    keys = jax.vmap(jax.random.key)(seeds)
    mesh = mesh_from_config(config, RUNS_AXIS)
    train = batch_runs(
        lambda k, x, y: _train(k, x, y, sizes, config.train_steps, config.optimizer),
        in_axes=(0, None, None),
        mesh=mesh,
    )
    nets = train(keys, jnp.asarray(x_tr), jnp.asarray(y_tr))
    checkpoints = Checkpointer(workdir)
    if checkpoints.latest_step() is None:
        checkpoints.save(config.train_steps, nets)
    checkpoints.close()
    accuracy = jax.vmap(lambda p: (_logits(p, x_te).argmax(-1) == y_te).mean())(nets)
    results: dict[str, float | list[float]] = {"clean_accuracy": np.asarray(accuracy).tolist()}
    adr_kw = config.adr.to_dict()
    run = batch_runs(
        _attack_images(config.num_steps, adr_kw), in_axes=(0, 0, None, None, None), mesh=mesh
    )
    for eps in config.epsilons:
        pgd_lr = config.pgd_step_factor * eps / config.num_steps
        images, labels = [], []
        for i in range(config.num_seeds):
            params_i = [(w[i], b[i]) for w, b in nets]
            correct = np.flatnonzero(np.asarray(_logits(params_i, x_te).argmax(-1)) == y_te)
            chosen = correct[: config.num_images]
            images.append(x_te[chosen])
            labels.append(y_te[chosen])
        # Runs: the images, [num_images, num_seeds, ...] (image-major); back to seed-major.
        adr, pgd = (
            np.asarray(v).T
            for v in run(
                jnp.asarray(np.stack(images, axis=1)),
                jnp.asarray(np.stack(labels, axis=1)),
                nets,
                eps,
                pgd_lr,
            )
        )
        adr_all, pgd_all = adr.ravel(), pgd.ravel()
        # Success rate per classifier seed (the unit of replication): [num_seeds].
        results[f"adr_success_eps{eps}"] = (adr > 0).mean(axis=1).tolist()
        results[f"pgd_success_eps{eps}"] = (pgd > 0).mean(axis=1).tolist()
        results[f"adr_rate_eps{eps}"] = float((adr_all > 0).mean())
        results[f"pgd_rate_eps{eps}"] = float((pgd_all > 0).mean())
        results[f"adr_mean_margin_eps{eps}"] = float(adr_all.mean())
        results[f"pgd_mean_margin_eps{eps}"] = float(pgd_all.mean())
        results[f"adr_beats_pgd_margin_eps{eps}"] = float((adr_all > pgd_all).mean())
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the attack program of one ε (every image × seed × target, the
    ``batch_runs`` of :func:`_attack_images`), the images split over ``runs`` (padded to
    it), the classifiers replicated; classifier training (seconds) not planned.

    One call is every attack's ``num_steps`` ADR-GD and PGD steps (the loops at their trip
    counts).
    """
    images = padded_runs(config.num_images, mesh)
    sizes = (64, *config.hidden, 10)  # scikit-learn digits: 8 × 8 pixels
    seeds = jax.ShapeDtypeStruct((config.num_seeds,), jnp.int32)
    nets = jax.eval_shape(jax.vmap(lambda s: _init(jax.random.key(s), sizes)), seeds)
    split = runs_sharding(mesh)
    eps = max(config.epsilons)
    pgd_lr = config.pgd_step_factor * eps / config.num_steps
    run = _attack_images(config.num_steps, config.adr.to_dict())
    fn = jax.vmap(lambda x, y, p: run(x, y, p, eps, pgd_lr), in_axes=(0, 0, None))
    data = (
        jax.ShapeDtypeStruct((images, config.num_seeds, sizes[0]), jnp.float32),
        jax.ShapeDtypeStruct((images, config.num_seeds), jnp.int32),
    )
    return PlanSpec(
        fn=fn,
        abstract_args=(*abstract(data, split), abstract(nets, replicated(mesh))),
        steps_per_run=1,
        num_runs=config.num_seeds * config.num_images * len(config.epsilons),
        runs_per_call=config.num_seeds * config.num_images,
        note=f"{config.num_steps} ADR-GD and PGD steps of {config.num_images} images "
        f"({images} with padding, over runs) × {config.num_seeds} seeds × 10 targets; "
        "classifier training not planned",
    )
