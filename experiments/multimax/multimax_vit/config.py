"""MultiMax ViT: softmax vs MultiMax in attention and head of a small ViT on Fashion-MNIST.

Reproduces, at small scale, the image-classification claim of Zhou, Fritz, Keuper,
"MultiMax: Sparse and Multi-Modal Attention Learning" (ICML 2024, Table 1): replacing
softmax by MultiMax in every attention layer and at the output of DeiT improves ImageNet-1K
top-1 accuracy (DeiT-S and DeiT-T, global average pooling for both) and gives sparser
attention maps. Ours: a 2-block, width-64 ViT with 7×7 patches (16 tokens) on Fashion-MNIST
(Debian package ``dataset-fashion-mnist``), the same recipe for both normalisers.

Command: ``jaxlab run multimax_vit`` (quick: about 4-5 min on 2 idle CPU cores, 3 seeds × 2
normalisers). Paper's number: DeiT-S ImageNet-1K top-1, MultiMax above softmax (PMLR
Table 1).

Paper preset (``jaxlab run multimax_vit --preset paper``, with ImageNet prepared for TFDS
as ``imagenet2012`` in ``data_dir``): DeiT-S (224², 16×16 patches, 12 blocks, width 384,
6 heads, global average pooling as in the reference code) trained with DeiT's recipe:
300 epochs at batch 1024 (375,300 steps), AdamW with lr 5e-4·1024/512 = 1e-3, weight
decay 0.05 (not on the MultiMax scalars), 5 warm-up epochs from 1e-6 then cosine to 1e-5,
Inception crop + flip + RandAugment m9-mstd0.5 + random erasing 0.25 in the loader's
workers (:mod:`jaxlab.data.imagenet`), Mixup 0.8 / CutMix 1.0 with label smoothing 0.1 on
the device; top-1 accuracy on the 50,000 validation images (streamed, split over
``data``), attention sparsity on the first validation batch. DeiT-T is the same with
``dim=192 num_heads=3 mlp_dim=768``. What it leaves out of DeiT's recipe (drop path,
repeated augmentation, EMA) is in ``PAPER_SETTING.difference``.
``jaxlab run multimax_vit --preset paper --dry-run`` runs it on mock ImageNet.

Mesh (every preset): ``{"data": -1}``: one small model per run (DeiT-S, 22 M parameters,
at ``paper``) fits every device, so it is replicated and the batch rows are split over all
devices (data parallelism; at ``paper`` 1024 images = 128 per device on 8 devices).

Seeds (power calculation, ``jaxlab.report.power.seeds_for_power``, two-sided paired t-test,
α = 0.05, made before the statistical re-run from the committed quick pilot, whose per-arm
sd bounds the paired sd from above): test accuracy, smallest effect worth a row 0.5 points,
sd ≤ 0.29 → 5 seeds for 80 % power, 0.39 at 3; attention sparsity, effect 0.02, sd ≤ 0.033
→ 24 seeds. The quick budget keeps 3 seeds (each seed trains two ViTs), so both claims are
underpowered at ``quick`` and an "inconclusive" there is no evidence against the paper.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

from ..trainer import adamw_warmup_cosine

#: ImageNet-1k training images, and DeiT's steps per epoch at batch 1024 (last partial
#: batch dropped).
IMAGENET_TRAIN = 1_281_167
DEIT_EPOCHS, DEIT_WARMUP_EPOCHS, DEIT_BATCH = 300, 5, 1024
STEPS_PER_EPOCH = IMAGENET_TRAIN // DEIT_BATCH

PAPER_SETTING = PaperSetting(
    datasets=("imagenet2012",),
    splits="ImageNet-1k train (1,281,167 images) / validation (50,000)",
    model="DeiT-S (12 blocks, width 384, 6 heads, 16×16 patches, 22 M parameters) and "
    "DeiT-T (width 192, 3 heads), global average pooling instead of the class token for "
    "softmax and MultiMax alike; MultiMax (order 2) in every attention layer and the head",
    steps=f"300 epochs at batch 1024 ({DEIT_EPOCHS * STEPS_PER_EPOCH:,} steps)",
    batch="1024",
    seeds=None,
    evaluation="top-1 accuracy on the 50,000 validation images (resize 256, centre crop "
    "224); attention sparsity shown qualitatively",
    hardware="GPUs (not stated in the training recipe)",
    source="MultiMax paper Table 1 and Section 5; reference README (timm "
    "vision_transformer.py with MultiMax, 'follow the training recipe of DeiT'); DeiT "
    "main.py defaults (AdamW lr 5e-4·batch/512, wd 0.05, 5 warm-up epochs, cosine, "
    "label smoothing 0.1, Mixup 0.8, CutMix 1.0, RandAugment rand-m9-mstd0.5-inc1, "
    "random erasing 0.25, drop path 0.1, repeated augmentation)",
    difference="DeiT-S with the DeiT data recipe on imagenet2012, except: no stochastic "
    "depth (drop path 0.1; jaxlab's ViT has none), no repeated augmentation (3 repeats "
    "per image), no model EMA, the schedule stepped per step rather than per epoch, "
    "flax's tanh-approximate GELU, bfloat16 compute where DeiT's AMP used float16 with "
    "loss scaling; the paper's DeiT-T run is an override "
    "(dim=192 num_heads=3 mlp_dim=768)",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3
    c.mesh = {"data": -1}
    c.cpu_budget_s = 270
    c.dataset = "fashion_mnist"
    c.datasets = ("fashion_mnist_idx",)  # the Debian package's IDX files, in memory
    c.normalizers = ("softmax", "multimax")  # attention and head use the same one
    c.patch_size = 7
    c.dim = 64
    c.depth = 2
    c.num_heads = 4
    c.mlp_dim = 128
    c.batch_size = 128
    c.num_steps = 600
    peak_lr = 2e-3
    warmup = 50
    c.eval_images = 0  # test images to evaluate (0: all)
    c.checkpoint_every = 100  # steps; a killed run resumes from the last one
    c.log_every = 10
    c.eval_batch_size = 1000
    c.sparsity_threshold = 1e-3
    c.sparsity_images = 1000
    if preset == "paper":
        # DeiT-S on ImageNet-1K (224², 16×16 patches, 12 blocks, width 384, 6 heads) with
        # DeiT's recipe (module docstring), streamed from TFDS.
        c.dataset = "imagenet2012"
        c.datasets = ("imagenet2012",)
        # DeiT trains in mixed precision (torch.cuda.amp float16 with timm's NativeScaler
        # loss scaling, DeiT's main.py); here bfloat16 activations and matrix products,
        # which need no loss scaling, on float32 master weights (the model keeps
        # layer-norm, normaliser and loss statistics in float32).
        c.compute_dtype = "bfloat16"
        c.matmul_precision = "default"
        c.image_size = 224
        c.patch_size = 16
        c.dim = 384
        c.depth = 12
        c.num_heads = 6
        c.mlp_dim = 1536
        c.batch_size = DEIT_BATCH
        c.num_steps = DEIT_EPOCHS * STEPS_PER_EPOCH
        peak_lr = 5e-4 * DEIT_BATCH / 512
        warmup = DEIT_WARMUP_EPOCHS * STEPS_PER_EPOCH
        c.mixup_alpha = 0.8
        c.cutmix_alpha = 1.0
        c.mixup_switch_prob = 0.5
        c.label_smoothing = 0.1
        c.rand_augment = True  # rand-m9-mstd0.5-inc1
        c.erase_prob = 0.25
        c.eval_batch_size = 1024
        c.data_workers = 16
        c.checkpoint_every = 2000
        c.log_every = 100
        c.cpu_budget_s = 10**9
    if preset == "smoke":  # seconds: the quick code path and grid at toy sizes
        c.num_steps = 3
        c.checkpoint_every = 0  # only at the end (3 steps)
        warmup = 1
        c.num_seeds = 1
        c.dim = 16
        c.mlp_dim = 32
        c.eval_images = 256
        c.sparsity_images = 64
        c.cpu_budget_s = 30
    if preset == "paper":  # DeiT: warm-up from 1e-6, cosine down to 1e-5
        c.optimizer = adamw_warmup_cosine(
            peak_lr, warmup, c.num_steps, weight_decay=0.05, init=1e-6, end=1e-5
        )
    else:  # AdamW, linear warm-up from 0 then cosine decay over the run.
        c.optimizer = adamw_warmup_cosine(peak_lr, warmup, c.num_steps, weight_decay=0.05)
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program at DeiT-S shapes on mock ImageNet: 2 steps at one image per
    device, evaluation (accuracy and sparsity) on one validation batch of one image per
    device."""
    c.num_steps = DRY_RUN_STEPS
    c.batch_size = devices
    c.eval_batch_size = devices
    c.checkpoint_every = 0
    c.log_every = 1
    c.optimizer.learning_rate.warmup_steps = 1
    c.optimizer.learning_rate.decay_steps = c.num_steps
    return c
