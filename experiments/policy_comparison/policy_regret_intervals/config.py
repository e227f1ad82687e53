"""Standard vs δ-regret intervals for comparing a proposed policy with the status quo.

Reproduces the synthetic experiments of Guerdan, Coston, Holstein, Wu (ICML 2024): a
sensitivity model MSM(Λ) with Λ ∈ {1, 1.4, 2} and N ∈ {1k, 5k, 20k}, and an instrument with
5 levels of two strengths; oracle, plug-in and doubly-robust (MSM) nuisances with 5-fold
cross-fitting (JAX logistic regression, vmapped over folds and replications); 20
replications. Reports interval widths, containment of the true regret and the cases where
only the δ-interval excludes 0.

Command: `jaxlab run policy_regret_intervals --preset quick`.
Budgets (``cpu_budget_s``, 2 CPU cores): smoke 15 s, quick 90 s, paper 600 s.
Paper numbers: the paper reports widths and coverage only in figures; the claims use the
stated results (δ tighter, valid coverage), see docs/policy_comparison.md.

Power (chosen before the run; ``jaxlab.report.power.seeds_for_power``, α = 0.05, power 0.8,
pilot: an earlier quick run, 20 replications). Width claims (paired): effects 0.275
(δ vs standard), 0.132 (Λ = 1.4 vs 2), 0.275 (IV strong vs weak) against per-replication
difference sds ≤ 0.0068 (√(s₁² + s₂²) of the pilot's sds) need n = 3 each. The tallied
IV row's power comes from a pilot that is not the judged run, ``jaxlab run
policy_regret_intervals --config.seed=1000`` (20 replications): against a smallest effect
worth a row of 0.047 (10 % of the weak instrument's width), the per-replication
difference sd 0.0016 gives power ≈ 1 at 20. DR coverage ≥
0.95 (one-sided): the pilot's coverage is 1.0 in every replication (sd 0), so the sd is
bounded by a binomial one at the threshold, √(0.95·0.05/10) = 0.069 for 10 cells per
replication; detecting a true coverage of 1.0 (effect 0.05) needs n = 14; the 20 vmapped
replications (power 0.93) run in one vmapped program.

Mesh (every preset): ``{"runs": -1}``: the replications are independent vmap lanes (a few MB
each at N = 50,000), so they split over every device (read by ``jaxlab plan``).

Presets: every one simulates its data (``datasets = ("generated",)``, the paper's synthetic
DGP). ``paper`` runs 100 replications on a wider grid (N up to 50,000, Λ ∈ {1, 1.2, 1.4,
1.7, 2}) with logistic nuisances; the reference code's gradient-boosting nuisances and
real-data case study differ (:data:`PAPER_SETTING`).
``jaxlab run policy_regret_intervals --preset paper --dry-run`` checks that program on one
replication at N = 1,000.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config

PAPER_SETTING = PaperSetting(
    datasets=("generated",),
    splits="synthetic selective-labels data (Gaussian X, U; multinomial instrument Z, "
    "|Z| = 5): MSM setting with μ0 = λ*·μ1, λ* ~ U(1, Λ); IV relevance and exclusion "
    "sweeps; plus a real-data healthcare enrolment case study (not public)",
    model="nuisances ê(x, z), μ̂1(x, z) by gradient boosting with K = 5 cross-fitting "
    "folds; oracle, plug-in and doubly-robust bounds; standard and δ-regret intervals",
    steps="20 replications per cell (results/*_GB_K5_N20.csv, msm_assumption_df_GB_NS20_"
    "L14.csv); 30 in the coverage experiment (Nsims = 30)",
    batch="N samples per replication (coverage sweep over N)",
    seeds=20,
    evaluation="interval widths, coverage of the true regret, cases where only the "
    "δ-interval excludes 0, for TPR/FPR-type, PPV/NPV-type and utility metrics",
    hardware="a CPU (scikit-learn and NumPy)",
    source="lguerdan/policy_comparison_under_confounding experiments.py (Nsims, K = 5, "
    "est_method plugin / dr / oracle) and results/*.csv names; arXiv 2404.00848 Sec. 6 as "
    "summarised in specs/policy_comparison.md",
    difference="nuisances by JAX logistic regression (Newton, ridge) instead of "
    "scikit-learn gradient boosting, so that the replications vmap; the paper preset runs "
    "100 replications (not 20-30) on a wider N × Λ grid; the real-data case study is not "
    "public and not run",
    steps_key="num_seeds",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.datasets = ("generated",)  # the paper's synthetic DGP (jaxlab.causal.policy)
    c.num_seeds = 20  # replications, vmapped
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 90, "paper": 600}[preset]
    c.sample_sizes = (1000, 5000, 20000)
    c.lambdas = (1.0, 1.4, 2.0)
    c.num_z = 5
    c.iv_strengths = (0.5, 2.0)  # loading of the instrument on the logit of D
    c.iv_samples = 5000
    c.reference_n = 5000  # N of the width claims
    c.coverage_n = 20000  # N of the coverage claim
    c.folds = 5
    c.newton_steps = 12
    c.ridge = 1e-3
    if preset == "smoke":
        c.num_seeds = 2
        c.sample_sizes = (1000,)
        c.iv_samples = 1000
        c.reference_n = 1000
        c.coverage_n = 1000
        c.newton_steps = 4
    if preset == "paper":
        c.num_seeds = 100
        c.sample_sizes = (1000, 5000, 20000, 50000)
        c.lambdas = (1.0, 1.2, 1.4, 1.7, 2.0)
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # the reference runs NumPy / scikit-learn float64 on a CPU; float32 here,
        # full-precision matmuls
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program on its smallest grid point: one sample size N = 1,000 for every
    cell (the MSM Λ grid reduced to the three Λ the claims read), the Newton steps kept."""
    del devices  # one replication per run; a grid point's rows are its N samples
    n = min(c.sample_sizes)
    c.sample_sizes = (n,)
    c.lambdas = (1.0, 1.4, 2.0)
    c.iv_samples = n
    c.reference_n = n
    c.coverage_n = n
    return c
