"""The two-step task: ViT with softmax, heat treatment and NormSoftmax; a CNN reference.

Reproduces Hoffmann et al. (ICML 2024): on the two-step task (2×2 tiles, indicator digits
{1, 2} decide which Fashion-MNIST target gives the label) a ViT with plain softmax attention
plateaus near the read-one-target ceiling before it learns the indicator rule; heat
treatment (attention scale 3.0 → 1/√d_h on a half-cosine over the first half) and
NormSoftmax (γ = √d_h, variance and std spreads) learn it more often and sooner. The same
ViT and AdamW for every arm; a small CNN as the no-plateau reference (paper preset only).
Every arm also learns the intermediate step alone (do the indicators agree?) in the same
compiled program, metrics prefixed "intermediate_".

Presets. ``paper``: the reference code's setting (``PAPER_SETTING``): TFDS ``mnist`` and
``fashion_mnist`` 28×28 tiles (56×56 images; train splits for training, test splits for
evaluation), ViT patch 4, depth 7, 4 heads of 64, MLP ratio 2, AdamW (weight decay 0.05),
batch 512, 300 epochs of the 60,000 Fashion-MNIST training images (35,100 steps) with 5
warm-up epochs and a cosine to 1e-6, label smoothing 0.1, the README's peak learning rate
per arm. ``quick``/``smoke`` (CPU scale): a 28×28 grid of 14×14 tiles from scikit-learn
digits and Fashion-MNIST's test images (offline files), patch 7 → 16 tokens, a much
smaller ViT (quick: depth 2, width 32, 2 heads of 16), one learning rate for all arms and
800 steps of batch 32.

Command: ``jaxlab run eureka_two_step --preset quick`` (quick: 126 s wall on 2 idle CPU
cores, 5 seeds per arm vmapped, both tasks; smoke: mostly compilation of 3 arms). Paper:
``jaxlab run eureka_two_step --preset paper`` (an accelerator's run), its program at the
paper's shapes on mock data with ``--dry-run``.
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

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_ROWS_PER_DEVICE, DRY_RUN_STEPS

#: 300 epochs of the 60,000 Fashion-MNIST training images (one per two-step image, the
#: reference dataset's length) at batch 512 with the last partial batch dropped.
PAPER_STEPS = 300 * (60_000 // 512)

PAPER_SETTING = PaperSetting(
    datasets=("mnist", "fashion_mnist"),
    splits="training images from the MNIST and Fashion-MNIST train splits (an epoch: "
    "60,000 images, one per Fashion-MNIST target), validation from both test splits",
    model="ViT (timm) on 56×56 RGB: patch 4, depth 7, 4 heads × 64 dims, MLP ratio 2, no qkv "
    "bias; softmax, heat treatment (3.0 → 0.125, half-cosine over half the run), NormSoftmax",
    steps="300 epochs = 35100 steps of batch 512 (5 warm-up epochs, cosine to min-lr 1e-6)",
    batch="512",
    seeds=None,
    evaluation="accuracy on the test-split two-step images over training: the step of the "
    "jump, the share of runs that learn the intermediate step, final accuracy",
    hardware="GPUs (not stated in the code)",
    source="reference code github.com/boschresearch/eurekaMoments: README.md (commands and "
    "learning rates: softmax 5e-4, NormSoftmax 1e-5, HT 1e-4, min-lr 1e-6), main.py "
    "(defaults: batch 512, 300 epochs, patch 4, depth 7, 64 per head, 4 heads, MLP ratio 2, "
    "AdamW wd 0.05, drop-path 0.1, smoothing 0.1, 5 warm-up epochs), datasets.py "
    "(MNIST_SPACIAL_DECISION, length = Fashion-MNIST split)",
    difference="the same data, model, schedule and per-arm learning rates, but no drop-path "
    "and no RandAugment (jaxlab.nn.ViT has neither), images drawn fresh each step rather "
    "than as epochs over the Fashion-MNIST targets, 10 seeds per arm (the code's default "
    "is one seed), evaluation on 2000 test-split images instead of all 10,000, and float32 "
    "compute where the reference trains under float16 autocast (jaxlab.nn.ViT takes no "
    "dtype)",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = {"smoke": 2, "quick": 5, "paper": 10}[preset]
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 30, "quick": 150, "paper": 7200}[preset]
    # paper: TFDS mnist + fashion_mnist (jaxlab.data.two_step.load_two_step_sources_tfds);
    # quick/smoke: scikit-learn digits + the offline Fashion-MNIST files.
    c.datasets = (
        ("mnist", "fashion_mnist") if preset == "paper" else ("sklearn_digits", "fashion_mnist_idx")
    )
    c.arms = ("softmax", "heat", "norm_softmax", "norm_softmax_std")
    if preset == "paper":  # the CNN reference curve (no claim uses it): XLA:CPU convolutions
        c.arms += ("cnn",)  # cost more per seed-step than all ViT arms together
    if preset == "smoke":  # the arms the claims name; each arm costs one compilation
        c.arms = ("softmax", "heat", "norm_softmax")
    c.tile = 28 if preset == "paper" else 14
    c.color_noise = 0.05
    # "label": the two-step task; "same": the intermediate step alone (do the indicators
    # agree?), supervised directly, metrics prefixed "intermediate_". Both tasks share one
    # compiled program per arm (the task is a traced flag).
    c.tasks = ("label", "same")
    c.indicator_noise = 0.0  # the paper's task; softmax plateaus without extra noise
    c.patch_size = 4 if preset == "paper" else 7
    c.dim = {"smoke": 16, "quick": 32, "paper": 256}[preset]
    c.depth = {"smoke": 1, "quick": 2, "paper": 7}[preset]
    c.num_heads = 4 if preset == "paper" else 2
    c.mlp_dim = 2 * c.dim
    c.batch_size = {"smoke": 8, "quick": 32, "paper": 512}[preset]
    c.num_steps = {"smoke": 10, "quick": 800, "paper": PAPER_STEPS}[preset]
    # Checkpointed pieces of each (arm, task) run, each one compiled program (a divisor of
    # num_steps keeps it one compilation); every run is also checkpointed at its end, so a
    # killed quick run resumes after its last finished run.
    c.segments = {"smoke": 1, "quick": 1, "paper": 30}[preset]
    # AdamW, linear warm-up then cosine decay over the whole run (decay_steps must equal
    # num_steps: override both) to 0 (paper: to the reference's min-lr 1e-6).
    c.optimizer = ml_collections.ConfigDict(
        {
            "name": "adamw",
            "weight_decay": 0.05,
            "learning_rate": {
                "name": "warmup_cosine_decay_schedule",
                "init_value": 0.0,
                "peak_value": 5e-4 if preset == "paper" else 1e-3,
                "warmup_steps": {"smoke": 2, "quick": 50, "paper": 5 * (60_000 // 512)}[preset],
                "decay_steps": c.num_steps,
            },
        }
    )
    if preset == "paper":
        c.optimizer.learning_rate.end_value = 1e-6
        # eurekaMoments engine.py: torch.cuda.amp.autocast() (float16) with a NativeScaler;
        # float32 compute here, as jaxlab.nn.ViT takes no dtype; PyTorch default matmuls
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    # Peak learning rate per arm (replacing optimizer.learning_rate.peak_value); empty: one
    # rate for all. Paper: the reference README's (softmax and the CNN keep 5e-4).
    c.arm_peak_lr = ml_collections.ConfigDict(
        {"heat": 1e-4, "norm_softmax": 1e-5, "norm_softmax_std": 1e-5} if preset == "paper" else {}
    )
    c.label_smoothing = 0.1 if preset == "paper" else 0.0
    c.ht_init_scale = 3.0  # heat treatment: scale 3.0 → 1/√d_h over the first half
    c.eval_size = {"smoke": 32, "quick": 1000, "paper": 2000}[preset]
    c.solved_accuracy = 0.7  # clearly above the read-one-target ceiling (≈ 0.5)
    c.smooth = {"smoke": 3, "quick": 50, "paper": 200}[preset]  # moving average for curves
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper's ViTs and CNN at their shapes (56×56 images, patch 4, depth 7); 2 steps in
    one piece, one evaluation batch, no smoothing of the 2-step curves. The seed (and its
    padding copies) fill the ``runs`` axis, one run per device, so a run's batch of 8
    images is 8 rows per device. XLA's cheapest compile (``fast_compile``), as at smoke."""
    del devices
    c.fast_compile = True  # a dry run is compile-bound, as smoke
    c.num_steps = DRY_RUN_STEPS
    c.segments = 1
    c.batch_size = min(c.batch_size, DRY_RUN_ROWS_PER_DEVICE)
    c.eval_size = c.batch_size
    c.optimizer.learning_rate.warmup_steps = 1
    c.optimizer.learning_rate.decay_steps = c.num_steps
    c.smooth = 1
    return c
