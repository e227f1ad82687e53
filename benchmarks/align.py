"""DPO: jaxlab.align against TRL's DPO loss formula written in NumPy, in one run.

``jaxlab bench align`` (or ``python benchmarks/align.py [--quick]``) times, with
``jaxlab.train.time_interleaved`` (warmed up, interleaved, medians), loss and gradient of:

* ``dpo_loss`` on N sequence log-probability pairs (N = 10⁶; ``--quick`` 10⁵), against
  TRL's ``DPOTrainer`` sigmoid loss, ``−logsigmoid(β·((π_c − π_r) − (ref_c − ref_r)))``
  averaged, in NumPy with its closed-form gradient ``∓β σ(−margin) / N`` on the policy
  log-probabilities (what a user without a JAX DPO would write);
* ``unembedding_dpo_loss``, the one-token model of Im & Li (2024) that the dpo_dynamics
  experiment trains (W ∈ ℝ^{V×d}, V = 4096, d = 256, a batch of 4096 prompts; ``--quick``
  V = 1024, batch 1024), against NumPy's forward and closed-form gradient
  ``∂L/∂W = −(β/b) Σ σ(−m) (e_{y_w} − e_{y_l}) g(x)ᵀ`` (the softmax terms cancel).

Both peers are checked against jaxlab's values before timing. ``main`` returns the
jaxlab / NumPy time ratios (< 1: jaxlab is faster).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.align import dpo_loss, unembedding_dpo_loss
from jaxlab.train.timing import print_speedups, time_interleaved

BETA = 0.1


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def numpy_dpo(pc, pr, rc, rr, beta):
    """TRL's sigmoid DPO loss (mean) and its gradient w.r.t. the policy log-probabilities."""
    margin = beta * ((pc - rc) - (pr - rr))
    loss = -np.mean(_log_sigmoid(margin))
    g = -beta * np.exp(_log_sigmoid(-margin)) / margin.size  # −β σ(−m) / N
    return loss, (g, -g)


def numpy_unembedding_dpo(w, w_ref, g, chosen, rejected, beta):
    """Loss and ∂L/∂W of the one-token DPO model in NumPy."""

    def logps(weights):
        z = g @ weights.T
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        rows = np.arange(len(g))
        return z[rows, chosen] - lse, z[rows, rejected] - lse

    pc, pr = logps(w)
    rc, rr = logps(w_ref)
    margin = beta * ((pc - rc) - (pr - rr))
    loss = -np.mean(_log_sigmoid(margin))
    coef = -beta * np.exp(_log_sigmoid(-margin)) / len(g)  # [b]
    grad = np.zeros_like(w)
    np.add.at(grad, chosen, coef[:, None] * g)
    np.add.at(grad, rejected, -coef[:, None] * g)
    return loss, grad


def _check(ours, theirs, what: str) -> None:
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=2e-3, atol=1e-6, err_msg=what)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, < 1 minute")
    args = parser.parse_args(argv)
    n_pairs = 100_000 if args.quick else 1_000_000
    vocab, dim, batch = (1024, 256, 1024) if args.quick else (4096, 256, 4096)
    repeats = 5 if args.quick else 9
    rng = np.random.default_rng(0)
    logps = [(-20.0 + 5.0 * rng.normal(size=n_pairs)).astype(np.float32) for _ in range(4)]
    j_logps = [jnp.asarray(x) for x in logps]
    j_dpo = jax.jit(
        jax.value_and_grad(lambda pc, pr, rc, rr: dpo_loss(pc, pr, rc, rr, BETA), argnums=(0, 1))
    )
    _check(j_dpo(*j_logps), numpy_dpo(*logps, BETA), "dpo_loss")
    rows = {}
    rows[f"dpo_loss + grad, N = {n_pairs:.0e}"] = time_interleaved(
        {
            "jaxlab": lambda: j_dpo(*j_logps),
            "numpy": lambda: numpy_dpo(*logps, BETA),
        },
        repeats=repeats,
    )

    w = (0.02 * rng.normal(size=(vocab, dim))).astype(np.float32)
    w_ref = (w + 0.02 * rng.normal(size=(vocab, dim))).astype(np.float32)
    g = rng.normal(size=(batch, dim)).astype(np.float32)
    chosen = rng.integers(0, vocab, batch)
    rejected = (chosen + 1 + rng.integers(0, vocab - 1, batch)) % vocab
    j_args = [jnp.asarray(x) for x in (w, w_ref, g, chosen, rejected)]
    j_unemb = jax.jit(jax.value_and_grad(lambda *a: unembedding_dpo_loss(*a, BETA)))
    _check(
        j_unemb(*j_args),
        numpy_unembedding_dpo(w, w_ref, g, chosen, rejected, BETA),
        "unembedding_dpo_loss",
    )
    rows[f"one-token DPO + grad, V={vocab} d={dim} b={batch}"] = time_interleaved(
        {
            "jaxlab": lambda: j_unemb(*j_args),
            "numpy": lambda: numpy_unembedding_dpo(w, w_ref, g, chosen, rejected, BETA),
        },
        repeats=repeats,
    )

    title = f"DPO vs TRL's loss formula in NumPy, {jax.default_backend()}, median of {repeats}"
    return print_speedups(title, rows)


if __name__ == "__main__":
    main()
