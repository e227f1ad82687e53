"""FLIPAD single-model attribution, tabular miniature (Laszkiewicz et al., ICML 2024, Table 5).

Real data: scikit-learn breast cancer, standardised and squashed into (−1, 1) by tanh(x/2).
Generators: MLPs u ~ N(0, I) → ... → tanh(W z + b) with a p = 64 penultimate layer, fitted
to the real data with an MMD loss: the target G and G' share the architecture (different
seeds), H has another one (two hidden layers, ReLU). FLIPAD: Deep SAD on the anchored-lasso
reconstruction ẑ(x) of G's penultimate activation (FISTA, α = 5e-4); RawPAD: the identical
Deep SAD on the raw query. Deep SAD sees G's samples (unlabelled) and real data (labelled
anomalous); AUC of G's held-out samples against real test data, G' and H, clean and with
Gaussian noise on the queries.

Command: ``jaxlab run flipad_attribution --preset quick``.
Expected CPU time on 2 cores: smoke ≈ 15 s (mostly compilation), quick ≈ 1 min per seed
(measured 586 s for 3 seeds on a heavily shared 2-core machine).
Paper numbers: Table 5 reports AUCs on census-type tabular data that do not transfer to this
setting; the claims compare FLIPAD with RawPAD in the same run.

Seeds (quick: 8), from a power calculation (``jaxlab.report.power``, paired t-test per
seed, α = 0.05, two-sided) on a 3-seed quick pilot of this code (ε = 1e-4), made before
the committed run. Smallest effect worth a row: 0.05 AUC. Pilot sd of the per-seed
differences FLIPAD − RawPAD: 0.042 (mean AUC), 0.043 (same architecture), 0.038 (noisy):
``seeds_for_power(0.05, 0.043)`` = 8 (power 0.80; 7 for the noisy row). Budget: ≈ 5 s per
extra seed after the first's compilation, so ≈ 45 s for 8 seeds (``cpu_budget_s`` 50).

Mesh (every preset): ``{"data": -1}``: the seeds run one after another; the lasso inversion
(the costliest part) is independent per query, so the queries split over devices.
"""

import ml_collections

from jaxlab.report import base_config


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 8  # power calculation in the docstring
    c.mesh = {"data": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 50, "paper": 3600}[preset]
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
        {"name": "adamw", "learning_rate": 1e-3, "weight_decay": 1e-6})
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
    return c
