"""MCF on QM9: a PerceiverIO diffusion model over graph-spectral atom coordinates.

Reproduces: Wang et al., "Swallowing the Bitter Pill: Simplified Scalable Conformer
Generation" (ICML 2024), Table 1 (GEOM-QM9): MCF COV-R 95.0% / MAT-R 0.103 Å (mean,
δ = 0.5 Å). Our setting: QM9 from the ``qm9pack`` package with its single DFT geometry
as the reference conformer per test molecule (not GEOM's CREST ensembles), 2K = 2
generated conformers per molecule, beside RDKit ETKDGv3 and random coordinates.

Quick also records a learning curve (COV-R / MAT-R of the EMA model every 300 steps on the
test molecules; ``learning_curve.json`` / ``.png`` in the workdir). ``compute_dtype``
(bf16 in paper) and ``mesh`` (every batch split over all devices of all processes through
``jaxlab.train.fit``'s mesh) scale it out.

Seeds and power (decided before the run). One run is one seed; each metric is that seed's
mean over the 60 test molecules, so the claims pool 3 seeds (a paired test by seed against
ETKDGv3 and random coordinates, which score the same molecules). Pilot: the committed quick
result (one seed, per molecule) — MCF MAT-R 1.74 ± 0.35 Å, random 2.06 ± 0.36 Å, ETKDGv3
0.33 ± 0.26 Å. The smallest comparison is MCF vs random, a 0.32 Å effect; a 60-molecule mean
varies by 0.35 / √60 ≈ 0.05 Å from the test set alone, and the training seed adds an unknown
part: at a per-seed sd of 0.1 Å, 3 seeds give the verdict's two-sided paired t-test 79 %
power (``jaxlab.report.power.t_test_power(3, 0.32, 0.1)``), at 0.15 Å 51 %. The ETKDGv3 gaps
(≈ 1.4 Å) have power ≈ 1 at 3 seeds. Budget trade-off: 3 seeds cost three trainings, so
quick has no learning curve (``curve_every = 0``; the paper preset keeps it) and a
600 s budget.

Paper preset: the paper's GEOM-QM9 experiment as its reference code (``apple/ml-mcf``,
``configs/qm9_pio.yaml``, ``configs/test_qm9.yaml``, ``process_data.py``,
``datasets/geom_qm9.py``) runs it: the TFDS ``geom/qm9`` builder
(:mod:`jaxlab.data.tfds_builders.geom`: GEOM's ``rdkit_folder`` CREST ensembles, GeoMol's
``split0`` train split and its 1,000 test molecules), streamed by grain (``data_workers``
16) and split over the mesh's ``data`` axis; a random one of each molecule's first 10
conformers per example; positions min–max scaled with the reference's GEOM-QM9 constants;
MCF-B in bf16, AdamW 1e-4, 30k warm-up then cosine, EMA 0.999, clip 2.0, batch 128, 300k
steps; validation every 10k steps on 50 validation molecules with 50-step DDIM (η = 1);
test: 1000-step ancestral sampling of 2K conformers per test molecule (K = its reference
ensemble), COV-R/MAT-R/COV-P/MAT-P at δ = 0.5 Å, mean and median over molecules, beside
ETKDGv3 and random coordinates on the same ensembles. One seed (the paper reports one
model). GEOM-DRUGS (MCF-S/B/L, δ = 0.75 Å) is the paper's other experiment: the builder's
``geom/drugs`` holds its ensembles, but MCF's 35-element DRUGS features are not computed by
:mod:`jaxlab.chem.features`, so no preset runs it. Commands:
``tfds build jaxlab/data/tfds_builders/geom.py --config qm9`` (or ``jaxlab data fetch``),
then ``jaxlab run mcf_qm9 --preset paper``; ``--dry-run`` checks the program on mock data.

Command: ``jaxlab run mcf_qm9``.
Budgets (``cpu_budget_s``, 2 CPU cores): quick 600 s (a first run also builds the QM9
subset into the cache); paper: a GPU/TPU run (300k steps), not a CPU run.
Paper's number: COV-R 95.0% / MAT-R 0.103 Å (GEOM-QM9, MCF-B).

Mesh (every preset): ``{"data": -1}``: one seed is one long SGD run of one model, so its
batch splits over every device (data parallel, the state replicated: ≈ 1 GB for size B);
every preset builds it from ``config.mesh`` over all processes' devices (read by
``jaxlab plan`` too), each process feeding its own rows of every global batch; the paper
preset's sampling rows are split over ``data`` too.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("geom",),
    splits="GEOM-QM9 (rdkit_folder CREST ensembles), GeoMol split0: 106,586 train / 13,323 "
    "validation molecules (≤ 10 conformers each in training), test: GeoMol's "
    "test_smiles.csv, 1,000 molecules with all their conformers",
    model="MCF-B PerceiverIO (d_model 1024, 512 latents × 512, 8 blocks × 2 self-attends, "
    "4 heads), 32 eigenfunctions + 43 atom features in, bf16",
    steps="300,000 steps (AdamW 1e-4, 30k warm-up then cosine, EMA 0.999, clip 2.0)",
    batch="128",
    seeds=None,
    evaluation="2K samples per test molecule (K = its reference conformers), 1000-step "
    "ancestral DDPM; COV-R/MAT-R/COV-P/MAT-P at δ = 0.5 Å (heavy-atom GetBestRMS), mean "
    "and median over molecules; validation: 50 molecules, DDIM 50, every 10k steps",
    hardware="not stated in the config (PyTorch Lightning, bf16, flash attention)",
    source="apple/ml-mcf configs/qm9_pio.yaml, configs/test_qm9.yaml, process_data.py, "
    "datasets/geom_qm9.py; paper Table 1 (GEOM-QM9)",
)


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper program at MCF-B's shapes and in its dtype (bf16) on mock ``geom/qm9``,
    whose records are real small molecules (:func:`jaxlab.data.tfds_builders.geom.mock_example`),
    so RDKit's metric and the ETKDG baseline run: 2 training steps of one row per device,
    one validation point (one molecule), and one sampling batch of one row per device with
    2-step samplers; a checkpoint every step."""
    c.num_steps = DRY_RUN_STEPS
    c.warmup_steps = 1
    c.batch_size = devices
    c.eval_batch_size = devices
    c.num_test = 2
    c.curve_every = 1
    c.curve_num_test = 1
    c.sampler_steps = DRY_RUN_STEPS
    c.curve_sampler_steps = DRY_RUN_STEPS
    c.checkpoint_every = 1
    return c


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 3  # the power calculation above
    c.threshold = 0.5  # δ for QM9 (Å)
    c.samples_per_reference = 2  # 2K generated conformers for K references
    c.num_diffusion_steps = 1000
    c.ema_decay = 0.999
    c.clip_global_norm = 2.0
    c.eval_batch_size = 256
    c.mesh = {"data": -1}
    c.curve_every = 0  # learning curve: COV-R / MAT-R every this many steps (0: none)
    c.curve_num_test = 0  # molecules of the curve's points (0: all test molecules)
    c.checkpoint_every = 500  # steps; a killed run resumes from the last one (0: at the end)
    c.datasets = ("qm9pack",)
    if preset != "paper":
        c.dataset = "subset"
        c.model_size = "tiny"
        c.num_train = 0  # 0 = the whole train split of the dataset config
        c.num_test = 60
        c.num_steps = 1500
        c.batch_size = 64
        c.learning_rate = 1e-3
        c.warmup_steps = 100
        c.ema_decay = 0.99
        c.sampler_steps = 50  # DDIM, η = 1 (the paper's validation protocol)
        c.eta = 1.0
        c.cpu_budget_s = 600
    else:
        c.datasets = ("geom",)
        c.dataset = "geom/qm9"  # the TFDS geom builder's GEOM-QM9 config
        c.num_seeds = 1  # the paper reports one model
        c.model_size = "B"
        c.num_train = 0
        c.num_test = 0  # 0 = the whole test split (GeoMol's 1,000 molecules)
        c.max_confs = 10  # training conformers per molecule (reference max_confs)
        # the reference's GEOM-QM9 position normalizer (datasets/geom_qm9.py), Å
        c.position_min = (-9.9898, -4.3612, -3.4942)
        c.position_max = (9.9814, 4.3942, 3.6662)
        c.num_steps = 300_000
        c.batch_size = 128
        c.eval_batch_size = 256  # the reference's test batch
        c.learning_rate = 1e-4
        c.warmup_steps = 30_000
        c.sampler_steps = 0  # 0 = 1000-step ancestral sampling (the paper's test protocol)
        c.eta = 1.0
        # apple/ml-mcf configs/qm9_pio.yaml precision: bf16; train_mcf.py
        # torch.set_float32_matmul_precision("medium") (bf16 or TF32 float32 matmuls)
        c.matmul_precision = "default"
        c.compute_dtype = "bfloat16"
        c.curve_every = 10_000  # the reference's eval_freq: validation COV-R / MAT-R
        c.curve_num_test = 50  # validation molecules (reference n_molecules)
        c.curve_sampler_steps = 50  # DDIM steps of the validation samples
        c.checkpoint_every = 10_000
        c.data_workers = 16
        c.cpu_budget_s = 10**7  # an accelerator run
    if preset == "smoke":  # seconds: the quick code path at toy sizes
        c.dataset = "tiny"
        c.model_size = "micro"
        c.num_steps = 3
        c.batch_size = 8
        c.num_test = 3
        c.num_seeds = 1
        c.curve_every = 2  # one point before the final step (the curve's code path)
        c.checkpoint_every = 0
        c.cpu_budget_s = 30
    return c
