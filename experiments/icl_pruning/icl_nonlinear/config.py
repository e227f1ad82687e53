"""ICL of a one-layer nonlinear transformer on binary pattern tasks, and magnitude pruning.

Reproduces the synthetic experiments of Li, Wang, Lu, Cui, Chen (ICML 2024): orthonormal
IDR/IDI patterns in ℝ^20 (M1 = 4, M2 = 16), tasks = ordered pairs of IDR patterns; train on
6 pairs covering every pattern, test on the 6 reversed pairs (labels flipped, so only the
demonstrations can tell) and on OOD tasks from μ' = (μ1 + μ2)/√2, (μ3 + μ4)/√2 with rotated
irrelevant patterns. F(P) with m = 32 ReLU neurons, SGD on the hinge loss; test error vs
prompt length l and α, against the weighted-vote reference and the untrained model; error
vs pruning rate (smallest / random / largest ‖W_O,i‖ first); attention mass on
same-pattern demonstrations over training.

Command: ``jaxlab run icl_nonlinear --preset quick`` (quick: ≈ 2-3 min on 2 busy CPU cores,
5 seeds vmapped; smoke: ≈ 15 s). The paper's constants (d, m, l, M1, M2, κ) were not retrieved
(unverified); the values here are the spec's small setting. No paper numbers are quoted.
"""

import ml_collections

from jaxlab.report import base_config


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = {"smoke": 2, "quick": 5, "paper": 10}[preset]
    c.batch_seeds = True
    c.cpu_budget_s = {"smoke": 15, "quick": 90, "paper": 900}[preset]
    c.dim = 20
    c.num_relevant = 4
    c.num_irrelevant = 16
    c.num_neurons = 32
    c.kappa = 0.5  # κ ~ U[−0.5, 0.5] (unverified)
    c.noise = 0.3  # per-coordinate Gaussian noise on every input (unverified)
    c.train_length = 20
    c.train_alphas = (0.3, 0.5, 0.7)  # α of each training prompt drawn from these
    c.learning_rate = 1.0
    c.batch_size = 32
    c.num_steps = {"smoke": 20, "quick": 1000, "paper": 10000}[preset]
    c.init_scale = 1.0
    c.lengths = (5, 10, 20, 40)
    c.alphas = (0.3, 0.5, 0.7)
    c.eval_prompts = {"smoke": 32, "quick": 256, "paper": 2000}[preset]
    c.prune_rates = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    c.prune_length = 20
    c.prune_alpha = 0.5
    c.mass_prompts = 32  # prompts for the attention-mass curve (every step)
    return c
