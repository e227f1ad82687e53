"""DPO learning dynamics in the paper's own theoretical setting (Im & Li, ICML 2024).

Frozen synthetic prompt embeddings g(x) ∈ ℝ^64 from K = 4 behaviours whose "Yes"- and
"No"-preferred prompts differ by ±δ_k along orthonormal directions u_k (δ = 0.5, 1, 2, 4),
plus a shared offset and Laplace noise; a trainable two-token unembedding W (π_ref = the
initial W) trained by SGD on the DPO loss (β = 0.1), and by cross-entropy on the preferred
answer (SFT) as the second baseline. Equal and unequal mixtures; then misalignment: the
DPO-aligned head trained on flipped preferences against a fresh head.

Command: ``jaxlab run dpo_dynamics --preset quick`` (10 seeds batched with vmap; budgets,
``cpu_budget_s`` on 2 CPU cores: quick 60 s, smoke 15 s). The paper preset (50 seeds, 8000
steps, 8192 evaluation prompts) ``jaxlab run dpo_dynamics --preset paper``; its program
at 2 steps with ``--dry-run``. The paper's LLM runs are not reproduced (see
``PAPER_SETTING``). The paper reports orderings, not table values (no headline number);
its model and definitions were recalled from the abstract (unverified).

Power (``jaxlab.report.power``, α = 0.05, paired t-tests over seeds, two-sided). Seeds
were chosen on an earlier 10-seed quick run (per-seed difference sds bounded by
√(s₁² + s₂²)): its effects (1428 steps to 90 %, 531 with the unequal mixture, 0.144 early
slope, 0.124 R²) need 3-5 seeds. Misalignment at the 90 % threshold (a 10-seed quick pilot at
that threshold): the fresh head's steps have sd 15.6; the smallest effect worth reporting,
50 steps (10 % of the stage), needs 4 seeds. Quick runs 10 seeds (vmapped, within its
budget). The power each tallied row carries (``Claim.power``) is for the smallest effect
worth a row, 10 % of the baseline behaviour's value (steps to 90 %, early slope) or 0.05 of
R², with the sds of a pilot that is not the judged run, ``jaxlab run dpo_dynamics
--config.seed=1000`` (seeds 1000-1009): steps to 90 %, equal / unequal mixture (effect 124 /
42 steps, sd 354 / 173) 0.17 / 0.11; early slope (0.0025, sd 0.0094) 0.12; R² (sd 0.0032)
≈ 1. The first three detect only effects several times larger than 10 % (the pilot's
own are ≈ 100 %), so their rows say they are underpowered for the smallest effect.

Mesh (every preset): ``{"runs": -1}``: the seeds are independent runs of a 2 × dim head
and its evaluation set (a few MB); they split over devices.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_ROWS_PER_DEVICE, DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("anthropic_persona",),
    splits="Anthropic model-written persona statements (Perez et al. 2022), several "
    'behaviours at once, Yes/No answers to "Is the following statement something you '
    'would say?"',
    model="Llama-2-7B and Mistral-7B (a chat model for misalignment), DPO β = 0.1",
    steps="not retrieved (per-behaviour loss and accuracy curves over training)",
    batch="not retrieved",
    seeds=None,
    evaluation="per-behaviour preference accuracy and loss over training; learning speed "
    "against measured distinguishability; misalignment speed, aligned vs base model",
    hardware="GPUs (not retrieved)",
    source="paper abstract and Sections 3-5 as recalled in the spec (no reference code; "
    "values unverified)",
    difference="the paper's own theoretical model instead of the 7B LLMs: frozen synthetic "
    "embeddings g(x) ∈ ℝ⁶⁴ of 4 behaviours (δ = 0.5, 1, 2, 4, Laplace noise) and a trainable "
    "two-token unembedding; Llama-2-7B/Mistral-7B weights and the persona data are not "
    "offline, and a 7B DPO run does not fit this project's budget",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = {"smoke": 2, "quick": 10, "paper": 50}[preset]
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 60, "paper": 600}[preset]
    c.datasets = ("generated",)
    c.dim = 64
    c.deltas = (0.5, 1.0, 2.0, 4.0)
    c.unequal_weights = (0.4, 0.3, 0.2, 0.1)  # most data on the least distinguishable
    c.offset_norm = 1.0
    c.noise_scale = 0.15  # Laplace scale b per coordinate
    c.beta = 0.1
    # Plain SGD on the head (the paper's gradient-flow analysis), one rate for DPO and SFT.
    c.optimizer = ml_collections.ConfigDict({"name": "sgd", "learning_rate": 2.0})
    c.batch_size = 64
    c.num_steps = {"smoke": 60, "quick": 2000, "paper": 8000}[preset]
    c.early_steps = {"smoke": 5, "quick": 10, "paper": 10}[preset]  # linear-growth window
    c.misalign_steps = {"smoke": 60, "quick": 500, "paper": 2000}[preset]
    c.eval_size = {"smoke": 256, "quick": 1024, "paper": 8192}[preset]
    c.init_std = 0.01
    c.accuracy_level = 0.9  # steps to 90 % preference accuracy per behaviour
    # Flipped preferences "win": the policy prefers them on 90 % of the held-out prompts
    # (mean over behaviours). Not 0.5: an untrained head sits at chance, about 0.5, and
    # would "win" at step 1 (the run reports that start accuracy per seed).
    c.misalign_level = 0.9
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # not stated (no reference code): float32, full-precision matmuls
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program's head and geometry, 2 steps of each of its five runs and one
    evaluation batch. The seed (and its padding copies) fill the ``runs`` axis, one run per
    device, so a run's batch of 8 prompts is 8 rows per device."""
    del devices
    c.num_steps = c.misalign_steps = c.early_steps = DRY_RUN_STEPS
    c.batch_size = min(c.batch_size, DRY_RUN_ROWS_PER_DEVICE)
    c.eval_size = c.batch_size
    return c
