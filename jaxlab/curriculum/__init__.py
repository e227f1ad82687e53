"""Curriculum learning as CurBench's five hooks: the protocol, the curricula, the settings.

A curriculum is a :class:`Curriculum` of five pure hooks (see ``jaxlab.curriculum.base``);
one trainer (:class:`jaxlab.trainers.curriculum.CurriculumTrainer`, in the paper trainers: it holds
the training loop) runs every method, the no-op :func:`baseline` included. The settings of
the benchmark are data transforms (:func:`noisy_labels`, :func:`imbalance`).
"""

from jaxlab.curriculum.adaptive_cl import adaptive_cl, adaptive_pace, teacher_kl
from jaxlab.curriculum.base import (
    Curriculum,
    CurriculumState,
    EpochInputs,
    StepContext,
    baseline,
    check_weights,
    masked_mean,
    weighted_loss,
)
from jaxlab.curriculum.c2f import (
    affinity_clustering,
    c2f,
    coarse_cross_entropy,
    confusion_distances,
)
from jaxlab.curriculum.cbs import cbs, cbs_sigma
from jaxlab.curriculum.dcl import data_parameter_loss, dcl
from jaxlab.curriculum.dds import dds, dds_reward
from jaxlab.curriculum.dihcl import dih_update, dihcl
from jaxlab.curriculum.efficient_train import (
    efficient_train,
    low_frequency_crop,
    rand_augment,
)
from jaxlab.curriculum.lgl import lgl, lgl_loss
from jaxlab.curriculum.lre import lre, lre_weights
from jaxlab.curriculum.mcl import mcl, mcl_centrality, mcl_sample
from jaxlab.curriculum.meta import lookahead_meta_loss, lookahead_params
from jaxlab.curriculum.mw_net import mw_net, mw_net_meta_loss, weight_net
from jaxlab.curriculum.screener_net import screener_loss, screener_net
from jaxlab.curriculum.spl import pacing, spl, spl_weights
from jaxlab.curriculum.superloss import lambertw, superloss, superloss_sigma
from jaxlab.curriculum.transforms import imbalance, noisy_labels
from jaxlab.curriculum.ttcl import ttcl

# CurBench's 15 curricula and the no-op baseline.
METHODS = {
    "baseline": baseline,
    "spl": spl,
    "ttcl": ttcl,
    "mcl": mcl,
    "lgl": lgl,
    "c2f": c2f,
    "dihcl": dihcl,
    "adaptive_cl": adaptive_cl,
    "efficient_train": efficient_train,
    "cbs": cbs,
    "screener_net": screener_net,
    "lre": lre,
    "mw_net": mw_net,
    "dcl": dcl,
    "dds": dds,
    "superloss": superloss,
}


def get_curriculum(name: str, **kwargs) -> Curriculum:
    """The curriculum ``name`` (a key of ``METHODS``) built with ``kwargs``."""
    if name not in METHODS:
        raise ValueError(f"name must be a curriculum of {sorted(METHODS)}, got {name!r}")
    return METHODS[name](**kwargs)


__all__ = [
    "Curriculum",
    "CurriculumState",
    "EpochInputs",
    "METHODS",
    "StepContext",
    "adaptive_cl",
    "adaptive_pace",
    "affinity_clustering",
    "baseline",
    "c2f",
    "cbs",
    "cbs_sigma",
    "check_weights",
    "coarse_cross_entropy",
    "confusion_distances",
    "data_parameter_loss",
    "dcl",
    "dds",
    "dds_reward",
    "dih_update",
    "dihcl",
    "efficient_train",
    "get_curriculum",
    "imbalance",
    "lambertw",
    "lgl",
    "lgl_loss",
    "lookahead_meta_loss",
    "lookahead_params",
    "low_frequency_crop",
    "lre",
    "lre_weights",
    "masked_mean",
    "mcl",
    "mcl_centrality",
    "mcl_sample",
    "mw_net",
    "mw_net_meta_loss",
    "noisy_labels",
    "pacing",
    "rand_augment",
    "screener_loss",
    "screener_net",
    "spl",
    "spl_weights",
    "superloss",
    "superloss_sigma",
    "teacher_kl",
    "ttcl",
    "weight_net",
    "weighted_loss",
]
