"""ADR-GD vs gradient ascent (plain and with compute-matched restarts) on random ReLU MLPs."""

import math

from jaxlab.report import Claim, Experiment

_SETTING = "random MLPs drawn like the reference's generator (JAX RNG), x0 = 0 on [-1, 1]^n"

EXPERIMENT = Experiment(
    name="adr_gd_random_nets",
    claims=(
        Claim(
            name="ADR-GD finds larger maxima than normalised GD (small nets)",
            metric="small_ratio_vs_gd",
            power=1.0,
            bounds=(0.0, math.inf),
            unit_of_replication="networks",
            baseline="small_parity",
            paper=None,
            higher_is_better=True,
            unit="×",
            paired=True,
            setting=f"best_ADR / best_GD per network, [10, 64, 64, 1], T = 3000; {_SETTING}",
        ),
        Claim(
            name="ADR-GD beats GD with as many random restarts as its wall time buys (small)",
            metric="small_ratio_vs_restarts",
            power=1.0,
            bounds=(0.0, math.inf),
            unit_of_replication="networks",
            baseline="small_parity",
            paper=None,
            higher_is_better=True,
            unit="×",
            paired=True,
            setting="restarts = measured time ratio ADR-GD / GD (first start x0 = 0); not in "
            "the paper",
        ),
        Claim(
            name="ADR-GD finds larger maxima than normalised GD (large nets)",
            metric="large_ratio_vs_gd",
            power=0.87,
            bounds=(0.0, math.inf),
            unit_of_replication="networks",
            baseline="large_parity",
            paper=None,
            higher_is_better=True,
            unit="×",
            paired=True,
            setting=f"[128, 500, 500, 500, 1], large config, fewer networks at quick; {_SETTING}",
        ),
        Claim(
            name="ADR-GD beats compute-matched GD restarts (large nets)",
            metric="large_ratio_vs_restarts",
            power=0.38,
            bounds=(0.0, math.inf),
            unit_of_replication="networks",
            baseline="large_parity",
            paper=None,
            higher_is_better=True,
            unit="×",
            paired=True,
            setting="restarts = measured time ratio ADR-GD / GD; not in the paper",
        ),
        Claim(
            name="ADR-GD value on the reference notebook's small network (seed 337550)",
            metric="ref_small_adr",
            power=0.62,
            threshold=24.84,
            tolerance=1.242,
            test="draw",
            bounds=(0.0, math.inf),
            unit_of_replication="noise keys",
            threshold_source="the reference notebook's stored output "
            "(randomized_network_input_optimization.ipynb), one noise draw; no paper number; "
            "margin ±5 % of it, the smallest difference worth reporting",
            setting="is the notebook's one draw equivalent to a typical draw of our 20 noise "
            "keys within ±5 % (exact sign TOST of our median; the values are bimodal, near "
            "23.2 or 24.8 from key to key); same network bit for bit (numpy stream), "
            "float32, JAX noise",
        ),
        Claim(
            name="GD value on the reference notebook's small network (seed 337550)",
            metric="ref_small_gd",
            threshold=19.96,
            tolerance=0.5,
            test="matches",
            deterministic=True,
            unit_of_replication="runs",
            power=1.0,
            bounds=(0.0, math.inf),
            threshold_source="the reference notebook's stored output; tolerance 0.5 for "
            "float32 drift",
            setting="GD from x0 = 0 has no randomness; the reference returns f at the "
            "last-but-one iterate, so do we; source: the notebook's stored output",
        ),
        Claim(
            name="ADR-GD value on the reference notebook's large network (seed 499777)",
            metric="ref_large_adr",
            power=0.999,
            threshold=34681.06,
            tolerance=1734.05,
            test="draw",
            bounds=(0.0, math.inf),
            unit_of_replication="noise keys",
            threshold_source="the reference notebook's stored output, one noise draw; no "
            "paper number; margin ±5 % of it, the smallest difference worth reporting",
            setting="is the notebook's one draw equivalent to a typical draw of our noise "
            "keys within ±5 % (exact sign TOST of our median; 5 keys at quick: all 5 "
            "inside the band are needed)",
        ),
        Claim(
            name="GD value on the reference notebook's large network (seed 499777)",
            metric="ref_large_gd",
            threshold=31236.47,
            tolerance=312.0,
            test="matches",
            deterministic=True,
            unit_of_replication="runs",
            power=1.0,
            bounds=(0.0, math.inf),
            threshold_source="the reference notebook's stored output; tolerance 1 % for "
            "float32 drift",
            setting="deterministic, tolerance 1 % for float32 drift; source: the notebook's "
            "stored output",
        ),
    ),
)
