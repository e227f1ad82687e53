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
from jaxlab.curriculum.dcl import data_parameter_loss, dcl
from jaxlab.curriculum.lre import lre, lre_weights
from jaxlab.curriculum.meta import lookahead_meta_loss, lookahead_params
from jaxlab.curriculum.mw_net import mw_net, mw_net_meta_loss, weight_net
from jaxlab.curriculum.spl import pacing, spl, spl_weights
from jaxlab.curriculum.superloss import lambertw, superloss, superloss_sigma
from jaxlab.curriculum.transforms import imbalance, noisy_labels

METHODS = {
    "baseline": baseline,
    "spl": spl,
    "superloss": superloss,
    "dcl": dcl,
    "lre": lre,
    "mw_net": mw_net,
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
    "check_weights",
    "data_parameter_loss",
    "dcl",
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
    "spl",
    "spl_weights",
    "superloss",
    "superloss_sigma",
    "weight_net",
    "weighted_loss",
]
