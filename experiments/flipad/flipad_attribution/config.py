"""FLIPAD single-model attribution, tabular miniature (Laszkiewicz et al., ICML 2024, Table 5).

Real data: scikit-learn breast cancer, standardised and squashed into (−1, 1) by tanh(x/2).
Generators: MLPs u ~ N(0, I) → ... → tanh(W z + b) with a p = 64 penultimate layer, fitted
to the real data with an MMD loss: the target G and G' share the architecture (different
seeds), H has another one (two hidden layers, ReLU). FLIPAD: Deep SAD on the anchored-lasso
reconstruction ẑ(x) of G's penultimate activation (FISTA, α = 5e-4); RawPAD: the identical
Deep SAD on the raw query. Deep SAD sees G's samples (unlabelled) and real data (labelled
anomalous); AUC of G's held-out samples against real test data, G' and H, clean and with
Gaussian noise on the queries.

Command: ``jaxlab run flipad_attribution --preset quick``; the paper preset (8 seeds, 5000
generator steps, 10,000 FISTA iterations as the reference's lasso) ``jaxlab run
flipad_attribution --preset paper``, its program with ``--dry-run``. The paper's tabular
generators and data are not run (see ``PAPER_SETTING``).
Budgets (``cpu_budget_s``, 2 CPU cores): smoke 15 s (mostly compilation), quick 50 s.
Paper numbers: Table 5 reports AUCs on the red- and white-wine data that do not transfer to this
setting; the claims compare FLIPAD with RawPAD in the same run.

Seeds (quick: 8), from a power calculation (``jaxlab.report.power``, paired t-test per
seed, α = 0.05, two-sided) on a 3-seed quick pilot of this code (ε = 1e-4), made before
the committed run. Smallest effect worth a row: 0.05 AUC. Pilot sd of the per-seed
differences FLIPAD − RawPAD: 0.042 (mean AUC), 0.043 (same architecture), 0.038 (noisy):
``seeds_for_power(0.05, 0.043)`` = 8 (power 0.80; 7 for the noisy row). The seeds after
the first share its compilation, so 8 seeds fit the quick budget (``cpu_budget_s`` 50).
The power each row carries (``Claim.power``) comes from a pilot that is not the judged
run, ``jaxlab run flipad_attribution --config.seed=1000`` (seeds 1000-1007): per-seed
difference sds 0.019 (mean AUC), 0.026 (same architecture), 0.025 (noisy) give power ≈ 1
at 8 seeds for a 0.05 AUC effect.

Mesh (every preset): ``{"data": -1}``: the seeds run one after another; the lasso inversion
(the costliest part) is independent per query, so the queries split over devices.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_ROWS_PER_DEVICE, DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("wine_quality/red", "wine_quality/white"),
    splits="5 repetitions per dataset (redwine_0..4, whitewine_0..4); 100,000 training, "
    "10,000 validation and 10,000 test samples per generator",
    model="target KL-WGAN (hinge) with a dense tanh last layer; outsiders TVAE, CTGAN, "
    "CopulaGAN and the real data; Deep SAD MLP 512-1024-512-256-128 → 32",
    steps="lasso: 10000 iterations (step 0.001, α 5e-4 red / 1e-4 white, 100 selected "
    "dimensions); Deep SAD: 100 epochs",
    batch="not stated for Deep SAD (reference default); lasso on all queries",
    seeds=5,
    evaluation="AUC of G's test samples against each outsider (Table 5), FLIPAD vs RawPAD and "
    "the l2-inversion baseline",
    hardware="one CUDA GPU",
    source="reference code github.com/MikeLasz/flipad: scripts/single_model_attribution/"
    "tabular.sh, scripts/training/train_tabular_models.sh, sma_deepsad_tabular.py; paper "
    "Table 5",
    difference="a miniature: scikit-learn breast cancer (569 × 30) as the real data and MMD-"
    "fitted MLP generators (target G, a same-architecture G' of another seed, another "
    "architecture H) instead of the wine data with KL-WGAN/TVAE/CTGAN/CopulaGAN (those "
    "generators are PyTorch/SDV models, their trained weights are not published); Deep SAD "
    "MLP (64, 16), 8 seeds, 10,000 FISTA iterations at α 5e-4",
    steps_key="lasso_iters",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 8  # power calculation in the docstring
    c.mesh = {"data": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 50, "paper": 3600}[preset]
    c.datasets = ("sklearn_breast_cancer",)
    c.latent_dim = 8
    c.penultimate = 64
    c.other_arch_hidden = 96  # H's first hidden layer (architecture b)
    c.mmd_scales = (0.5, 1.0, 2.0, 4.0)  # Gaussian-kernel bandwidths of the MMD loss
    c.anchor_draws = 2048  # samples of G whose mean penultimate activation is the anchor z̄
    c.tanh_eps = 1e-4  # x clipped to (−1 + ε, 1 − ε) before atanh, as the reference code
    c.gen_steps = 600
    c.gen_optimizer = ml_collections.ConfigDict({"name": "adam", "learning_rate": 3e-3})
    c.gen_batch = 128
    c.num_train = 400  # G's samples for Deep SAD training
    c.num_test = 150  # per class at test time
    c.alpha = 5e-4
    c.lasso_iters = 1000
    c.sad_features = (64, 16)
    c.sad_steps = 400
    c.sad_optimizer = ml_collections.ConfigDict(
        {"name": "adamw", "learning_rate": 1e-3, "weight_decay": 1e-6}
    )
    c.eta = 1.0
    c.query_noise = 0.01
    if preset == "smoke":
        c.num_seeds = 1
        c.gen_steps = 10
        c.num_train = 64
        c.num_test = 32
        c.lasso_iters = 20
        c.sad_steps = 10
    elif preset == "paper":
        c.num_seeds = 8
        c.gen_steps = 5000
        c.lasso_iters = 10_000
        c.sad_steps = 3000
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # MikeLasz/flipad trains without AMP or TF32 (PyTorch default: float32, no TF32 matmuls)
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program's generators and Deep SAD network; 2 steps of each fit and of the
    lasso, one G sample per device for training and per test class, generator batches and
    anchor draws of at most 8 rows per device."""
    rows = DRY_RUN_ROWS_PER_DEVICE * devices
    c.gen_steps = c.lasso_iters = c.sad_steps = DRY_RUN_STEPS
    c.num_train = c.num_test = devices
    c.gen_batch = min(c.gen_batch, rows)
    c.anchor_draws = min(c.anchor_draws, rows)
    return c
