"""The two-step task: ViT with softmax, heat treatment and NormSoftmax; a CNN reference.

Reproduces, at CPU scale, Hoffmann et al. (ICML 2024): on the two-step task (2×2 tiles,
indicator digits {1, 2} decide which Fashion-MNIST target gives the label) a ViT with plain
softmax attention plateaus near the read-one-target ceiling before it learns the indicator
rule; heat treatment (attention scale 3.0 → 1/√d_h on a half-cosine over the first half)
and NormSoftmax (γ = √d_h, variance and std spreads) learn it more often and sooner. The
same ViT (patch 7 → 16 tokens; quick: depth 2, width 32, 2 heads of 16; paper preset: the
spec's depth 4, width 128, 2 heads of 64) and AdamW for every arm; a small CNN as the
no-plateau reference (paper preset only). Every arm also learns the intermediate step alone
(do the indicators agree?) in the same compiled program, metrics prefixed "intermediate_".
Differences from the paper: 28×28 grid of 14×14 tiles from scikit-learn digits and
Fashion-MNIST (no MNIST offline), a much smaller ViT, one learning rate for all arms, and
800 steps of batch 32 instead of 300 epochs (the shared 2-core machine allowed no more).

Command: ``jaxlab run eureka_two_step --preset quick`` (quick: 126 s wall on 2 idle CPU
cores, 5 seeds per arm vmapped, both tasks; smoke: mostly compilation of 3 arms).
Paper: "95 % of the baseline's performance in 20 % of the training steps" (abstract);
per-table values were not retrieved.

Seeds and power (before the run; every comparison is paired by seed, two-sided, α = 0.05,
``jaxlab.report.power``). Pilot: the committed quick result, 5 seeds. Steps to 95 % of
softmax's final accuracy: the abstract's effect is 80 % fewer steps (≈ 284 of softmax's
355), per-arm sd ≈ 95-147, so a paired-difference sd ≈ 170 gives 79 % power at 5 seeds (6
for 80 %). Intermediate step solved, heat vs softmax (0/1 per seed, exact sign test): 5
seeds can never reach p < 0.05 (the smallest p is 0.0625); 10 give 97 % if 8 in 10 favour
heat. Jump step on the intermediate step: effect ≈ 290 steps, sd ≈ 250: 50 % at 5 seeds (8
for 80 %). NormSoftmax's early ‖∂L/∂(W_Q, W_K)‖: effect ≈ 0.04, sd of the difference assumed
≈ 0.03: 61 % (7 seeds for 80 %). "Solved" on the two-step task: no seed solved it in the
pilot (sd 0), so no power can be computed; by the exact sign test, half the seeds solving it
where softmax solves none gives 0 % power at 5 seeds and 38 % at 10. Final accuracy
differences of 1 point (sd 0.016) would need 23. Budget trade-off: the quick run already
takes about twice its 150 s budget on the shared machine, so the seed count stays at 5; the
claims short of 80 % power are expected to end inconclusive unless the effect is larger than
the pilot's.

Mesh (every preset): ``{"runs": -1}``: the seeds of an arm are independent small ViTs (a few
MB each); they split over devices, the image sources replicated.
"""

import ml_collections

from jaxlab.report import base_config


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = {"smoke": 2, "quick": 5, "paper": 10}[preset]
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 30, "quick": 150, "paper": 7200}[preset]
    c.arms = ("softmax", "heat", "norm_softmax", "norm_softmax_std")
    if preset == "paper":  # the CNN reference curve (no claim uses it): XLA:CPU convolutions
        c.arms += ("cnn",)  # cost ≈ 0.16 s per seed-step, more than all ViT arms together
    if preset == "smoke":  # the arms the claims name; each arm costs one compilation
        c.arms = ("softmax", "heat", "norm_softmax")
    c.tile = 14
    c.color_noise = 0.05
    # "label": the two-step task; "same": the intermediate step alone (do the indicators
    # agree?), supervised directly, metrics prefixed "intermediate_". Both tasks share one
    # compiled program per arm (the task is a traced flag).
    c.tasks = ("label", "same")
    c.indicator_noise = 0.0  # the paper's task; softmax plateaus without extra noise
    c.patch_size = 7
    c.dim = {"smoke": 16, "quick": 32, "paper": 128}[preset]
    c.depth = {"smoke": 1, "quick": 2, "paper": 4}[preset]
    c.num_heads = 2
    c.mlp_dim = 2 * c.dim
    c.batch_size = {"smoke": 8, "quick": 32, "paper": 256}[preset]
    c.num_steps = {"smoke": 10, "quick": 800, "paper": 20000}[preset]
    # Checkpointed pieces of each (arm, task) run, each one compiled program (a divisor of
    # num_steps keeps it one compilation); every run is also checkpointed at its end, so a
    # killed quick run (≈ 15 s per run) resumes after its last finished run.
    c.segments = {"smoke": 1, "quick": 1, "paper": 20}[preset]
    # AdamW, linear warm-up then cosine decay to 0 over the whole run (decay_steps must equal
    # num_steps: override both), the same for every arm.
    c.optimizer = ml_collections.ConfigDict({
        "name": "adamw", "weight_decay": 0.05,
        "learning_rate": {"name": "warmup_cosine_decay_schedule", "init_value": 0.0,
                          "peak_value": 1e-3,
                          "warmup_steps": {"smoke": 2, "quick": 50, "paper": 1000}[preset],
                          "decay_steps": c.num_steps}})
    c.ht_init_scale = 3.0  # heat treatment: scale 3.0 → 1/√d_h over the first half
    c.eval_size = {"smoke": 32, "quick": 1000, "paper": 2000}[preset]
    c.solved_accuracy = 0.7  # clearly above the read-one-target ceiling (≈ 0.5)
    c.smooth = {"smoke": 3, "quick": 50, "paper": 200}[preset]  # moving average for curves
    return c
