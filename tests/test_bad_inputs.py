"""Bad input: the meta-tests over every package's table (DESIGN.md "Bad input"; optax's style).

Each ``tests/<package>/test_bad_inputs.py`` holds one row per argument of its public kernels:
one bad value and the documented answer, ``"raises"`` (a ``ValueError`` whose message names
the argument) or ``"nan"`` (the result holds NaN, never a finite wrong number).
``test_every_public_kernel_has_a_row`` enumerates each package's ``__all__`` and fails when
a public callable has no row and no justified exemption.
"""

from __future__ import annotations

import importlib
import inspect

import flax.linen as flax_nn
import jax
import pytest

from tests.align.test_bad_inputs import CASES as ALIGN_CASES
from tests.attribution.test_bad_inputs import CASES as ATTRIBUTION_CASES
from tests.audio.test_bad_inputs import CASES as AUDIO_CASES
from tests.causal.test_bad_inputs import CASES as CAUSAL_CASES
from tests.chem.test_bad_inputs import CASES as CHEM_CASES
from tests.curriculum.test_bad_inputs import CASES as CURRICULUM_CASES
from tests.diffusion.test_bad_inputs import CASES as DIFFUSION_CASES
from tests.explain.test_bad_inputs import CASES as EXPLAIN_CASES
from tests.nn.test_bad_inputs import CASES as NN_CASES
from tests.ood.test_bad_inputs import CASES as OOD_CASES
from tests.optim.test_bad_inputs import CASES as OPTIM_CASES
from tests.rl.test_bad_inputs import CASES as RL_CASES
from tests.robust.test_bad_inputs import CASES as ROBUST_CASES
from tests.theory.test_bad_inputs import CASES as THEORY_CASES
from tests.tta.test_bad_inputs import CASES as TTA_CASES

# Arguments with no single bad value to feed, by reason (test_every_argument_has_a_row...).
_PASSED_THROUGH = (
    "the user's model parameters or batch, passed unchanged to the user's "
    "loss_fn / apply_fn (any pytree is valid; that function checks it)"
)

_FLAG = "a bool flag: both values are valid"

ARG_EXEMPT = {
    **dict.fromkeys(
        [
            "curriculum.dds_reward:params",
            "curriculum.dds_reward:inputs",
            "curriculum.dds_reward:labels",
            "curriculum.dds_reward:meta_inputs",
            "curriculum.dds_reward:meta_labels",
            "curriculum.lookahead_meta_loss:params",
            "curriculum.lookahead_meta_loss:inputs",
            "curriculum.lookahead_meta_loss:labels",
            "curriculum.lookahead_meta_loss:meta_inputs",
            "curriculum.lookahead_meta_loss:meta_labels",
            "curriculum.lookahead_params:params",
            "curriculum.lookahead_params:inputs",
            "curriculum.lookahead_params:labels",
            "curriculum.lre_weights:params",
            "curriculum.lre_weights:inputs",
            "curriculum.lre_weights:labels",
            "curriculum.lre_weights:meta_inputs",
            "curriculum.lre_weights:meta_labels",
            "curriculum.mw_net_meta_loss:params",
            "curriculum.mw_net_meta_loss:inputs",
            "curriculum.mw_net_meta_loss:labels",
            "curriculum.mw_net_meta_loss:meta_inputs",
            "curriculum.mw_net_meta_loss:meta_labels",
            "tta.tent_step:params",
            "tta.tent_step:opt_state",
            "chem.mcf_loss:params",
            "chem.mcf_sample:params",
            "nn.generate:params",
            "rl.dqn_loss:params",
            "rl.dqn_loss:target_params",
            "rl.goal_value_loss:params",
            "rl.goal_value_loss:target_params",
            "rl.idm_loss:params",
            "rl.landmark_loss:params",
            "rl.ppo_loss:params",
            "rl.proposal_loss:params",
            "rl.propose:params",
            "rl.rssm_loss:params",
            "rl.world_model_loss:params",
            "rl.target_update:params",
        ],
        _PASSED_THROUGH,
    ),
    **dict.fromkeys(
        [
            "causal.sample_linear_gaussian:standardize",
            "curriculum.efficient_train:augment",
            "optim.adr_gd:normalize",
            "optim.anytime_averaging:scale_by_alpha",
            "optim.mu2sgd:scale_by_alpha",
            "optim.random_relu_mlp:normalize_columns",
            "nn.MultiHeadAttention:broadcast_dropout",
            "nn.MultiHeadAttention:deterministic",
            "nn.MultiHeadAttention:use_bias",
            "nn.generate:use_cache",
            "nn.TransformerLM:tie_embeddings",
            "nn.normalized_dot_product_attention:broadcast_dropout",
            "nn.normalized_dot_product_attention:deterministic",
            "rl.dqn_loss:double",
            "rl.dqn_update:double",
            "rl.imagine:stochastic",
            "nn.multimax:fused",
            "nn.MultiHeadAttention:fused_multimax",
            "nn.TransformerBlock:fused_multimax",
            "nn.TransformerLM:fused_multimax",
            "nn.ViT:fused_multimax",
        ],
        _FLAG,
    ),
    **dict.fromkeys(
        [
            "ood.knn_score:precision",
            "ood.linear_cka:precision",
            "causal.correlation_matrix:precision",
            "diffusion.optimal_denoiser:precision",
            "chem.kabsch_rmsd:precision",
        ],
        "a jax.lax.PrecisionLike passed to the products; JAX refuses an unknown name",
    ),
    **dict.fromkeys(
        [
            f"nn.{m}:{f}"
            for m in ("MultiHeadAttention", "TransformerBlock", "TransformerLM", "ViT")
            for f in ("dtype", "param_dtype")
        ],
        "a Flax module's dtype slot, passed to its layers (Flax refuses a non-dtype)",
    ),
    **dict.fromkeys(
        ["nn.MultiHeadAttention:kernel_init", "nn.MultiHeadAttention:bias_init"],
        "a Flax initialiser, any callable (Flax calls it)",
    ),
    **dict.fromkeys(
        [
            "nn.normalized_dot_product_attention:dtype",
            "nn.normalized_dot_product_attention:precision",
        ],
        "slot of Flax's attention_fn protocol, documented as ignored",
    ),
    "diffusion.ancestral_sample:project": "optional user callable on x (any map is valid)",
    "diffusion.ddim_sample:project": "optional user callable on x (any map is valid)",
    "curriculum.check_weights:name": "the label used in the error message, not data",
    "curriculum.get_curriculum:kwargs": "forwarded to the factory, whose rows cover them",
    "curriculum.weighted_loss:logits": "unused by the default hook (the hook protocol's slot)",
    "curriculum.weighted_loss:labels": "unused by the default hook (the hook protocol's slot)",
    "curriculum.weighted_loss:state": "built by the trainer from data_prepare (hook protocol)",
    "curriculum.weighted_loss:ctx": "built by the trainer (hook protocol)",
    "tta.tent:mask": "pytree or callable, handed to optax.masked, which checks it",
}

CASES = [
    *ALIGN_CASES,
    *ATTRIBUTION_CASES,
    *AUDIO_CASES,
    *CAUSAL_CASES,
    *CHEM_CASES,
    *CURRICULUM_CASES,
    *DIFFUSION_CASES,
    *EXPLAIN_CASES,
    *NN_CASES,
    *OOD_CASES,
    *OPTIM_CASES,
    *RL_CASES,
    *ROBUST_CASES,
    *THEORY_CASES,
    *TTA_CASES,
]

# Public names that are not kernels: result containers, parameter containers, constants,
# Flax modules (their inputs are checked by the kernels they call) and submodules.
EXEMPT = {
    "ood.BarrierResult": "result NamedTuple",
    "ood.ClassGaussians": "parameter NamedTuple (checked by mahalanobis_score)",
    "causal.METRICS": "constant: the names regret accepts",
    "causal.CountingCITest": "wrapper class; its ci_test argument is checked by ccpg",
    "causal.DSeparationOracle": "class built by d_separation_oracle (which has rows)",
    "causal.FisherZTest": "class built by fisher_z_test (which has rows)",
    "causal.Partition": "result dataclass of ccpg",
    "robust.attacks": "submodule of attack kernels (robust/attacks.py, see its tests)",
    "diffusion.PCAProxy": "parameter NamedTuple built by pca_proxy",
    "diffusion.Schedule": "NamedTuple built by the schedule functions (which have rows)",
    "curriculum.Curriculum": "dataclass of hooks, built by the factories (which have rows)",
    "curriculum.CurriculumState": "state NamedTuple",
    "curriculum.EpochInputs": "input NamedTuple of data_curriculum",
    "curriculum.StepContext": "context NamedTuple of the loss hook",
    "curriculum.METHODS": "constant: name -> factory (get_curriculum has rows)",
    "curriculum.baseline": "takes no argument",
    "curriculum.lre": "takes no argument",
    "attribution.DeepSADNet": "Flax module (its outputs go through the deep_sad_* kernels)",
    "optim.ADRGDResult": "result NamedTuple",
    "optim.AnyTimeState": "optimiser state NamedTuple",
    "optim.Mu2SGDState": "optimiser state NamedTuple",
    "optim.StormState": "optimiser state NamedTuple",
    "optim.WorkerMomentumState": "optimiser state NamedTuple",
    "tta.SLWIInfo": "result NamedTuple",
    "tta.SLWIState": "state NamedTuple built by slwi_init",
    "align.PreferenceBatch": "result NamedTuple",
    "theory.ICLParams": "parameter NamedTuple built by init_icl_params",
    "theory.ICLPrompt": "result NamedTuple of sample_icl_prompt",
    "explain.MaskDecoder": "Flax module (nem_mask / nem_objective check its inputs)",
    "explain.NEMParams": "parameter NamedTuple",
    "explain.StagedEncoder": "Flax module (an example representation model)",
    "chem.ELEMENTS": "constant",
    "chem.NUM_ATOM_FEATURES": "constant",
    "chem.SIZES": "constant: model sizes",
    "chem.MCFDenoiser": "Flax module (checks its input shapes in __call__)",
    "chem.MCFSize": "configuration NamedTuple",
    "chem.MolFeatures": "result NamedTuple of featurize",
    "chem.MoleculeRejected": "exception class",
    "nn.NORMALIZERS": "constant: the normaliser names",
    "nn.Normalizer": "type alias of a normaliser callable",
    "nn.MultiMaxParams": "parameter NamedTuple (checked by multimax / multimax_modulate)",
    "rl.DQNBatch": "input NamedTuple (checked by dqn_loss)",
    "rl.DQNState": "train-state dataclass (checked by dqn_update)",
    "rl.GRID_MOVES": "constant: the grid's moves",
    "rl.LAYOUTS": "constant: the named maze layouts",
    "rl.MazeState": "state NamedTuple (checked by the environments' step)",
    "rl.PPOBatch": "input NamedTuple (checked by ppo_loss)",
    "rl.ReplayBuffer": "state NamedTuple built by replay_init",
    "rl.VQState": "state NamedTuple built by init_vq",
    "audio.DRUM_PATTERNS": "constant",
    "audio.FAMILIES": "constant",
    "audio.INSTRUMENTS": "constant",
    "audio.KEYS": "constant",
    "audio.MODES": "constant",
    "audio.PITCH_CLASSES": "constant",
    "audio.QUESTIONS": "constant: task -> phrasings",
    "audio.FeatureConfig": "settings NamedTuple (checked by every feature kernel)",
    "audio.Instruction": "result record of make_instructions",
}

# Flax's own dataclass fields of every Module (where it sits in a module tree), not inputs.
FLAX_PLUMBING = ("parent", "name")

PACKAGES = (
    "ood",
    "causal",
    "robust",
    "diffusion",
    "curriculum",
    "attribution",
    "optim",
    "tta",
    "align",
    "theory",
    "explain",
    "chem",
    "nn",
    "rl",
    "audio",
)


def test_every_public_kernel_has_a_row() -> None:
    covered = {case.kernel for case in CASES}
    missing, stale = [], []
    for package in PACKAGES:
        module = importlib.import_module(f"jaxlab.{package}")
        for name in module.__all__:
            qualified, obj = f"{package}.{name}", getattr(module, name)
            if qualified in EXEMPT:
                continue
            if callable(obj) and not inspect.ismodule(obj):
                if qualified not in covered:
                    missing.append(qualified)
            else:
                missing.append(f"{qualified} (not callable: exempt it with a reason)")
    for qualified in EXEMPT:
        package, name = qualified.split(".", 1)
        if name not in importlib.import_module(f"jaxlab.{package}").__all__:
            stale.append(qualified)
    assert not missing, f"public kernels without a bad-input row: {missing}"
    assert not stale, f"exemptions for names that are not public: {stale}"


def test_rows_name_real_arguments() -> None:
    """A row's ``arg`` is a parameter of its kernel (so the message check means something)."""
    wrong = []
    for case in CASES:
        package, name = case.kernel.split(".", 1)
        obj = getattr(importlib.import_module(f"jaxlab.{package}"), name)
        if case.arg not in inspect.signature(obj).parameters:
            wrong.append(f"{case.kernel}: {case.arg}")
    assert not wrong, wrong


def test_every_argument_has_a_row_or_a_reason() -> None:
    """One bad value per argument: each parameter of each public kernel has a row, or a
    reason in ARG_EXEMPT why no single bad value exists."""
    covered = {(case.kernel, case.arg) for case in CASES}
    missing = []
    for package in PACKAGES:
        module = importlib.import_module(f"jaxlab.{package}")
        for name in module.__all__:
            qualified = f"{package}.{name}"
            if qualified in EXEMPT:
                continue
            obj = getattr(module, name)
            for arg in inspect.signature(obj).parameters:
                key = f"{qualified}:{arg}"
                flax_module = inspect.isclass(obj) and issubclass(obj, flax_nn.Module)
                if arg in FLAX_PLUMBING and flax_module:
                    continue
                if (qualified, arg) not in covered and key not in ARG_EXEMPT:
                    missing.append(key)
    stale = [k for k in ARG_EXEMPT if (tuple(k.split(":")) in covered)]
    assert not missing, f"arguments without a bad-input row or a reason: {missing}"
    assert not stale, f"exempted arguments that do have rows: {stale}"


def test_numpy_seed_gives_back_the_integer_a_key_was_made_from() -> None:
    """Host-side kernels seed numpy from ``key``: ``key(s)`` must reproduce seed ``s``."""
    from jaxlab._checks import numpy_seed

    for s in (0, 7, 337550, 2**32 - 1):
        assert numpy_seed("key", jax.random.key(s)) == s
    assert numpy_seed("key", jax.random.PRNGKey(5)) == 5
    with pytest.raises(ValueError, match="key"):
        jax.jit(lambda k: numpy_seed("key", k))(jax.random.key(0))
