"""GADC Table 2 (adaptive attacks): Aux-Attack on GCN and GADC(IV), and our own PGD.

Main rows — the paper's protocol (Liu et al., ICML 2024, Section 4.1 and Table 2; the
reference's ``Adaptive_Adversarial_Attack/{gcn,gadc}.py``, built on Mujkanovic et al.'s
``gb`` package): Cora (Pro-GNN largest component, identical to ``gb``'s), Mujkanovic et
al.'s stratified 10/10/80 splits, a linear two-layer GCN (hidden 16, dropout on the hidden
layer, Glorot init, Adam lr 1e-2, wd 5e-4, patience 50) trained on ``A`` (GCN) or on
GADC(IV)'s ``T = cos ⊙ A + I`` (GADC; K = 2 propagation steps without the k = 0/1 terms),
attacked by Aux-Attack: ``jaxlab.graph.attacks.pgd_structure_attack`` minimizing the tanh
margin of the test nodes (200 steps, ``base_lr`` 0.1, best of 100 samples, 1000 flips);
evasion and poisoning test accuracy. Extra row (paper preset): the same attack
differentiated through GADC's cosine re-weighting (``through_cosine``).

Second rows (diagnostics, no paper claim) — our own white-box PGD (the same kernel,
maximizing each model's cross-entropy against training/self-training labels, budget as a
rate of the edge count) against GCN (ReLU), APPNP and GADC(IV) + MLP on the Pro-GNN split;
20 % in quick, 5/10/20 % and poisoning in paper.

Seeds (power calculation, made before the run; ``jaxlab.report.power``): the paper runs
split 0 once, and the committed quick result (one split) has no spread, so there is no
pilot sd. One sample per split; GADC and GCN share each split, so the claims are paired
t-tests on the per-split differences. Effect = the paper's gaps, 12.3 points (evasion,
72.03 − 59.71) and 21.7 (poisoning, 70.73 − 48.99). With n = 3 splits (the verdict rule's
minimum) a two-sided paired test at α = 0.05 has power ≥ 0.8 as long as the sd of the
per-split difference is ≤ 3.7 points (evasion) / ≤ 6.6 points (poisoning)
(``t_test_power(3, 12.32, 3.7) = 0.81``); a quick run gave sds of
0.5 / 1.35. Each split costs one Aux-Attack protocol, so 3 splits are what quick's budget
(``cpu_budget_s`` 420) allows; the paper preset runs all 5 splits. The "matches" claims
(TOST within 3 points of Table 2) have power at n = 3 only when the spread is small (an sd
of about 1 point or less), which the pilot below shows.
The powers the rows carry (``Claim.power``) are from a pilot that is not the judged run,
``jaxlab run gadc_adaptive --config.seed=1000``: the same three splits (the paper preset
runs splits 3-4 too), with other model initialisations, dropout and attack samples. Its sds
(each of 3 values, so rough): per-split differences 1.2 (evasion) and 0.90 (poisoning), so
``t_test_power(3, 12.32, 1.24)`` and ``t_test_power(3, 21.74, 0.90)`` are 1.0; the
"matches" rows' accuracies 0.96 / 0.29 (evasion GADC / GCN) and 0.20 / 0.70 (poisoning),
so ``tost_power(3, 0, 3, sd)`` at a true value equal to the paper's = 0.90 / 1.0 and
1.0 / 0.99.
Our PGD rows: one model seed in quick (diagnostics, never decisive), 5 in paper.

Presets: every preset reads the Pro-GNN files of the data directory (``prognn_files``:
``jaxlab data fetch prognn``; ``gb``'s Cora and Citeseer are the same graphs).

Command: ``jaxlab run gadc_adaptive``; the paper program's dry run:
``jaxlab run gadc_adaptive --preset paper --dry-run``.
Budgets (``cpu_budget_s``, 2 CPU cores): quick 420 s (3 splits × 2 Aux-Attacks of 200 PGD
steps on the 2485×2485 relaxed adjacency are most of it), paper 4500 s (Cora and Citeseer,
5 splits, the through-cosine variant, all budgets, poisoning for our PGD too).
Paper (Table 2, Cora / Citeseer): evasion GCN 59.71 / 62.78, GADC(IV) 72.03 / 72.94;
poisoned GCN 48.99 / 46.98, GADC(IV) 70.73 / 68.36.

Mesh (every preset): ``{"runs": 1}``: the (dataset, split) jobs run one after another, each
a dense attack on a graph of at most 2.5k nodes (tens of MB): one device holds it whole.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("prognn_files",),
    splits="Cora and Citeseer (Pro-GNN largest connected component = gb's graphs), "
    "Mujkanovic et al.'s stratified 10/10/80 split 0 (gb.data.get_splits)",
    model="linear 2-layer GCN (hidden 16, dropout on the hidden layer, Glorot init) on A "
    "(GCN) or on GADC(IV)'s T = cos ⊙ A + I (K = 2)",
    steps="Aux-Attack: 200 PGD iterations (base_lr 0.1, best of 100 samples, 1000 flips); "
    "fits: Adam lr 1e-2, L2 5e-4, at most 3000 epochs, patience 50",
    batch="full graph",
    seeds=1,
    evaluation="evasion and poisoning test accuracy after the attack on the test nodes",
    hardware="one GPU (gb's CUDA kernels)",
    source="Table 2; Adaptive_Adversarial_Attack/{gcn,gadc}.py (on gb, Mujkanovic et al. "
    "2022) of github.com/SongtaoLiu0823/GADC",
    difference="runs gb's splits 0-4 where the reference runs split 0 once (a spread for the "
    "claims' paired tests); adds the attack differentiated through GADC's cosine "
    "re-weighting and our own PGD rows as extra diagnostics",
    steps_key="attack_iterations",
)


def _adam(learning_rate: float, l2_weight_decay: float) -> ml_collections.ConfigDict:
    """Adam with L2 weight decay added to the gradient (``torch.optim.Adam(weight_decay=)``,
    the reference code's optimiser): the entry ``trainer.make_l2_optimizer`` builds."""
    return ml_collections.ConfigDict(
        dict(name="adam", learning_rate=learning_rate, l2_weight_decay=l2_weight_decay)
    )


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    quick = preset != "paper"
    c = base_config(preset)
    c.batch_seeds = True  # the splits / seeds are looped over inside one call
    c.mesh = {"runs": 1}
    c.cpu_budget_s = 420 if quick else 4500
    c.select = "val_loss"  # model selection of the second rows' trainers
    c.datasets = ("prognn_files",)
    c.attack_iterations = 200  # Aux-Attack's PGD steps
    # The paper's protocol (Table 2): Aux-Attack as in the reference scripts.
    c.aux = ml_collections.ConfigDict(
        dict(
            datasets=("cora",) if quick else ("cora", "citeseer"),
            splits=(0, 1, 2) if quick else (0, 1, 2, 3, 4),  # of gb.data.get_splits (power above)
            budget=1000,
            base_lr=0.1,
            sampling_tries=100,
            max_draws=100,
            max_candidates=400_000,  # sampler shortcut only (falls back to all pairs)
            hidden=16,
            dropout=0.5,
            activation="none",
            input_dropout=False,
            init_scheme="glorot",
            optimizer=_adam(1e-2, 5e-4),
            max_epochs=3000,
            patience=50,
            poisoning=True,
            # "through_cosine" (the attack also differentiated through GADC's cosine
            # re-weighting) costs a third attack: paper preset only (quick's budget).
            gadc_variants=("reference",) if quick else ("reference", "through_cosine"),
        )
    )
    c.num_seeds = len(c.aux.splits)
    # Our own PGD (second rows, diagnostics).
    c.dataset = "cora"
    c.max_nodes = 0  # 0: the whole graph (smoke: a subgraph of the first nodes)
    c.pgd = ml_collections.ConfigDict(
        dict(
            num_seeds=1 if quick else 5,
            budgets=(0.2,) if quick else (0.05, 0.1, 0.2),
            iterations=20 if quick else 100,
            base_lr=0.2,  # × budget/√t: 0.2 · 1013 ≈ a step of 200 at the 20 % budget
            sampling_tries=5 if quick else 20,
            max_draws=20,
            poisoning=not quick,
        )
    )
    c.gadc = ml_collections.ConfigDict(
        dict(
            lam=1.0,
            num_terms=6,
            hidden=32,
            optimizer=_adam(0.02, 1e-5),
            epochs=100,
            dropout=0.5,
            init_scheme="reference",
        )
    )
    c.gcn = ml_collections.ConfigDict(
        dict(
            hidden=16,
            optimizer=_adam(0.01, 5e-4),
            epochs=200,
            dropout=0.5,
            activation="relu",
            input_dropout=True,
            init_scheme="default",
        )
    )
    c.appnp = ml_collections.ConfigDict(
        dict(
            hidden=64, optimizer=_adam(0.01, 5e-4), epochs=200, alpha=0.1, num_terms=10, dropout=0.5
        )
    )
    if preset == "smoke":  # seconds: the quick code path and grid at toy sizes
        c.max_nodes = 300
        c.attack_iterations = 2
        c.aux.sampling_tries = 2
        c.aux.max_epochs = 3
        c.aux.patience = 1
        c.pgd.iterations = 2
        c.pgd.sampling_tries = 1
        c.gadc.epochs = 3
        c.gcn.epochs = 3
        c.appnp.epochs = 3
        c.appnp.num_terms = 2
        c.gadc.num_terms = 1
        c.cpu_budget_s = 15
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # SongtaoLiu0823/GADC sets no AMP or TF32 (PyTorch default: float32, no TF32 matmuls)
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program in seconds: both graphs, every model and attack variant at its real
    size, one split, :data:`DRY_RUN_STEPS` PGD iterations, fit epochs and epochs of our PGD
    rows' trainers, one budget; the whole graph is each trainer's batch."""
    del devices  # full-batch: the batch is the graph
    c.aux.splits = c.aux.splits[:1]
    c.num_seeds = len(c.aux.splits)
    c.attack_iterations = c.pgd.iterations = DRY_RUN_STEPS
    c.aux.sampling_tries = c.pgd.sampling_tries = 1
    c.aux.max_epochs = DRY_RUN_STEPS
    c.aux.patience = 1
    c.pgd.num_seeds = 1
    c.pgd.budgets = c.pgd.budgets[:1]
    c.gadc.epochs = c.gcn.epochs = c.appnp.epochs = DRY_RUN_STEPS
    return c
