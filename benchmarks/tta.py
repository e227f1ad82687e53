"""Test-time adaptation: jaxlab.tta's SLWI filter and TENT objective against NumPy, in one run.

``jaxlab bench tta`` (or ``python benchmarks/tta.py [--quick]``) times, with
``jaxlab.train.time_interleaved`` (warmed up, interleaved, medians):

* one ``slwi_update`` (predict, score, backtrack, Kalman update, plug-in) on a pytree of
  four leaves holding 4·10⁶ adapted weights (``--quick``: 4·10⁵), jitted, against the same
  equations in NumPy on one flat vector (the diagonal filter a user would write; no
  maintained library implements SLWI);
* TENT's entropy objective and its gradient w.r.t. the logits of a [256, 1000] batch
  (``entropy_loss`` under ``jit(value_and_grad)``) against NumPy's closed form
  ``∂H/∂z_k = −p_k (log p_k + H_i) / n``.

Each NumPy peer is checked against jaxlab's values first. ``main`` returns the
jaxlab / NumPy time ratios (< 1: jaxlab is faster).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.train.timing import print_speedups, time_interleaved
from jaxlab.tta import entropy_loss, slwi_init, slwi_update

HYPER = {"a": 0.99, "q": 0.01, "b": 0.9, "zeta": 2.0, "alpha": 2.0, "warmup": 5}


def numpy_slwi(state: dict, observed: np.ndarray, update: np.ndarray, a, q, b, zeta, alpha, warmup):
    """The SLWI step of :func:`jaxlab.tta.slwi_update` on flat float32 vectors."""
    r = 1.0 - q
    mean_pred = a * state["mean"] + (1 - a) * state["source"]
    var_pred = a * a * state["var"] + q
    log_pred = np.mean(
        -0.5 * (np.log(2 * np.pi * (var_pred + r)) + (observed - mean_pred) ** 2 / (var_pred + r))
    )
    diff = log_pred - state["prev_log_pred"]
    count = state["count"]
    std = np.sqrt(state["score_m2"] / max(count - 2, 1))
    score = (diff - state["score_mean"]) / max(std, 1e-12) if count > warmup else 0.0
    c = 1.0 / alpha if count > warmup and abs(score) > zeta else 0.0
    if count > 0:
        delta = diff - state["score_mean"]
        new_mean = state["score_mean"] + delta / count
        new_m2 = state["score_m2"] + delta * (diff - new_mean)
    else:
        new_mean = new_m2 = 0.0
    backtracked = observed - c * update
    gain = var_pred / (var_pred + r)
    new_state = {
        "mean": mean_pred + gain * (backtracked - mean_pred),
        "var": (1 - gain) * var_pred,
        "source": state["source"],
        "prev_log_pred": log_pred,
        "score_mean": new_mean,
        "score_m2": new_m2,
        "count": count + 1,
    }
    return mean_pred + b * (backtracked - mean_pred), new_state


def numpy_entropy(logits: np.ndarray):
    """Mean softmax entropy and its gradient w.r.t. the logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    p = np.exp(logp)
    h = -(p * logp).sum(axis=1, keepdims=True)
    return h.mean(), -p * (logp + h) / len(logits)


def _flat(tree) -> np.ndarray:
    return np.concatenate([np.ravel(x) for x in jax.tree.leaves(tree)])


def _slwi_row(size: int, repeats: int, rng: np.random.Generator) -> dict[str, float]:
    leaves = [size // 4] * 4
    source = {
        f"w{i}": jnp.asarray(rng.normal(size=n).astype(np.float32)) for i, n in enumerate(leaves)
    }
    # A drifting stream with one jump, so the score's backtracking path is exercised too.
    scales = [0.01] * (HYPER["warmup"] + 2) + [1.0]
    stream = [
        {
            k: v + scale * jnp.asarray(rng.normal(size=v.shape).astype(np.float32))
            for k, v in source.items()
        }
        for scale in scales
    ]
    step = jax.jit(lambda s, x, g: slwi_update(s, x, g, **HYPER))
    state = slwi_init(source)
    np_state = {
        "mean": _flat(source),
        "var": np.full(size, 1e-4, np.float32),
        "source": _flat(source),
        "prev_log_pred": 0.0,
        "score_mean": 0.0,
        "score_m2": 0.0,
        "count": 0,
    }
    prev = source
    for obs in stream:  # past the warm-up, so the score and backtracking paths are live
        upd = jax.tree.map(jnp.subtract, obs, prev)
        phi, state, _ = step(state, obs, upd)
        np_phi, np_state = numpy_slwi(np_state, _flat(obs), _flat(upd), **HYPER)
        np.testing.assert_allclose(_flat(phi), np_phi, rtol=1e-5, atol=1e-5)
        prev = obs
    obs, upd = stream[-1], jax.tree.map(jnp.subtract, stream[-1], stream[-2])
    np_obs, np_upd = _flat(obs), _flat(upd)
    return time_interleaved(
        {
            "jaxlab": lambda: step(state, obs, upd),
            "numpy": lambda: numpy_slwi(np_state, np_obs, np_upd, **HYPER),
        },
        repeats=repeats,
    )


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, < 1 minute")
    args = parser.parse_args(argv)
    size = 400_000 if args.quick else 4_000_000
    repeats = 5 if args.quick else 9
    rng = np.random.default_rng(0)
    rows = {f"slwi_update, {size:.0e} weights": _slwi_row(size, repeats, rng)}

    logits = (3.0 * rng.normal(size=(256, 1000))).astype(np.float32)
    j_logits = jnp.asarray(logits)
    j_entropy = jax.jit(jax.value_and_grad(entropy_loss))
    ours = j_entropy(j_logits)
    theirs = numpy_entropy(logits)
    np.testing.assert_allclose(float(ours[0]), theirs[0], rtol=1e-4)
    np.testing.assert_allclose(np.asarray(ours[1]), theirs[1], rtol=1e-3, atol=1e-8)
    rows["TENT entropy + grad, [256, 1000]"] = time_interleaved(
        {
            "jaxlab": lambda: j_entropy(j_logits),
            "numpy": lambda: numpy_entropy(logits),
        },
        repeats=repeats,
    )

    title = f"TTA vs NumPy, {jax.default_backend()}, median of {repeats}"
    return print_speedups(title, rows, width=36)


if __name__ == "__main__":
    main()
