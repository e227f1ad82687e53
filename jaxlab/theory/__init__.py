"""jaxlab.theory: the data models and small networks that theory papers analyse."""

from jaxlab.theory.icl import (
    ICLParams,
    ICLPrompt,
    icl_attention,
    icl_forward,
    icl_hinge_loss,
    init_icl_params,
    magnitude_prune,
    make_icl_patterns,
    sample_icl_prompt,
    weighted_vote,
)

__all__ = [
    "ICLParams",
    "ICLPrompt",
    "icl_attention",
    "icl_forward",
    "icl_hinge_loss",
    "init_icl_params",
    "magnitude_prune",
    "make_icl_patterns",
    "sample_icl_prompt",
    "weighted_vote",
]
