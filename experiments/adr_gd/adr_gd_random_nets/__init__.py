"""ADR-GD vs gradient ascent (plain and with compute-matched restarts) on random ReLU MLPs."""

from jaxlab.report import Claim, Experiment

_SETTING = "random MLPs drawn like the reference's generator (JAX RNG), x0 = 0 on [-1, 1]^n"

EXPERIMENT = Experiment(
    name="adr_gd_random_nets",
    claims=(
        Claim(
            name="ADR-GD finds larger maxima than normalised GD (small nets)",
            metric="small_ratio_vs_gd", baseline="small_parity", paper=None,
            higher_is_better=True, unit="×", paired=True,
            setting=f"best_ADR / best_GD per network, [10, 64, 64, 1], T = 3000; {_SETTING}",
        ),
        Claim(
            name="ADR-GD beats GD with as many random restarts as its wall time buys (small)",
            metric="small_ratio_vs_restarts", baseline="small_parity", paper=None,
            higher_is_better=True, unit="×", paired=True,
            setting="restarts = measured time ratio ADR-GD / GD (first start x0 = 0); not in "
            "the paper",
        ),
        Claim(
            name="ADR-GD finds larger maxima than normalised GD (large nets)",
            metric="large_ratio_vs_gd", baseline="large_parity", paper=None,
            higher_is_better=True, unit="×", paired=True,
            setting=f"[128, 500, 500, 500, 1], large config, fewer networks at quick; {_SETTING}",
        ),
        Claim(
            name="ADR-GD beats compute-matched GD restarts (large nets)",
            metric="large_ratio_vs_restarts", baseline="large_parity", paper=None,
            higher_is_better=True, unit="×", paired=True,
            setting="restarts = measured time ratio ADR-GD / GD; not in the paper",
        ),
        Claim(
            name="ADR-GD value on the reference notebook's small network (seed 337550)",
            metric="ref_small_adr", paper=24.84, tolerance=1.7, test="matches",
            setting="mean over 20 noise keys (TOST) vs the notebook's one draw; tolerance = "
            "the reference code's own key-to-key range (it lands near 23.2 or 24.8); same "
            "network bit for bit (numpy stream), float32, JAX noise; source: "
            "randomized_network_input_optimization.ipynb stored output",
        ),
        Claim(
            name="GD value on the reference notebook's small network (seed 337550)",
            metric="ref_small_gd", paper=19.96, tolerance=0.5, test="matches",
            deterministic=True,
            setting="GD from x0 = 0 has no randomness; the reference returns f at the "
            "last-but-one iterate, so do we; source: the notebook's stored output",
        ),
        Claim(
            name="ADR-GD value on the reference notebook's large network (seed 499777)",
            metric="ref_large_adr", paper=34681.06, tolerance=1734.0, test="matches",
            setting="mean over 5 noise keys at quick (TOST), tolerance 5 % for the escape "
            "kicks' other noise; source: the notebook's stored output",
        ),
        Claim(
            name="GD value on the reference notebook's large network (seed 499777)",
            metric="ref_large_gd", paper=31236.47, tolerance=312.0, test="matches",
            deterministic=True,
            setting="deterministic, tolerance 1 % for float32 drift; source: the notebook's "
            "stored output",
        ),
    ),
)
