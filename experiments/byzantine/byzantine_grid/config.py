"""byzantine_grid: aggregators × meta-aggregators × attacks × optimisers (Dahan & Levy 2024).

Reproduces the main comparison of "Fault Tolerant ML: Efficient Meta-Aggregation and
Synchronous Training" (ICML 2024, Tables 1–2 / Fig. 2): m = 17 workers, f = 8 Byzantine,
homogeneous data, a small CNN; base aggregators {mean, CWMed, CWTM, GM, Krum} × {plain, NNM,
bucketing, CTMA} × attacks {none, SF, LF, IPM, ALIE} × {worker momentum, μ²-SGD}; final test
accuracy and aggregation time per step.

Command: ``jaxlab run byzantine_grid`` (``--preset paper`` for MNIST and CIFAR-10 and the full
grid; ``jaxlab run byzantine_grid --preset paper --dry-run`` checks that program on mock data).

Expected CPU time (2 cores, ``cpu_budget_s``): quick ≈ 8 min (one compilation per
optimiser covers the whole grid: each cell is one call of it, with attacks × seeds as its
``vmap`` lanes); paper ≈ several hours.

Quick preset: scikit-learn digits (8×8, 1437 train / 360 test), an MLP 64 → 64 → 10 (ReLU;
d = 4810 parameters, the size the aggregators work on), 200 steps, 16 examples per worker
per step, server learning rate 0.3, 3 seeds, and the 11 cells {mean} ∪ {CWMed, CWTM, GM,
Krum} × {plain, CTMA} ∪ CWTM × {NNM, bucketing}: every aggregator, every attack and both
optimisers. Without attack (mean, momentum, one seed) it reaches 95 % test accuracy (see
docs/byzantine.md). The paper preset runs the full grid on the reference code's two
benchmarks, TFDS ``mnist`` and ``cifar10`` (read with ``open_source``, normalised as the
reference does, CIFAR-10 minibatches randomly cropped with padding 2 and flipped), with the
reference's CNN (16/32 channels, 5×5, without its BatchNorm), batch 4 per worker and learning
rate 0.1; the MNIST results keep the plain keys, CIFAR-10's are prefixed ``cifar10/``.

Paper's numbers: Tables 1–2 of the paper (MNIST / CIFAR-10, per aggregator × attack) are
not available offline, so no per-cell number is quoted; the
claims carry the paper's qualitative statements (CTMA ≈ NNM, μ²-SGD ≥ momentum).

Mesh (every preset): ``{"runs": -1}``: the lanes (runs) are independent and outnumber a
node's devices, so they split over all of them without communication; the 17 workers of a
run stay on its device.

Seeds (power calculation, ``jaxlab.report.power.seeds_for_power``, α = 0.05, the
committed quick pilot's sds as upper bounds on the paired sd): CTMA vs
plain, effect 1 point, sd ≤ 2.9 → 67 seeds; CTMA − NNM equivalence within ±2 points, sd ≤
0.93 → 4 seeds; worst-attack accuracy, effect 2 points, sd ≤ 9.6 → 182 seeds; best
combination, effect 1 point, sd ≤ 1.9 → 32 seeds. The quick grid keeps 3 seeds (the grid
already costs ≈ 8 min), so its comparative claims are underpowered at ``quick`` by design.
CTMA vs NNM cost (paired t-test, two-sided, one min-of-20 interleaved timing per seed at
d = 1e5): the effect worth a row is half of NNM's cost; a separate pilot of this timing
(pilot seeds 100-104, not the run's) gave NNM 13.7 ms on average and a
CTMA − NNM difference of −9.6 ms with sd 7.1 ms, so ``t_test_power(3, 6.87, 7.08)`` = 0.17
at quick (3 seeds) and ``seeds_for_power(6.87, 7.08)`` = 11 seeds; quick keeps 3, the row
says it is underpowered there. The per-cell ``agg_ms/<cell>`` timings (every cell at the
model's size, for the plots and tables) stay one min-of-k sample per run: no claim reads
them.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("mnist", "cifar10"),
    splits="MNIST 60,000 train / 10,000 test; CIFAR-10 50,000 train / 10,000 test",
    model="SimpleConvMNIST / SimpleConvCIFAR: conv 5×5 16 → BN → ReLU → pool, conv 5×5 32 → "
    "BN → ReLU → pool, linear (float64 in the reference)",
    steps="the reference CLI's default is one epoch (main.py --epoch_num 1: 882 iterations "
    "of 17 × 4 on MNIST, 735 on CIFAR-10); the paper's figures' horizon not stated there",
    batch="4 per worker, 17 workers (8 Byzantine): 68 per step",
    seeds=None,
    evaluation="test accuracy of the final model per (aggregator, meta-aggregator, attack, "
    "optimiser)",
    hardware="one GPU (reference code: single process simulating the workers)",
    source="reference code github.com/dahan198/synchronous-fault-tolerant-ml: main.py "
    "defaults, mlopt/dataset/{mnist,cifar10}.py, mlopt/model/simple_conv_*.py",
    difference="the CNN has no BatchNorm (per-worker batch statistics would make the "
    "simulated workers stateful) and runs in float32; 3000 steps of uniformly sampled "
    "minibatches instead of one shuffled epoch; RFA (GM) with Krum beside it; 3 seeds",
    steps_key="num_steps",
)

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
    c = base_config(preset)
    c.num_seeds = 3
    c.batch_seeds = True  # seeds are vmap lanes inside one call
    # Runs over every device (see the docstring); a ``workers`` axis, e.g. {"runs": 2,
    # "workers": -1}, gathers every step's 17 rows for the aggregator: worth it only for
    # models far larger than these.
    c.mesh = {"runs": -1}
    c.cpu_budget_s = 480 if preset != "paper" else 6 * 3600
    # Datasets: scikit-learn digits (jaxlab's TFDS builder) or TFDS names; each is a grid.
    c.datasets = ("digits",) if preset != "paper" else ("mnist", "cifar10")
    c.num_workers = 17
    c.num_byzantine = 8
    # Model: "mlp" (quick: d = 4810) or "cnn" (the reference's MNIST layout, paper preset).
    c.model = "mlp" if preset != "paper" else "cnn"
    c.hidden = (64,)  # MLP hidden widths
    c.batch_size = 16 if preset != "paper" else 4  # per worker (reference: 4)
    c.num_steps = 200 if preset != "paper" else 3000
    c.learning_rate = 0.3 if preset != "paper" else 0.1  # reference default 0.1
    c.momentum_beta = 0.9
    c.beta_floor = 0.01  # μ²-SGD: STORM's β_t floor (reference code)
    c.gamma_floor = 0.01  # μ²-SGD: AnyTime's γ_t floor (reference code)
    c.clip_norm = 2.0
    c.ipm_epsilon = 0.5  # reference CLI default
    c.features = (16, 32)  # CNN channels (model = "cnn")
    c.kernel_size = 5
    c.cells = QUICK_CELLS if preset != "paper" else ALL_CELLS
    c.attacks = ("none", "sf", "lf", "ipm", "alie")
    c.optimizers = ("momentum", "mu2sgd")
    # Aggregation cost: fastest of timing_k interleaved calls per rule (time_min_of_k), per
    # seed for the CTMA-vs-NNM claim, once per run for every cell at the model's size.
    c.timing_k = 20
    c.timing_dim = 100_000  # d of the CTMA-vs-NNM cost claim (the quick MLP has d = 4810)
    if preset == "smoke":  # seconds: the quick code path at toy sizes
        c.num_steps = 2
        c.hidden = (8,)
        c.batch_size = 4
        c.cells = ("cwtm+plain", "cwtm+ctma", "cwtm+nnm")
        c.attacks = ("none", "lf")
        c.num_seeds = 2
        c.timing_k = 1
        c.timing_dim = 1000
        c.cpu_budget_s = 30
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # the reference's main.py runs float64 (.double()); float32 here, full-precision matmuls
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program at its model shapes: 2 steps, one example per worker, one cell
    (CTMA over CWTM), one timed call."""
    del devices  # a run's 17 rows are below 8 per device
    c.num_steps = DRY_RUN_STEPS
    c.batch_size = 1
    c.cells = ("cwtm+ctma",)
    c.timing_k = 1
    c.timing_dim = 1000
    return c
