"""CurBench on images: every curriculum and the baseline through one trainer, three settings.

Reproduces at small scale Table 3 of Zhou et al., "CurBench: Curriculum Learning
Benchmark" (ICML 2024): a LeNet-style CNN on Fashion-MNIST (Debian package
``dataset-fashion-mnist``; a training subset with a fixed validation split, the test split)
under the standard, noise-0.4 and imbalance-50 settings, Adam 1e-3, the test accuracy of
the best-validation epoch, and the wall time of each method relative to the baseline.

Command: ``jaxlab run curbench_vision --preset quick`` (quick: 640 training images at
14×14, 5 epochs, 3 seeds, 15 curricula and the baseline × 3 settings; smoke: 100 images,
1 epoch, 2 seeds, the baseline and LRE, mostly XLA compiles). Paper's numbers (ResNet-18
on CIFAR-10, Table 3, best of 15 curricula): standard 92.33 → 92.88, noise-0.4 82.75 →
86.92, imbalance-50 75.49 → 76.43 (LeNet: 69.95 → 70.43, 65.02 → 65.93, 44.93 → 45.28);
meta-gradient methods 4–7× the cost (Table 8a). The
``paper`` preset is CurBench's CIFAR-10 LeNet setting: TFDS ``cifar10`` normalised with
CurBench's statistics, 40,000 training / 5,000 validation images from the training split
(5,000 more for the teacher of TTCL, C2F and Adaptive CL), the 10,000 test images, Adam at
a constant 1e-4, batch 50, 200 epochs, 5 seeds, the 15 curricula and the baseline in the
three settings, checkpoints every 50 steps (``jaxlab run curbench_vision --preset paper``;
``--dry-run`` checks it on mock data; ``--config.dataset=cifar100 --config.datasets=
"('cifar100',)"`` runs CIFAR-100).

Seeds and power (before the run; two-sided paired t-tests by seed, one-sided for the cost
bound, α = 0.05, ``jaxlab.report.power``). The seed count came from an earlier 3-seed quick
run (noise-0.4: the paper's +4.17 points against its per-seed gain sd 0.56 had power ≈ 1;
standard's +0.55 and imbalance's +0.94 needed 52 and 19 seeds, beyond the budget). The power
each row carries (``Claim.power``) is from a pilot that is not the judged run, ``jaxlab run
curbench_vision --config.seed=1000`` (seeds 1000-1002), for the paper's effect on each row:
noise-0.4, +4.17 against the pilot's paired sd 2.95: 29 % at 3 seeds (7 for 80 %);
standard, +0.55 against 0.62: 15 % (13 seeds); imbalance, +0.94 against 2.80: 7 % (72
seeds); noise gain vs standard gain, 3.6 against 3.29: 20 % (9 seeds). Every non-timing
row is underpowered at 3 seeds and its row says so.
Cost (at least 4×, the paper's lower bound, the
baseline's epoch, per method): no per-method pilot (the committed metric pooled three
methods and three settings: mean 2.50, sd 0.29); against that sd an effect of 0.5 gives 61 %
at 3 seeds (4 for 80 %). Each seed gives one ratio: on that seed's inputs, every method's
epoch is the fastest of ``timing_repeats`` (5) interleaved calls after a warm-up (min-of-k,
``jaxlab.train.time_min_of_k``); load only ever adds time, so the per-seed ratios of one
method are expected to vary less than the pooled pilot. Budget trade-off: the timing adds
four one-seed compiles and 5 interleaved rounds per seed to the quick run (budget 460 s), so
the seed count stays at 3.

Mesh (every preset): ``{"runs": -1}``: the seeds of a (setting, method) run are independent
small models (a few MB each with the training set); they split over devices (padded to
them; on one device the program is the unsplit one, numbers unchanged). The teacher and the
cost timing run one seed on the default device.

Nothing lost mid-run: every finished (setting, method) run, all its seeds, is saved to
``<workdir>/runs/<setting>__<method>-<digest>.json`` and the cost ratios to
``timing.json``; a killed run resumes at the next unfinished run. ``chunk_steps`` (paper:
50) adds orbax checkpoints inside a run every that many steps, resumed mid-epoch.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

from .. import REFERENCE_SCHEDULES

# CurBench's 15 curricula and the baseline.
METHODS = (
    "baseline",
    "spl",
    "ttcl",
    "mcl",
    "lgl",
    "c2f",
    "dihcl",
    "adaptive_cl",
    "efficient_train",
    "cbs",
    "screener_net",
    "lre",
    "mw_net",
    "dcl",
    "dds",
    "superloss",
)
META_METHODS = ("lre", "mw_net", "dds")

PAPER_SETTING = PaperSetting(
    datasets=("cifar10", "cifar100", "tiny_imagenet"),
    splits="training split 9:1 into train / validation, the test split for testing",
    model="LeNet, ResNet-18, ViT",
    steps="200 epochs",
    batch="50",
    seeds=5,
    evaluation="test accuracy of the best-validation epoch; standard, noise-0.4 and "
    "imbalance-50 settings; training time and peak memory",
    hardware="NVIDIA GPUs (Table 8: one run per GPU)",
    source="CurBench paper §4 and Table 3; github.com/THUMNLab/CurBench "
    "curbench/datasets/vision/cifar10.py (valid_ratio 0.1, RandomCrop(32, 4), flip)",
    difference="the paper preset runs CIFAR-10 with the LeNet (CIFAR-100 by override; "
    "Tiny-ImageNet is not a TFDS dataset; ResNet-18 and ViT are not wired); 40,000 / 5,000 "
    "train / validation images and 5,000 for the teacher instead of 45,000 / 5,000; no "
    "random-crop / flip augmentation (the trainer holds fixed arrays)",
    steps_key="num_epochs",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 25, "quick": 460, "paper": 3 * 3600}[preset]
    c.methods = METHODS
    c.settings = ("standard", "noise", "imbalance")
    c.noise_rate = 0.4
    c.imbalance_ratio = 50.0
    c.num_train = 640
    c.num_val = 500
    c.num_test = 1000
    c.num_teacher = 1000  # the teacher (TTCL, C2F, Adaptive CL): a LeNet on a clean split
    c.dataset = "fashion_mnist"  # or a TFDS name: "cifar10", "cifar100"
    c.datasets = ("fashion_mnist",)
    c.image_size = 14  # 28: full resolution; 14: 2×2 average-pooled
    c.channels = 1
    c.num_epochs = 5
    c.batch_size = 50
    # The reference's optimiser; its learning rate is also the meta look-ahead step.
    c.optimizer = ml_collections.ConfigDict({"name": "adam", "learning_rate": 1e-3})
    c.eval_batch_size = 500  # evaluation chunk (one compiled program for every split)
    c.seed_batching = "map"
    c.chunk_steps = None  # paper: checkpoint every 50 steps, resume mid-epoch
    # Per-method hyper-parameters (the reference's defaults, epochs scaled to the run).
    c.spl_start_rate = 0.2
    c.reference_epochs = 200  # the reference's schedules are written for 200 epochs
    c.reference_schedules = ml_collections.ConfigDict(REFERENCE_SCHEDULES)
    c.grow_fraction = 0.5  # pacing reaches the whole set at this fraction of the epochs
    # The cost claim: one epoch of each meta-gradient method over the baseline's, per seed,
    # standard setting, same model and data: the fastest of timing_repeats interleaved calls
    # after a warm-up, on that seed's inputs (min-of-k, jaxlab.train.time_min_of_k).
    c.meta_methods = META_METHODS
    c.timing_repeats = 5
    if preset == "smoke":
        c.num_seeds = 2
        c.methods = ("baseline", "lre")
        c.timing_repeats = 1
        c.num_train, c.num_val, c.num_test, c.num_teacher = 100, 50, 100, 50
        c.num_epochs = 1
        c.eval_batch_size = 100  # no chunk padded to 500 rows
    elif preset == "paper":
        c.chunk_steps = 50
        c.num_seeds = 5
        c.dataset = "cifar10"
        c.datasets = ("cifar10",)
        c.num_train, c.num_val, c.num_test, c.num_teacher = 40000, 5000, 10000, 5000
        c.image_size = 32
        c.channels = 3
        c.num_epochs = 200
        c.optimizer.learning_rate = 1e-4  # CurBench: Adam, constant 1e-4
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # THUMNLab/CurBench sets no AMP or TF32 (PyTorch default: float32, no TF32 matmuls)
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program at its model shapes on mock data: one epoch of 2 steps of 8 rows
    (one seed), a checkpoint after each step, one evaluation batch, the baseline, SPL and
    LRE (and its cost timing) in the three settings."""
    del devices
    c.batch_size = 8
    c.num_train = DRY_RUN_STEPS * c.batch_size
    c.num_val = c.num_test = c.num_teacher = c.eval_batch_size = 8
    c.num_epochs = 1
    c.chunk_steps = 1
    c.methods = ("baseline", "spl", "lre")
    c.meta_methods = ("lre",)
    c.timing_repeats = 1
    return c
