"""Benchmark: CI tests per second and CCPG vs PC end to end.

    jaxlab bench causal [--quick]

1. Fisher-z CI tests per second on the same data (n = 50 variables, N = 100k samples,
   conditioning sets of size 0 … 3, distinct random queries): jaxlab's batched JAX kernel
   (``FisherZTest.p_values``, one ``vmap``-ed call per conditioning size), jaxlab's
   single-query path (what the host-side searches use), and causal-learn's ``fisherz``
   (one call per query, fresh cache). Also the largest p-value difference.
2. End to end on the star DAG with 100k samples (Fisher-z, α = 1e-3): CCPG against
   causal-learn's PC (stable) through the same CI test, n = 12 (``--quick``: n = 10). The
   reference README reports n = 20: CCPG ≈ 0.06 s vs PC ≈ 360 s; PC's n·2^(n−2) tests make
   n = 20 a multi-minute run here too, so the default stops at 12.

``--quick`` (≤ 1 min): 2k queries, n = 10 for part 2.
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from jaxlab.causal import (
    ccpg,
    fisher_z_test,
    random_weights,
    sample_linear_gaussian,
    star_dag,
)
from jaxlab.causal.baselines import pc_adjacency
from jaxlab.train import time_interleaved


def _queries(rng, n, count, k):
    out = np.empty((count, 2 + k), dtype=np.int32)
    for i in range(count):
        out[i] = rng.choice(n, size=2 + k, replace=False)
    return out


def ci_throughput(num_vars: int, num_samples: int, per_size: int, repeats: int) -> None:
    from causallearn.utils.cit import CIT

    rng = np.random.default_rng(0)
    x = rng.normal(size=(num_samples, num_vars))
    x[:, 1:] += 0.5 * x[:, :-1]  # a chain: non-trivial partial correlations
    ours = fisher_z_test(x)
    batches = [_queries(rng, num_vars, per_size, k) for k in range(4)]
    total = 4 * per_size

    def jax_batched():
        return [ours.p_values(b) for b in batches]

    def jax_single():
        ours._cache.clear()
        return [ours.p_value(int(q[0]), int(q[1]), q[2:].tolist()) for b in batches for q in b]

    def causal_learn():
        test = CIT(x, "fisherz")
        return [test(int(q[0]), int(q[1]), q[2:].tolist()) for b in batches for q in b]

    times = time_interleaved(
        {"jax_batched": jax_batched, "jax_single": jax_single, "causal_learn": causal_learn},
        repeats=repeats,
    )
    p_ours = np.concatenate([np.asarray(p) for p in jax_batched()])
    p_cl = np.asarray(causal_learn())
    print(f"CI tests: n = {num_vars}, N = {num_samples}, {total} queries, |S| ≤ 3")
    print(f"{'method':14s} {'tests/s':>12s} {'speed-up vs causal-learn':>26s}")
    for name, t in times.items():
        print(f"{name:14s} {total / t:12.0f} {times['causal_learn'] / t:26.1f}")
    print(f"max |p_jax - p_causal_learn| = {np.max(np.abs(p_ours - p_cl)):.2e}\n")


def end_to_end(n: int, num_samples: int, repeats: int) -> None:
    adj = star_dag(n)
    w = random_weights(jax.random.key(0), adj)
    x = np.asarray(sample_linear_gaussian(jax.random.key(2), w, num_samples), np.float64)

    def run_ccpg():
        return ccpg(range(n), fisher_z_test(x))

    def run_pc():
        return pc_adjacency(n, fisher_z_test(x))

    times = time_interleaved({"ccpg": run_ccpg, "pc_stable": run_pc}, repeats=repeats)
    g = run_ccpg()
    ok_c = g.is_dag and set(g.to_dag().edges()) == {(i, n - 1) for i in range(n - 1)}
    ok_p = bool((run_pc() == adj).all())
    print(f"star DAG n = {n}, N = {num_samples}: end-to-end seconds (Fisher-z, α = 1e-3)")
    print(f"{'method':10s} {'seconds':>9s} {'recovered':>10s}")
    print(f"{'ccpg':10s} {times['ccpg']:9.3f} {ok_c!s:>10s}")
    print(f"{'pc_stable':10s} {times['pc_stable']:9.3f} {ok_p!s:>10s}")
    print(
        f"PC / CCPG time ratio: {times['pc_stable'] / times['ccpg']:.0f}x "
        "(reference README, n = 20: ≈ 6000x)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="≤ 1 minute")
    args = parser.parse_args(argv)
    if args.quick:
        ci_throughput(50, 100_000, per_size=500, repeats=3)
        end_to_end(10, 100_000, repeats=3)
    else:
        ci_throughput(50, 100_000, per_size=2500, repeats=5)
        end_to_end(12, 100_000, repeats=3)


if __name__ == "__main__":
    main()
