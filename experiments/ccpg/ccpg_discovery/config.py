"""CCPG vs PC-stable on linear-Gaussian SCMs (Shiragur, Zhang, Uhler, ICML 2024).

Reproduces (a) the number of CI tests and exact recovery with a d-separation oracle on the
star/collider DAG and on random DAGs whose edges all sit in v-structures, (b) the number of
samples each method needs to recover the 10-node star with a Fisher-z test (α = 1e-3),
(c) the end-to-end runtime on the star with 100k samples.

Command: `jaxlab run ccpg_discovery --preset quick`; the paper preset (stars up to n = 20 for
PC, CCPG to n = 100, 100k samples at n = 20 for the runtime) `jaxlab run ccpg_discovery
--preset paper`, its program on tiny graphs with `--dry-run`.
Expected CPU time (2 cores): smoke ≈ 10 s, quick ≈ 90 s, paper ≈ 1 h (PC on the star DAG
grows like n·2^(n-2) tests).
Paper numbers (reference README figures, read from plots): runtime at n = 20 — CCPG ≈ 0.06 s,
PC ≈ 360 s; samples to recover the 10-node DAG — CCPG ≈ 840, PC ≈ 840. The paper's own
result is the O(n⁵) bound on the number of tests.

Seeds (quick: 6), from a power calculation made before the run
(``jaxlab.report.power``) on an earlier 5-seed quick run:
- ``sample_ratio_ccpg_to_pc`` (TOST within ±0.25 of 1): that run's sd 0.16; each one-sided
  test must detect a distance of 0.25 to the band's edge, ``t_test_power(6, 0.25, 0.16,
  one_sided=True)`` = 0.95, so the TOST power at a true ratio of 1 is ≥ 2·0.95 − 1 = 0.89
  (5 seeds: 0.77). The power the row carries (``Claim.power``) is from a pilot that is not
  the judged run, ``jaxlab run ccpg_discovery --config.seed=1000`` (seeds 1000-1005): sd
  0.16, ``tost_power(6, 0, 0.25, 0.16)`` = 0.90 at a true ratio of 1 (the pilot's own mean
  ratio was 0.52).
- ``ccpg_runtime_s`` vs ``pc_runtime_s`` (paired t-test, two-sided; one min-of-3
  interleaved runtime per seed): the smallest effect worth a row is half of PC's pilot time.
  A separate pilot of this timing (the quick runtime part on pilot seeds 100-103, not the
  run's) gave PC 8.6 s on average and a CCPG − PC difference of
  −8.4 s with sd 2.3 s: ``seeds_for_power(4.31, 2.29)`` = 5 and ``t_test_power(6, 4.31,
  2.29)`` = 0.95 at quick's 6 seeds (kept: the sample-ratio claim above needs them).
- The oracle counts and recovery are exact (``deterministic``): seeds do not matter there.
  The oracle study runs ``deterministic_runs`` = 2 times, each computing every count afresh,
  and the verdict compares the two runs bit for bit before it compares the methods. Its
  three rows carry power 1: an exact comparison has no sampling error.
Budget: 6 seeds ≈ 75 s on the pilot's 63.5 s for 5 (one timed run per method and seed),
plus three more runs per method and seed for the min-of-3 runtime (PC's ≈ 1.4 s each at
n = 12 on an idle machine: ≈ 25 s), ≈ 100 s, and the oracle study's second run (≈ 17 s of
CPU), within ``cpu_budget_s`` = 120.

Mesh (every preset): ``{"runs": 1}``: the work is host code (CI tests in numpy and
causal-learn's PC), with no device arrays worth splitting, so ``train.py`` builds no mesh
and more devices would not speed it up (its only parallelism would be host processes over
seeds or graphs); ``jaxlab plan`` says so. A killed run resumes after its last finished
part (``jaxlab.train.resumable`` pieces under ``<workdir>/runs``, see ``train.py``).
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_ROWS_PER_DEVICE

PAPER_SETTING = PaperSetting(
    datasets=("generated",),
    splits="linear-Gaussian SCM on the star (collider) DAG, weights ±U(0.25, 1), standardised "
    "variables; fresh samples per run",
    model="CCPG vs PC, FCI, RFCI (pcalg), GSP, GSP+ with Fisher-z CI tests, α = 1e-3",
    steps="samples needed: N = 100, 200, … until the 10-node DAG is recovered (figure up to "
    "≈ 5000, GSP 8100); runtime: 100,000 samples, n ∈ {5, 10, 15, 20, 50, 100} (PC/FCI up "
    "to 20)",
    batch="100,000 samples (runtime); N per step (samples needed)",
    seeds=5,
    evaluation="runtime (mean ± sd of 5 reruns), samples to exact recovery, and the number of "
    "CI tests (the paper's O(n⁵) bound)",
    hardware="one CPU (not stated further)",
    source="reference code github.com/uhlerlab/CCPG: test_runtime.py (NNODES, RERUN = 5, "
    "N_SAMPLES = 100000), test_nsample.py (nnodes 10, N step 100, α 1e-3), README figures",
    difference="the same SCMs, CI test and α; CCPG and causal-learn's PC-stable only (no "
    "FCI, RFCI, GSP), runtime at n = 20 only, the sample sweep capped at N = 5000 and 6 "
    "seeds (from a power calculation) instead of 5 reruns of one seeded instance; oracle "
    "CI-test counts on stars (PC to n = 20, CCPG to n = 100) and random v-structure DAGs "
    "are ours",
    steps_key="n_max",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 6  # power calculation in the docstring
    c.batch_seeds = True
    c.mesh = {"runs": 1}
    c.cpu_budget_s = {"smoke": 15, "quick": 120, "paper": 3600}[preset]
    c.datasets = ("generated",)
    c.alpha = 1e-3
    # (a) oracle: CI-test counts on the star; exact recovery on random identifiable DAGs.
    c.star_ns = (6, 8, 10, 12)  # both methods (PC's cost limits the range)
    c.star_ns_ccpg = (5, 10, 20, 50)  # CCPG alone
    c.random_ns = (5, 10, 20)
    c.random_graphs_per_n = 5
    c.pc_random_max_n = 20
    c.deterministic_runs = 2  # the oracle study, twice: runs compared bit for bit
    # (b) samples needed on the n_sample_nodes-node star.
    c.n_sample_nodes = 10
    c.n_step = 100
    c.n_max = 3000
    # (c) runtime.
    c.runtime_nodes = 12
    c.runtime_samples = 100_000
    c.runtime_k = 3  # per seed: fastest of runtime_k interleaved calls of each method
    if preset == "smoke":
        c.num_seeds = 2
        c.star_ns = (4, 5, 6)
        c.star_ns_ccpg = (4,)
        c.random_ns = (5,)
        c.random_graphs_per_n = 2
        c.n_sample_nodes = 5
        c.n_step = 1000
        c.n_max = 1000
        c.runtime_nodes = 5
        c.runtime_samples = 2000
        c.runtime_k = 1
    if preset == "paper":
        c.star_ns = (6, 8, 10, 12, 14, 16, 18, 20)
        c.n_max = 5000
        c.star_ns_ccpg = (5, 10, 20, 50, 100)
        c.random_ns = (5, 10, 20, 30, 50)
        c.random_graphs_per_n = 10
        c.pc_random_max_n = 50
        c.runtime_nodes = 20
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # uhlerlab/CCPG runs NumPy float64 on a CPU; float32 here, full-precision matmuls
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """Every part of the paper program on its smallest graphs: stars of 4 and 5 nodes (CCPG
    alone: 5), 2 random 5-node DAGs, 2 steps of the sample sweep on the 5-node star, the
    runtime on 8 samples per device of it. (A host program: the graph sizes are its
    shapes, and PC on the paper's 20-node star takes hours.)"""
    c.star_ns = (4, 5)
    c.star_ns_ccpg = (5,)
    c.random_ns = (5,)
    c.random_graphs_per_n = 2
    c.pc_random_max_n = 5
    c.n_sample_nodes = 5
    c.n_step = 100
    c.n_max = 2 * c.n_step
    c.runtime_nodes = 5
    c.runtime_samples = DRY_RUN_ROWS_PER_DEVICE * devices
    c.runtime_k = 1
    return c
