"""MC Ensemble vs naive Deep Ensemble vs a 3×-wider model for OOD detection on digits.

Command: ``jaxlab run mc_ensemble_ood --preset quick``.
CPU time on 2 cores: smoke ≈ 15 s, quick ≈ 1-2 min, paper ≈ 10 min.
Paper numbers: the paper evaluates CIFAR-10 / ImageNet ResNets; its numbers were not
retrieved, so every claim here compares arms of our own run.

Seeds (quick: 10), from a power calculation (``jaxlab.report.power``, paired t-test,
α = 0.05, two-sided) made before the run on the committed 5-seed pilot. The sd of the
per-seed differences is bounded by √(sd_a² + sd_b²) (the arms share seeds, so a positive
correlation only lowers it). Smallest effects worth a row: 2 points of FPR95, 0.5 points
of AUROC, 0.05 of coupling / CKA / barrier.
- FPR95 far-OOD (sd ≤ 1.3 / 1.1): 6 / 5 seeds; AUROC near/far (sd ≤ 0.41-0.45): 8-9 seeds;
  coupling, CKA (sd ≤ 0.036, 0.022): 7, 4 seeds; barrier (sd ≤ 0.061): 14 seeds.
- FPR95 near-OOD (sd ≤ 2.3 vs naive, 2.6 vs wide): 13 / 16 seeds.
Trade-off: 10 seeds (≈ 2 × the pilot's 68 s, within the quick budget) give power ≥ 0.88
for every AUROC and far-OOD row and ≥ 0.97 for coupling/CKA, but only
``t_test_power(10, 2, 2.3)`` = 0.68 (vs naive) and 0.57 (vs wide) for near-OOD FPR95 and
0.64 for the barrier, at the upper-bound sd; an inconclusive row there may be power.

Mesh (every preset): ``{"runs": -1}``: the members (seeds × 6) are independent runs of a
small MLP on a replicated 8×8-digit training set, so they split over every device (read by
``jaxlab plan``).
"""

import ml_collections

from jaxlab.report import base_config


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 10  # power calculation in the docstring
    c.batch_seeds = True  # all seeds × members trained in one vmapped program
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 150, "paper": 600}[preset]
    c.hidden = (128, 64)  # encoder widths; the last is the feature dimension
    c.wide_factor = 3  # the single baseline model's widths are this many times larger
    c.proj_dim = 32  # contrastive projection head
    c.num_classes = 5  # ID = digits 0..4
    c.batch_size = 128
    c.train_steps = 600
    c.probe_steps = 300
    # Checkpointed pieces of the members' (and the wide models') training: a killed run
    # resumes from the last piece (quick: one every ~20-40 s on 2 cores).
    c.segments = 4
    # Every member (and the wide model): minibatch CE / SupCon / SimCLR on augmented views.
    c.optimizer = ml_collections.ConfigDict({"name": "adam", "learning_rate": 1e-3})
    # The linear probes on frozen features: full-batch cross-entropy.
    c.probe_optimizer = ml_collections.ConfigDict({"name": "adam", "learning_rate": 1e-2})
    c.temperature = 0.1  # SupCon and SimCLR
    c.noise_std = 0.1  # augmentation: Gaussian pixel noise and ±max_shift pixel shifts
    c.max_shift = 1
    c.data_seed = 0  # the fixed ID split and the far-OOD subsample (the same for every seed)
    c.split_fractions = (0.6, 0.7)  # ID digits: train = [0, 0.6), val = [0.6, 0.7), test
    c.knn_k = 5
    c.num_far = 500  # Fashion-MNIST test images (8×8) and uniform-noise images, each
    c.barrier_points = 11
    if preset == "smoke":
        c.num_seeds = 2
        c.train_steps = 20
        c.probe_steps = 20
        c.segments = 1  # each piece is one compile
        c.num_far = 50
        c.barrier_points = 3
    if preset == "paper":
        c.train_steps = 3000
        c.probe_steps = 1000
        c.segments = 10
        c.num_far = 2000
    return c
