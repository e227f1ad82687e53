"""Dr. Strategy vs a LEXA-like flat achiever in a state-based point maze (Hamed et al., ICML 2024).

One agent per seed (seeds under one ``vmap``) explores a four-room point maze with Dr.
Strategy's strategic exploration (landmark by curiosity, highway policy, then the
disagreement explorer), learning a world model (an RSSM with a Gaussian stochastic state by
default; ``stochastic_latent = False``: the deterministic latent MLP model), landmarks
(VQ-VAE on the deterministic latent h) and a temporal-distance predictor. Two achievers are
then trained in imagination with the same world model, data and TDP: Dr. Strategy's
(focused sampling: imagination starts at the landmark nearest the goal) and a flat
LEXA-like one (starts anywhere); at test time Dr. Strategy first runs the highway policy to
the landmark nearest the goal. Zero-shot success is reported against the goal's distance in
rooms; exploration coverage of curiosity-sampled vs uniformly sampled landmarks; landmarks
plot in ``workdir/landmarks.png``.

Command: ``jaxlab run drstrategy_maze --preset quick`` (quick: 5 seeds, 139 s on 2 idle CPU
cores, 7 minutes when they were shared with three other jobs; smoke: compile-bound, about 80 s
on busy cores, 27 s of CPU; paper: five seeds, the nine-room maze at larger scale, for an
accelerator): ``jaxlab run drstrategy_maze --preset paper``, its program at the paper
preset's model sizes on 2 rounds of 2 train steps with ``--dry-run``. The paper's pixel
mazes are not run (see ``PAPER_SETTING``).
Paper numbers: none used (the paper's success rates are for pixel mazes and were not read).
Hyper-parameters from the reference code (``agent/drstrategy.yaml``, ``configs/default.yaml``):
discount 0.99, λ 0.95, imagination horizon 15, code dimension 16, 64 landmarks (16 here),
256 TDP positives with negative factor 0.1, reach thresholds 0.07 / 0.05 (MSE), at most 100
highway steps.

Power (chosen before the run; ``jaxlab.report.power.seeds_for_power``, α = 0.05, power 0.8,
paired t-test over seeds). Smallest effect worth reporting: 0.1 success on far goals. Pilot:
the committed quick results, both achievers 0.022 ± 0.050 over 5 seeds; the per-seed
difference's sd is at most √2 · 0.050 = 0.070, which needs 7 seeds (5: power 0.67). The quick
run already takes about twice its 150 s budget with 5 seeds on the shared CPU, so quick keeps
5 (power 0.67 at the bound; more where the pairing removes the seeds' shared difficulty).

Mesh (every preset): ``{"runs": -1}``: each seed is one whole run (agent and replay buffer,
tens of MB at the paper preset); the seeds split over devices.

Checkpoints (``segments``): the rounds run as ``jaxlab.train.segmented_scan_run`` under
``workdir/rounds``, checkpointed after each piece, and a killed run resumes there. One round
per piece at quick and paper (7 pieces of about 30 s at quick; 41 at paper): equal pieces are
one compiled program, whereas e.g. 3 pieces of 3, 3, 1 rounds would compile twice. Smoke:
2 pieces of one round (its 2 rounds): the same single compile, with a checkpoint half way.
"""

import ml_collections

from jaxlab.report import PaperSetting, base_config
from jaxlab.report.configs import DRY_RUN_ROWS_PER_DEVICE, DRY_RUN_STEPS

PAPER_SETTING = PaperSetting(
    datasets=("memory_maze", "drstrategy_2d_mazes", "robokitchen"),
    splits="online: pixel 2-D mazes (9-rooms, 25-rooms, spiral-9), 3-D Memory Maze (7×7, "
    "15×15), RoboKitchen; zero-shot goal images at test time",
    model="DreamerV2 RSSM (GRU h, discrete z, image decoder), VQ-VAE landmarks (64 codes of "
    "dimension 16), highway policy, explorer and achiever actor-critics, temporal-distance "
    "predictor",
    steps="2,000,010 environment frames of reward-free pre-training (1000 random seed "
    "frames); horizon 15, discount 0.99, λ 0.95",
    batch="DreamerV2's defaults (configs/default.yaml)",
    seeds=None,
    evaluation="zero-shot goal-reaching success rate per environment vs LEXA, Choreographer "
    "and a PEG-type explorer (Table 1 / Fig. 4; values not retrieved)",
    hardware="one GPU per run (pretrain.yaml launcher: 1 GPU, 10 CPUs, 160 GB)",
    source="reference code github.com/ahn-ml/drstrategy: drstrategy/pretrain.yaml, "
    "agent/drstrategy.yaml, configs/default.yaml; paper Section 5",
    difference="a state-based 9-room point maze written in JAX instead of the pixel mazes "
    "(their suites are PyTorch/MuJoCo environments with no JAX port): positions instead of "
    "images, an RSSM with a Gaussian stochastic state, 40 rounds of 32 collected segments "
    "of 200 steps (≈ 262k env steps per seed, 5 seeds) instead of 2M frames; no "
    "Choreographer or PEG baselines (the flat LEXA-like achiever is the baseline)",
    steps_key="rounds",
)


def get_config(preset: str = "quick") -> ml_collections.ConfigDict:
    c = base_config(preset)
    c.num_seeds = 5
    c.batch_seeds = True
    c.mesh = {"runs": -1}
    c.cpu_budget_s = {"smoke": 15, "quick": 150, "paper": 7200}[preset]
    c.datasets = ("generated",)
    # Environment: rooms_per_side² rooms of room × room cells, start in the top-left room.
    c.rooms_per_side = 2
    c.room = 3  # 9 × 9 cells with walls (room 4 at the paper preset)
    c.step_size = 0.5
    c.segment = 100  # steps per episode (collection segments and evaluation episodes)
    c.goal_radius = 0.5  # evaluation: a goal is reached within 0.5 cells
    c.far_rooms = 2  # "far" goals: at least this many rooms away (Manhattan over rooms)
    # World model and landmarks. stochastic_latent: an RSSM (GRU state h of size latent,
    # Gaussian z of size stoch, KL balancing and free nats as DreamerV2); else the
    # deterministic latent MLP model. Landmarks live on h in both.
    c.stochastic_latent = True
    c.stoch = 16
    c.kl_balance = 0.8
    c.free_nats = 1.0
    c.kl_scale = 1.0
    c.latent = 32
    c.wm_hidden = 96
    c.ensemble = 4
    c.num_landmarks = 16
    c.code_dim = 16
    # Optimisers (jaxlab.train.make_optimizer): Adam with ε 1e-5 after a global-norm clip of
    # 100 (DreamerV2's), for the world model and landmarks (wm) and for the behaviours and
    # the TDP (ac).
    c.wm_optimizer = ml_collections.ConfigDict(
        {"name": "adam", "learning_rate": 1e-3, "eps": 1e-5, "clip_global_norm": 100.0}
    )
    c.vq_decay = 0.99  # EMA decay of the landmark codebook
    c.vq_min_count = 1.0  # codes used less than this (EMA count) are re-seeded
    c.wm_batch = 32
    c.wm_length = 16
    # Behaviours (Dreamer actor-critic in imagination).
    c.hidden = 64
    c.ac_optimizer = ml_collections.ConfigDict(
        {"name": "adam", "learning_rate": 1e-3, "eps": 1e-5, "clip_global_norm": 100.0}
    )
    c.horizon = 15
    c.discount = 0.99
    c.lambda_ = 0.95
    c.ent_coef = 1e-3
    c.imag_batch = 64
    c.knn_weight = 0.0  # Choreographer's kNN entropy term of the highway reward (off)
    c.knn_k = 30
    c.reach_mse = 0.05
    c.max_highway_steps = 30
    c.tdp_positives = 256
    c.tdp_neg_factor = 0.1
    # Schedule: round 0 collects random-action segments, rounds 1..R collect with the agent;
    # each round then runs train_steps Dreamer-style steps (world model, landmarks, the four
    # behaviours and the TDP). Both achievers share the explorer's data: equal env steps.
    c.rounds = 6
    c.segments_per_round = 16
    c.train_steps = 200
    c.resample_every = 25
    c.curiosity_rollouts = 4  # per landmark
    c.coverage_segments = 16
    # Checkpointed pieces of the rounds (jaxlab.train.segmented_scan_run): one round each,
    # so every piece is the same compiled program (one compile) and a checkpoint lands after
    # each round, about every 30 s of a quick run.
    c.segments = c.rounds + 1
    if preset == "smoke":
        c.num_seeds = 2
        c.segment = 16
        c.max_highway_steps = 8
        c.wm_hidden = 32
        c.hidden = 32
        c.latent = 8
        c.stoch = 4
        c.num_landmarks = 4
        c.code_dim = 4
        c.imag_batch = 8
        c.horizon = 4
        c.wm_batch = 4
        c.wm_length = 4
        c.tdp_positives = 16
        c.rounds = 1
        c.segments_per_round = 4
        c.train_steps = 2
        c.resample_every = 1
        c.curiosity_rollouts = 1
        c.coverage_segments = 4
        c.segments = 2  # rounds 0 and 1: one compile, a checkpoint half way
    if preset == "paper":
        c.num_seeds = 5
        c.room = 4
        c.rooms_per_side = 3
        c.segment = 200
        c.max_highway_steps = 100
        c.latent = 200
        c.stoch = 32
        c.wm_hidden = 200
        c.hidden = 256
        c.num_landmarks = 64
        c.imag_batch = 256
        c.rounds = 40
        c.segments_per_round = 32
        c.train_steps = 500
        c.resample_every = 200
        c.ac_optimizer.learning_rate = 8e-5
        c.wm_optimizer.learning_rate = 3e-4
        c.segments = c.rounds + 1
    if preset == "paper":  # the paper's numerics; smoke and quick: base_config's
        # ahn-ml/drstrategy configs/default.yaml precision: 32 (no AMP; PyTorch default:
        # float32, no TF32 matmuls)
        c.matmul_precision = "highest"
        c.compute_dtype = "float32"
    return c


def dry_run(c: ml_collections.ConfigDict, devices: int) -> ml_collections.ConfigDict:
    """The paper preset's maze and networks; rounds 0 and 1 (one checkpointed piece each) of
    2 train steps, one curiosity rollout per landmark and one evaluation batch of episodes.
    Every seed (one per device: the seed and its padding copies fill the ``runs`` axis)
    collects 8 segments and imagines from 8 starts with 8 TDP pairs. XLA's cheapest compile
    (``fast_compile``), as at smoke."""
    del devices
    c.fast_compile = True  # a dry run is compile-bound, as smoke
    rows = DRY_RUN_ROWS_PER_DEVICE
    c.rounds = DRY_RUN_STEPS - 1
    c.segments = c.rounds + 1
    c.train_steps = DRY_RUN_STEPS
    c.segments_per_round = min(c.segments_per_round, rows)
    c.imag_batch = min(c.imag_batch, rows)
    c.tdp_positives = min(c.tdp_positives, rows)
    c.curiosity_rollouts = 1
    c.coverage_segments = min(c.coverage_segments, rows)
    return c
