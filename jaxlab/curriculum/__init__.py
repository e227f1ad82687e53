"""Curriculum learning as CurBench's five hooks: the protocol, the curricula, the settings.

A curriculum is a :class:`Curriculum` of five pure hooks (see ``jaxlab.curriculum.base``);
one trainer (``jaxlab.train.curriculum``) runs every method, the no-op :func:`baseline`
included. The settings of the benchmark are data transforms (:func:`noisy_labels`,
:func:`imbalance`).
"""

from jaxlab.curriculum.base import (
    Curriculum,
    CurriculumState,
    StepContext,
    baseline,
    check_weights,
    masked_mean,
    weighted_loss,
)
from jaxlab.curriculum.cbs import cbs, cbs_sigma
from jaxlab.curriculum.dcl import data_parameter_loss, dcl
from jaxlab.curriculum.dds import dds, dds_reward
from jaxlab.curriculum.dihcl import dih_update, dihcl
from jaxlab.curriculum.lre import lre, lre_weights
from jaxlab.curriculum.meta import lookahead_meta_loss, lookahead_params
from jaxlab.curriculum.mw_net import mw_net, mw_net_meta_loss, weight_net
from jaxlab.curriculum.screener_net import screener_loss, screener_net
from jaxlab.curriculum.spl import pacing, spl, spl_weights
from jaxlab.curriculum.superloss import lambertw, superloss, superloss_sigma
from jaxlab.curriculum.transforms import imbalance, noisy_labels
from jaxlab.curriculum.ttcl import ttcl

# The curricula implemented so far (CurBench lists 15; LGL, C2F, MCL, Adaptive CL and
# EfficientTrain are not yet here).
METHODS = {
    "baseline": baseline,
    "spl": spl,
    "ttcl": ttcl,
    "dihcl": dihcl,
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
        raise ValueError(f"unknown curriculum {name!r}; valid: {sorted(METHODS)}")
    return METHODS[name](**kwargs)


__all__ = [
    "METHODS",
    "Curriculum",
    "CurriculumState",
    "StepContext",
    "baseline",
    "cbs",
    "cbs_sigma",
    "check_weights",
    "data_parameter_loss",
    "dcl",
    "dds",
    "dds_reward",
    "dih_update",
    "dihcl",
    "get_curriculum",
    "imbalance",
    "lambertw",
    "lookahead_meta_loss",
    "lookahead_params",
    "lre",
    "lre_weights",
    "masked_mean",
    "mw_net",
    "mw_net_meta_loss",
    "noisy_labels",
    "pacing",
    "screener_loss",
    "screener_net",
    "spl",
    "spl_weights",
    "superloss",
    "superloss_sigma",
    "ttcl",
    "weight_net",
    "weighted_loss",
]
