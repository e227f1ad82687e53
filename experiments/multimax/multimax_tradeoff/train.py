"""Sparsity and multi-modality of each normaliser on controlled score vectors."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import matplotlib
import ml_collections
import numpy as np
import optax

from jaxlab.nn import MultiMaxParams, entmax15, init_multimax_params, multimax_modulate, sparsemax
from jaxlab.train.runs import scan_run

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


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
        "sparsity": float(jnp.mean(p < config.near_zero)),
        "peaks_kept": float(jnp.mean(kept)),
        "residual_mass": float(jnp.mean(jnp.sum(jnp.where(is_peak, 0.0, p), -1))),
    }


def kl_to_target(log_p: jax.Array, is_peak: jax.Array, m: int) -> jax.Array:
    """Mean KL(target || p) for the target that is uniform on the peaks."""
    target = is_peak / m
    return jnp.mean(jnp.sum(jnp.where(is_peak, target * (jnp.log(1.0 / m) - log_p), 0.0), -1))


def fit(loss_fn, params, scores, is_peak, config):
    """Adam on ``loss_fn(params, scores, is_peak)``; returns the fitted parameters.

    The ``config.fit_steps`` full-batch steps are one ``scan_run``; the scores are arguments.
    """
    tx = optax.adam(config.fit_lr)

    def step(carry, _):
        params, opt_state = carry
        grads = jax.grad(loss_fn)(params, scores, is_peak)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), None

    (params, _), _ = scan_run(step, (params, tx.init(params)), length=config.fit_steps)
    return params


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    key = jax.random.key(config.seed)
    k_fit, k_eval, k_init = jax.random.split(key, 3)
    fit_scores, fit_peaks = make_scores(k_fit, config)
    scores, is_peak = make_scores(k_eval, config)
    m = config.num_peaks

    softmax_loss = lambda log_t, x, pk: kl_to_target(jax.nn.log_softmax(x / jnp.exp(log_t)), pk, m)
    multimax_loss = lambda mp, x, pk: kl_to_target(
        jax.nn.log_softmax(multimax_modulate(x, mp)), pk, m
    )
    log_t = jax.jit(lambda *a: fit(softmax_loss, *a, config))(jnp.zeros(()), fit_scores, fit_peaks)
    fitted = jax.jit(lambda *a: fit(multimax_loss, *a, config))(
        init_multimax_params(k_init, config.multimax_order), fit_scores, fit_peaks
    )
    hand = MultiMaxParams(*(jnp.asarray(config[f"hand_{f}"], jnp.float32)
                            for f in MultiMaxParams._fields))

    log_probs = {
        f"softmax_t{t:g}": jax.nn.log_softmax(scores / t) for t in config.temperatures
    }
    log_probs["softmax_fit"] = jax.nn.log_softmax(scores / jnp.exp(log_t))
    log_probs["multimax_fit"] = jax.nn.log_softmax(multimax_modulate(scores, fitted))
    log_probs["multimax_hand"] = jax.nn.log_softmax(multimax_modulate(scores, hand))
    probs = {name: jnp.exp(lp) for name, lp in log_probs.items()}
    probs["sparsemax"] = sparsemax(scores)
    probs["entmax15"] = entmax15(scores)

    results: dict[str, float] = {"softmax_fit_temperature": float(jnp.exp(log_t))}
    for name, p in probs.items():
        for metric, value in measure(p, is_peak, config).items():
            results[f"{metric}_{name}"] = value
    for name, lp in log_probs.items():
        results[f"kl_{name}"] = float(kl_to_target(lp, is_peak, m))
    for field, value in fitted._asdict().items():
        for k, v in enumerate(np.asarray(value)):
            results[f"multimax_fit_{field}{k + 1}"] = float(v)
    _plot(results, list(probs), config, os.path.join(workdir, "tradeoff.png"))
    return results


def _plot(results: dict, names: list[str], config, path: str) -> None:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    temps = [f"softmax_t{t:g}" for t in config.temperatures]
    ax.plot([results[f"sparsity_{n}"] for n in temps], [results[f"peaks_kept_{n}"] for n in temps],
            "o-", color="gray", label="softmax, T = " + ", ".join(f"{t:g}" for t in
                                                                  config.temperatures))
    markers = {"softmax_fit": "s", "sparsemax": "^", "entmax15": "v", "multimax_fit": "*",
               "multimax_hand": "P"}
    for name in names:
        if name in markers:
            ax.plot(results[f"sparsity_{name}"], results[f"peaks_kept_{name}"], markers[name],
                    markersize=11, label=name)
    ax.set_xlabel(f"sparsity: share of weights < {config.near_zero:g}")
    ax.set_ylabel(f"peaks keeping mass (of {config.num_peaks})")
    ax.set_title("sparsity vs multi-modality (upper right is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
