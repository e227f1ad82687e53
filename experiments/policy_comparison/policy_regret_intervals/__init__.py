"""Standard vs δ-regret intervals under a sensitivity model and an instrument (synthetic)."""

from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="policy_regret_intervals",
    claims=(
        Claim(
            name="δ-regret intervals are never wider than standard ones",
            metric="frac_delta_not_wider",
            paper=1.0,
            tolerance=0.0,
            setting="all metrics, assumptions, N, estimators and replications; paper: "
            "stated as a result (no number)",
        ),
        Claim(
            name="δ-regret intervals are much tighter",
            metric="width_delta",
            baseline="width_standard",
            higher_is_better=False,
            setting="oracle nuisances, MSM Λ = 2, N = 5k, mean width over 5 metrics; "
            "paper: figures only",
        ),
        Claim(
            name="oracle intervals contain the true regret",
            metric="oracle_coverage_delta",
            paper=1.0,
            tolerance=0.0,
            setting="true regret from the simulated outcome model; MSM and IV settings",
        ),
        Claim(
            name="estimated (DR, cross-fit) δ-intervals cover near the nominal rate",
            metric="dr_coverage_delta",
            paper=0.95,
            tolerance=0.05,
            setting="N = 20k, Λ ∈ {1.4, 2}, JAX logistic nuisances, K = 5 folds; intervals "
            "without sampling margin (as the reference)",
        ),
        Claim(
            name="widths shrink as Λ → 1",
            metric="width_delta_lambda_1p4",
            baseline="width_delta_lambda_2",
            higher_is_better=False,
            setting="oracle nuisances, N = 5k",
        ),
        Claim(
            name="widths shrink with a stronger instrument",
            metric="width_delta_iv_strong",
            baseline="width_delta_iv_weak",
            higher_is_better=False,
            setting="|Z| = 5 levels, instrument loading 2 vs 0.5 on the logit of D, oracle",
        ),
        Claim(
            name="only the δ-interval excludes 0 in some cases",
            metric="frac_only_delta_excludes_zero",
            baseline="frac_only_standard_excludes_zero",
            setting="fraction of (setting, metric, replication) cases, all estimators",
        ),
    ),
)
