"""Sparsity and multi-modality of each normaliser on controlled score vectors.

Every seed is one run (fit the softmax temperature and the MultiMax parameters on fitting
vectors, measure every normaliser on fresh ones); the seeds are one ``batch_runs`` program,
split over the ``runs`` axis of ``config.mesh``. The program is one resumable piece
(:func:`jaxlab.train.lifecycle.resumable`: a finished run is not recomputed), and its
results, the fitted parameters among them, are saved as a checkpoint at step
``fit_steps``.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from matplotlib.figure import Figure

from jaxlab.nn import MultiMaxParams, entmax15, init_multimax_params, multimax_modulate, sparsemax
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    log_history,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    padded_runs,
    scan_run,
)
from jaxlab.train.lifecycle import resumable, runs_sharding
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec, abstract


def make_scores(key: jax.Array, config: ml_collections.ConfigDict) -> tuple[jax.Array, jax.Array]:
    """``(scores [v, n], is_peak bool [v, n])``: jittered equal peaks among N(0, 1) noise."""
    v, n, m = config.num_vectors, config.num_entries, config.num_peaks
    k_noise, k_jitter, k_pos = jax.random.split(key, 3)
    noise = jax.random.normal(k_noise, (v, n))
    order = jax.vmap(lambda k: jax.random.permutation(k, n))(jax.random.split(k_pos, v))
    is_peak = jnp.zeros((v, n), bool).at[jnp.arange(v)[:, None], order[:, :m]].set(True)
    peaks = config.peak_height + config.peak_jitter * jax.random.normal(k_jitter, (v, n))
    return jnp.where(is_peak, peaks, noise), is_peak


def measure(p: jax.Array, is_peak: jax.Array, config: ml_collections.ConfigDict) -> dict:
    """Sparsity (share of entries < near_zero), peaks keeping mass, mass off the peaks."""
    m = config.num_peaks
    kept = jnp.sum((p >= config.kept_fraction / m) & is_peak, -1)
    return {
        "sparsity": jnp.mean(p < config.near_zero),
        "peaks_kept": jnp.mean(kept),
        "residual_mass": jnp.mean(jnp.sum(jnp.where(is_peak, 0.0, p), -1)),
    }


def kl_to_target(log_p: jax.Array, is_peak: jax.Array, m: int) -> jax.Array:
    """Mean KL(target || p) for the target that is uniform on the peaks."""
    target = is_peak / m
    return jnp.mean(jnp.sum(jnp.where(is_peak, target * (jnp.log(1.0 / m) - log_p), 0.0), -1))


def fit(loss_fn, params, scores, is_peak, config):
    """The optimiser ``config.fit_optimizer`` (a :func:`jaxlab.train.make_optimizer` entry)
    on ``loss_fn(params, scores, is_peak)``; returns the fitted parameters and the loss at
    every step.

    The ``config.fit_steps`` full-batch steps are one ``scan_run``; the scores are arguments.
    """
    tx = make_optimizer(config.fit_optimizer)
    step = lambda carry, _: fit_step(loss_fn, tx, carry, scores, is_peak)  # noqa: E731
    (params, _), losses = scan_run(step, (params, tx.init(params)), length=config.fit_steps)
    return params, losses


def fit_step(loss_fn, tx, carry, scores, is_peak):
    """One full-batch step: ``((params, opt_state), loss)``."""
    return optimizer_step(lambda p, _: loss_fn(p, scores, is_peak), tx)(carry, None)


def multimax_loss(params, scores, is_peak, num_peaks: int):
    """KL to the peak target of MultiMax(scores)."""
    return kl_to_target(jax.nn.log_softmax(multimax_modulate(scores, params)), is_peak, num_peaks)


def one_seed(key: jax.Array, config: ml_collections.ConfigDict) -> dict[str, jax.Array]:
    """One run: every metric of one seed (scalars) and the two fits' loss curves."""
    k_fit, k_eval, k_init = jax.random.split(key, 3)
    fit_scores, fit_peaks = make_scores(k_fit, config)
    scores, is_peak = make_scores(k_eval, config)
    m = config.num_peaks

    softmax_loss = lambda log_t, x, pk: kl_to_target(jax.nn.log_softmax(x / jnp.exp(log_t)), pk, m)
    log_t, softmax_curve = fit(softmax_loss, jnp.zeros(()), fit_scores, fit_peaks, config)
    fitted, multimax_curve = fit(
        functools.partial(multimax_loss, num_peaks=m),
        init_multimax_params(k_init, config.multimax_order),
        fit_scores,
        fit_peaks,
        config,
    )
    hand = MultiMaxParams(
        *(jnp.asarray(config[f"hand_{f}"], jnp.float32) for f in MultiMaxParams._fields)
    )

    log_probs = {f"softmax_t{t:g}": jax.nn.log_softmax(scores / t) for t in config.temperatures}
    log_probs["softmax_fit"] = jax.nn.log_softmax(scores / jnp.exp(log_t))
    log_probs["multimax_fit"] = jax.nn.log_softmax(multimax_modulate(scores, fitted))
    log_probs["multimax_hand"] = jax.nn.log_softmax(multimax_modulate(scores, hand))
    probs = {name: jnp.exp(lp) for name, lp in log_probs.items()}
    probs["sparsemax"] = sparsemax(scores)
    probs["entmax15"] = entmax15(scores)

    results = {"softmax_fit_temperature": jnp.exp(log_t)}
    for name, p in probs.items():
        for metric, value in measure(p, is_peak, config).items():
            results[f"{metric}_{name}"] = value
    for name, lp in log_probs.items():
        results[f"kl_{name}"] = kl_to_target(lp, is_peak, m)
    for field, value in fitted._asdict().items():
        for k in range(value.shape[0]):
            results[f"multimax_fit_{field}{k + 1}"] = value[k]
    curves = {"fit_loss/softmax": softmax_curve, "fit_loss/multimax": multimax_curve}
    return {"results": results, "curves": curves}


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list]:
    """All ``config.num_seeds`` seeds (``seed + i``) as one program; a list per metric."""
    keys = jnp.stack([jax.random.key(config.seed + i) for i in range(config.num_seeds)])
    runs = batch_runs(
        lambda key: one_seed(key, config),
        in_axes=0,
        method="auto",
        mesh=mesh_from_config(config, RUNS_AXIS),
    )

    def flat(keys):
        out = runs(keys)
        return {
            f"{group}/{name}": v
            for group in ("results", "curves")
            for name, v in out[group].items()
        }

    saved = resumable(workdir, "seeds", config, flat, keys)
    out = {
        group: {
            name.split("/", 1)[1]: v for name, v in saved.items() if name.startswith(f"{group}/")
        }
        for group in ("results", "curves")
    }
    checkpointer = Checkpointer(workdir)
    if checkpointer.latest_step() != config.fit_steps:  # a resumed run saved it already
        checkpointer.save(config.fit_steps, out["results"])
    checkpointer.wait()
    checkpointer.close()
    log_history(workdir, out["curves"], step_axis=1, every=10)
    results = {name: np.asarray(v, np.float64).tolist() for name, v in out["results"].items()}
    _plot(results, config, os.path.join(workdir, "tradeoff.png"))
    return results


def _plot(results: dict, config, path: str) -> None:
    """Sparsity vs peaks kept, seed means."""
    mean = {k: float(np.mean(v)) for k, v in results.items()}
    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    temps = [f"softmax_t{t:g}" for t in config.temperatures]
    ax.plot(
        [mean[f"sparsity_{n}"] for n in temps],
        [mean[f"peaks_kept_{n}"] for n in temps],
        "o-",
        color="gray",
        label="softmax, T = " + ", ".join(f"{t:g}" for t in config.temperatures),
    )
    markers = {
        "softmax_fit": "s",
        "sparsemax": "^",
        "entmax15": "v",
        "multimax_fit": "*",
        "multimax_hand": "P",
    }
    for name, marker in markers.items():
        ax.plot(
            mean[f"sparsity_{name}"], mean[f"peaks_kept_{name}"], marker, markersize=11, label=name
        )
    ax.set_xlabel(f"sparsity: share of weights < {config.near_zero:g}")
    ax.set_ylabel(f"peaks keeping mass (of {config.num_peaks})")
    ax.set_title("sparsity vs multi-modality (upper right is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one step of the MultiMax fit for every seed, split over ``runs``."""
    lanes = padded_runs(config.num_seeds, mesh)
    tx = make_optimizer(config.fit_optimizer)
    loss = functools.partial(multimax_loss, num_peaks=config.num_peaks)
    carry = jax.eval_shape(
        jax.vmap(
            lambda k: (lambda p: (p, tx.init(p)))(init_multimax_params(k, config.multimax_order))
        ),
        jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes)),
    )
    shape = (lanes, config.num_vectors, config.num_entries)
    data = (jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct(shape, jnp.bool_))
    split = runs_sharding(mesh)
    fn = jax.vmap(lambda c, x, pk: fit_step(loss, tx, c, x, pk))
    return PlanSpec(
        fn=fn,
        abstract_args=(abstract(carry, split), *abstract(data, split)),
        steps_per_run=2 * config.fit_steps,
        num_runs=config.num_seeds,
        runs_per_call=config.num_seeds,
        note="one MultiMax fit step of every seed (the softmax-temperature fit, as many "
        "steps and cheaper, is counted as one more MultiMax step); evaluation not planned",
    )
