"""MultiMax ViT: softmax vs MultiMax in attention and head of a small ViT on Fashion-MNIST.

Reproduces, at small scale, the image-classification claim of Zhou, Fritz, Keuper,
"MultiMax: Sparse and Multi-Modal Attention Learning" (ICML 2024, Table 1): replacing
softmax by MultiMax in every attention layer and at the output of DeiT improves ImageNet-1K
top-1 accuracy (DeiT-S and DeiT-T, global average pooling for both) and gives sparser
attention maps. Ours: a 2-block, width-64 ViT with 7×7 patches (16 tokens) on Fashion-MNIST
(Debian package ``dataset-fashion-mnist``), the same recipe for both normalisers.

Command: ``jaxlab run multimax_vit`` (quick: about 4-5 min on 2 idle CPU cores, 3 seeds × 2
normalisers). Paper's number: DeiT-S ImageNet-1K top-1, MultiMax above softmax (PMLR
Table 1; the ``paper`` preset is DeiT-S and needs the user's ImageNet in ``data_dir``).

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

from jaxlab.report import base_config

from ..trainer import adamw_warmup_cosine


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3
    c.mesh = {"data": -1}
    c.cpu_budget_s = 270
    c.dataset = "fashion_mnist"
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
        # DeiT-S on ImageNet-1K (224², 16×16 patches, 12 blocks, width 384, 6 heads), 300
        # epochs; needs an ImageNet loader for ``data_dir`` (not shipped: see docs).
        c.dataset = "imagenet2012"
        c.patch_size = 16
        c.dim = 384
        c.depth = 12
        c.num_heads = 6
        c.mlp_dim = 1536
        c.batch_size = 1024
        c.num_steps = 375_000
        peak_lr = 1e-3
        warmup = 6250
        c.checkpoint_every = 2000
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
    # AdamW, linear warm-up from 0 then cosine decay over the run.
    c.optimizer = adamw_warmup_cosine(peak_lr, warmup, c.num_steps, weight_decay=0.05)
    return c
