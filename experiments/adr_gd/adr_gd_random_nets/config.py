"""ADR-GD vs gradient ascent on random ReLU MLPs (Yu & Gao, ICML 2024, reference notebook).

Command: ``jaxlab run adr_gd_random_nets --preset quick``.
CPU time on 2 cores: smoke ≈ 10 s, quick ≈ 2-3 min, paper ≈ 15 min.
Paper numbers: the reference notebook's single-seed outputs (small net GD 19.96 vs ADR-GD
24.84; large net 31236 vs 34681); the paper itself reports no random-network table.
"""

import ml_collections

from jaxlab.report import base_config

SMALL_HPARAMS = dict(lr=0.5, lr_sigma=1.0, lr_c=1e-2, noise_scale=0.1, grad_threshold=1e-4,
                     perturb_freq=25, c_reduce_rate=1e-2)
LARGE_HPARAMS = dict(lr=0.5, lr_sigma=1.25, lr_c=1e-4, noise_scale=0.35, grad_threshold=1e-2,
                     perturb_freq=25, c_reduce_rate=1e-2)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 1
    c.batch_seeds = False
    c.cpu_budget_s = {"smoke": 15, "quick": 150, "paper": 900}[preset]
    c.small_sizes = (10, 64, 64, 1)
    c.large_sizes = (128, 500, 500, 500, 1)
    c.small_nets = 50
    c.large_nets = 10
    c.num_steps = 3000
    c.gd_restarts = -1  # -1: as many as ADR-GD's measured wall time buys
    c.reference_seeds = (337550, 499777)  # the reference notebook's networks
    c.small = ml_collections.ConfigDict(SMALL_HPARAMS)
    c.large = ml_collections.ConfigDict(LARGE_HPARAMS)
    if preset == "quick":
        c.large_nets = 3
    if preset == "smoke":
        c.small_nets = 4
        c.large_nets = 1
        c.num_steps = 100
    return c
