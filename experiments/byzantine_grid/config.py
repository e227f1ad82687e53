"""byzantine_grid: aggregators × meta-aggregators × attacks × optimisers (Dahan & Levy 2024).

Reproduces the main comparison of "Fault Tolerant ML: Efficient Meta-Aggregation and
Synchronous Training" (ICML 2024, Tables 1–2 / Fig. 2): m = 17 workers, f = 8 Byzantine,
homogeneous data, a small CNN; base aggregators {mean, CWMed, CWTM, GM, Krum} × {plain, NNM,
bucketing, CTMA} × attacks {none, SF, LF, IPM, ALIE} × {worker momentum, μ²-SGD}; final test
accuracy and aggregation time per step.

Command: ``jaxlab run byzantine_grid`` (``--preset paper`` for Fashion-MNIST and the full grid).

Expected CPU time (2 cores): quick ≈ 6 min (one compilation per optimiser covers the whole
grid: every run is a ``vmap`` lane); paper ≈ several hours.

Quick preset: scikit-learn digits (8×8), a tiny CNN (4/8 channels, 3×3), 100 steps, 3 seeds,
and the 11 cells {mean} ∪ {CWMed, CWTM, GM, Krum} × {plain, CTMA} ∪ CWTM × {NNM, bucketing}:
every aggregator, every attack and both optimisers. Paper's numbers (MNIST, CWTM): CTMA and
NNM within ≈1 point of each other under every attack, μ²-SGD ≥ momentum, e.g. ALIE with
CWTM+CTMA ≈ 97–98 % test accuracy.
"""

import ml_collections

QUICK_CELLS = (
    "mean+plain",
    "cwmed+plain",
    "cwmed+ctma",
    "cwtm+plain",
    "cwtm+ctma",
    "cwtm+nnm",
    "cwtm+bucketing",
    "gm+plain",
    "gm+ctma",
    "krum+plain",
    "krum+ctma",
)
ALL_CELLS = tuple(
    f"{b}+{m}"
    for b in ("mean", "cwmed", "cwtm", "gm", "krum")
    for m in ("plain", "nnm", "bucketing", "ctma")
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    if preset not in ("quick", "paper"):
        raise ValueError(f"unknown preset {preset!r}; valid: quick, paper")
    c = ml_collections.ConfigDict()
    c.seed = 0
    c.num_seeds = 1  # the runs batch their seeds themselves (vmap): see seeds_per_cell
    c.seeds_per_cell = 3
    c.cpu_budget_s = 360 if preset == "quick" else 6 * 3600
    c.dataset = "digits" if preset == "quick" else "fashion_mnist"
    c.data_dir = ""
    c.num_workers = 17
    c.num_byzantine = 8
    c.batch_size = 4  # per worker (reference: 4)
    c.num_steps = 100 if preset == "quick" else 3000
    c.learning_rate = 0.1  # reference default
    c.momentum_beta = 0.9
    c.clip_norm = 2.0
    c.ipm_epsilon = 0.5  # reference CLI default
    c.features = (4, 8) if preset == "quick" else (16, 32)
    c.kernel_size = 3 if preset == "quick" else 5
    c.cells = QUICK_CELLS if preset == "quick" else ALL_CELLS
    c.attacks = ("none", "sf", "lf", "ipm", "alie")
    c.optimizers = ("momentum", "mu2sgd")
    c.timing_repeats = 20
    c.timing_dim = 100_000  # d of the CTMA-vs-NNM cost claim (the quick CNN has d ≈ 700)
    return c
