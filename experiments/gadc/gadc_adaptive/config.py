"""Our PGD topology attack (Xu et al. 2019, in JAX) against GCN, APPNP and GADC(IV).

Direction check of Table 2 of Liu et al. (ICML 2024, adaptive attacks): on the clean
Pro-GNN Cora graph each model is trained, then attacked white-box (evasion) by projected
gradient ascent on a relaxed adjacency with a budget of 5/10/20% of the edges; the loss
uses training labels and the model's own predictions elsewhere (no test labels). The
paper preset also retrains each model on its attacked graph (poisoning).

Command: ``jaxlab run gadc_adaptive``.
Expected CPU time (2 cores): quick ≈ 7 min on a loaded 2-core box (1 seed, 20 PGD steps),
paper ≈ 30 min.
Paper: GADC is more robust than GCN/APPNP under adaptive attacks (direction only).
"""

import ml_collections

from jaxlab.report import base_config


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    quick = preset != "paper"
    c = base_config(preset)
    c.num_seeds = 1 if quick else 5
    c.cpu_budget_s = 410 if quick else 1800
    c.dataset = "cora"
    c.budgets = (0.05, 0.1, 0.2)
    c.pgd_steps = 20 if quick else 100
    c.pgd_lr = 200.0
    c.pgd_samples = 5 if quick else 20
    c.poisoning = not quick
    c.gadc = ml_collections.ConfigDict(dict(lam=1.0, num_terms=6, hidden=32, lr=0.02,
                                            weight_decay=1e-5, epochs=100, dropout=0.5))
    c.gcn = ml_collections.ConfigDict(dict(hidden=16, lr=0.01, weight_decay=5e-4, epochs=200,
                                           dropout=0.5))
    c.appnp = ml_collections.ConfigDict(dict(hidden=64, lr=0.01, weight_decay=5e-4,
                                             epochs=200, alpha=0.1, num_terms=10,
                                             dropout=0.5))
    if preset == "smoke":  # seconds: the quick code path and grid at toy sizes
        c.pgd_steps = 2
        c.pgd_samples = 1
        c.poisoning = False
        c.gadc.epochs = 3
        c.gcn.epochs = 3
        c.appnp.epochs = 3
        c.appnp.num_terms = 2
        c.gadc.num_terms = 1
        c.cpu_budget_s = 60
    return c
