"""CCPG vs causal-learn's PC (stable): test counts, recovery, samples needed, runtime.

A host program: every finished part (a star size, a random-DAG size, a seed's samples
needed, the runtime study) is a :func:`jaxlab.train.resumable` piece (saved atomically under
``<workdir>/runs`` and read back by a rerun of the same config), so a killed run resumes
after its last finished part with the same numbers. The oracle study (a) runs
``config.deterministic_runs`` times, each run computing its own pieces, and its
deterministic values (growth exponents, counts on the largest star, recovery fractions) are
lists with one value per run. The oracle CI-test counts of the first run are saved as the
run's final checkpoint (``<workdir>/checkpoints``).
"""

from __future__ import annotations

import functools

import jax
import ml_collections
import numpy as np
from tqdm import tqdm

from jaxlab.causal import (
    CountingCITest,
    ccpg,
    d_separation_oracle,
    dag_edges,
    fisher_z_test,
    random_vstructure_dag,
    random_weights,
    sample_linear_gaussian,
    star_dag,
)
from jaxlab.causal.baselines import pc_adjacency
from jaxlab.train import Checkpointer, resumable, time_min_of_k
from jaxlab.train.plan import PlanSpec


def _ccpg_ok(adj, ci) -> bool:
    g = ccpg(range(adj.shape[0]), ci)
    return g.is_dag and set(g.to_dag().edges()) == dag_edges(adj)


def _pc_ok(adj, ci) -> bool:
    return bool((pc_adjacency(adj.shape[0], ci) == adj).all())


def _count(method, adj) -> tuple[int, bool]:
    ci = CountingCITest(d_separation_oracle(adj))
    ok = method(adj, ci)
    return ci.num_distinct, ok


def _samples_needed(method, adj, weights, key, config) -> float:
    """Smallest N (fresh samples at each step, as the reference) at which ``method`` recovers."""
    for step, n in enumerate(range(config.n_step, config.n_max + 1, config.n_step)):
        x = sample_linear_gaussian(jax.random.fold_in(key, step), weights, n)
        if method(adj, fisher_z_test(np.asarray(x, np.float64), config.alpha)):
            return float(n)
    return float("nan")


def _random_dags(config: ml_collections.ConfigDict, n: int) -> dict:
    """Oracle CI-test counts and exact recovery of both methods on the random identifiable
    DAGs with ``n`` nodes (PC only up to ``pc_random_max_n``)."""
    out: dict = {"tests": [], "recovered": [], "pc_tests": [], "pc_recovered": []}
    for g in range(config.random_graphs_per_n):
        adj = random_vstructure_dag(n, jax.random.key(1000 * n + g + config.seed))
        c, ok = _count(_ccpg_ok, adj)
        out["recovered"].append(float(ok))
        out["tests"].append(float(c))
        if n <= config.pc_random_max_n:
            p, ok_p = _count(_pc_ok, adj)
            out["pc_recovered"].append(float(ok_p))
            out["pc_tests"].append(float(p))
    return out


def _fisher_z_run(method, adj, x, alpha: float) -> bool:
    """``method`` on ``adj`` with a Fisher-z test built on ``x`` (memo empty): one end-to-end
    run, as timed."""
    return method(adj, fisher_z_test(x, alpha))


def _runtimes(config: ml_collections.ConfigDict) -> dict:
    """(c) end-to-end runtime on the star, one sample per seed: on that seed's samples,
    each method (its Fisher-z test built inside the call) run once untimed (its recovery,
    and the warm-up: compilation is not part of the runtime), then the fastest of
    ``runtime_k`` interleaved calls of CCPG and PC (``time_min_of_k``)."""
    adj = star_dag(config.runtime_nodes)
    t_c, t_p, ok_c, ok_p = [], [], [], []
    for s in range(config.seed, config.seed + config.num_seeds):
        key = jax.random.key(10_000 + s)
        w = random_weights(jax.random.fold_in(key, 0), adj)
        x = np.asarray(sample_linear_gaussian(key, w, config.runtime_samples), np.float64)
        runs = {
            "ccpg": functools.partial(_fisher_z_run, _ccpg_ok, adj, x, config.alpha),
            "pc": functools.partial(_fisher_z_run, _pc_ok, adj, x, config.alpha),
        }
        ok_c.append(float(runs["ccpg"]()))
        ok_p.append(float(runs["pc"]()))
        times = time_min_of_k(runs, k=config.runtime_k, warmup=0)
        t_c.append(times["ccpg"])
        t_p.append(times["pc"])
    return {
        "ccpg_runtime_s": t_c,
        "pc_runtime_s": t_p,
        "ccpg_runtime_recovered": ok_c,
        "pc_runtime_recovered": ok_p,
    }


def _oracle_study(config: ml_collections.ConfigDict, part, run: int) -> dict:
    """(a) oracle CI-test counts on the stars and exact recovery on the random DAGs, as run
    ``run`` of ``config.deterministic_runs``: each run computes every piece afresh (its own
    pieces, ``_run<run>``), so the deterministic claims compare runs bit for bit."""
    out: dict = {}
    ccpg_counts, pc_counts = [], []
    for n in tqdm(config.star_ns, desc=f"star: tests (run {run})"):
        counts = part(
            f"star_n{n}_run{run}",
            lambda n=n: {
                "ccpg": _count(_ccpg_ok, star_dag(n))[0],
                "pc": _count(_pc_ok, star_dag(n))[0],
            },
        )
        c, p = float(counts["ccpg"]), float(counts["pc"])
        ccpg_counts.append(c)
        pc_counts.append(p)
        out[f"ccpg_tests_star_n{n}"] = c
        out[f"pc_tests_star_n{n}"] = p
    logn = np.log(np.asarray(config.star_ns, dtype=float))
    out["ccpg_tests_growth_exponent"] = float(np.polyfit(logn, np.log(ccpg_counts), 1)[0])
    out["pc_tests_growth_exponent"] = float(np.polyfit(logn, np.log(pc_counts), 1)[0])
    out["ccpg_tests_star_pcmax"] = ccpg_counts[-1]
    out["pc_tests_star_pcmax"] = pc_counts[-1]
    for n in config.star_ns_ccpg:
        done = part(
            f"star_ccpg_n{n}_run{run}",
            lambda n=n: dict(zip(("tests", "ok"), _count(_ccpg_ok, star_dag(n)), strict=True)),
        )
        out[f"ccpg_tests_star_n{n}"] = float(done["tests"])
        out[f"ccpg_star_recovered_n{n}"] = float(done["ok"])

    recovered, pc_recovered = [], []
    for n in tqdm(config.random_ns, desc=f"random DAGs (run {run})"):
        graphs = {
            k: v.tolist()
            for k, v in part(f"random_n{n}_run{run}", lambda n=n: _random_dags(config, n)).items()
        }
        recovered += graphs["recovered"]
        pc_recovered += graphs["pc_recovered"]
        if graphs["pc_tests"]:
            out[f"pc_tests_random_n{n}"] = graphs["pc_tests"]
        out[f"ccpg_tests_random_n{n}"] = graphs["tests"]
    # One exact fraction over the fixed set of graphs (the graphs are not seeds).
    out["ccpg_oracle_recovered_per_graph"] = recovered
    out["pc_oracle_recovered_per_graph"] = pc_recovered
    out["ccpg_oracle_recovery"] = float(np.mean(recovered))
    if pc_recovered:
        out["pc_oracle_recovery"] = float(np.mean(pc_recovered))
    return out


# The deterministic values: one sample per run of the oracle study.
_PER_RUN = (
    "ccpg_tests_growth_exponent",
    "pc_tests_growth_exponent",
    "ccpg_tests_star_pcmax",
    "pc_tests_star_pcmax",
    "ccpg_oracle_recovery",
    "pc_oracle_recovery",
)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """(a) oracle CI-test counts and recovery, ``config.deterministic_runs`` times, (b)
    samples needed, (c) runtime; each part a resumable piece of ``workdir``."""

    def part(name, compute):
        return resumable(workdir, name, config, compute)

    # (a) the oracle study: the first run's per-size values, every run's deterministic ones.
    runs = [_oracle_study(config, part, run) for run in range(config.deterministic_runs)]
    out = dict(runs[0])
    for key in _PER_RUN:
        if key in out:
            out[key] = [r[key] for r in runs]
    star_counts = {
        "ccpg_tests_star": np.asarray([out[f"ccpg_tests_star_n{n}"] for n in config.star_ns]),
        "pc_tests_star": np.asarray([out[f"pc_tests_star_n{n}"] for n in config.star_ns]),
    }

    # (b) samples needed on the star, Fisher-z.
    adj = star_dag(config.n_sample_nodes)
    need_c, need_p = [], []
    for s in tqdm(range(config.seed, config.seed + config.num_seeds), desc="samples"):

        def needed(s=s):
            key = jax.random.key(s)
            w = random_weights(jax.random.fold_in(key, 0), adj)
            return {
                name: _samples_needed(method, adj, w, jax.random.fold_in(key, k), config)
                for k, name, method in ((1, "ccpg", _ccpg_ok), (2, "pc", _pc_ok))
            }

        need = part(f"samples_seed{s}", needed)
        need_c.append(float(need["ccpg"]))
        need_p.append(float(need["pc"]))
    out["ccpg_samples_needed"] = need_c
    out["pc_samples_needed"] = need_p
    out["sample_ratio_ccpg_to_pc"] = [c / p for c, p in zip(need_c, need_p, strict=True)]

    # (c) runtime end to end.
    out.update({k: v.tolist() for k, v in part("runtime", lambda: _runtimes(config)).items()})

    checkpoints = Checkpointer(workdir)
    if checkpoints.latest_step() is None:
        checkpoints.save(len(config.star_ns), star_counts)
    checkpoints.close()
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: a host program (CI tests in numpy and causal-learn's PC), so
    nothing is compiled; the plan names what dominates its time. A run is a seed of the
    samples-needed and runtime parts, a step one sample size of the sweep."""
    del mesh
    n = max(config.star_ns)
    return PlanSpec.host(
        f"causal-learn's PC-stable on the {n}-node star DAG (about n·2^(n−2) = "
        f"{n * 2 ** (n - 2):,} oracle CI tests, growing ×2 per node), then Fisher-z tests on "
        f"{config.runtime_samples:,} samples of the {config.runtime_nodes}-node star",
        steps_per_run=len(range(config.n_step, config.n_max + 1, config.n_step)),
        num_runs=config.num_seeds,
        note="CCPG and PC with oracle and Fisher-z CI tests on the CPU (numpy, causal-learn)",
    )
