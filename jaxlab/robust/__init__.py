"""jaxlab.robust: Byzantine-robust aggregators, meta-aggregators (NNM, bucketing, CTMA), attacks.

Every aggregator takes the worker vectors stacked on the leading axis (``[m, d]`` or a pytree
of ``[m, ...]`` leaves) and returns one vector / pytree. See ``docs/byzantine.md``.
"""

from jaxlab.robust import attacks
from jaxlab.robust.aggregators import (
    centered_clipping,
    coordinate_median,
    geometric_median,
    krum,
    mean,
    multi_krum,
    trimmed_mean,
)
from jaxlab.robust.meta import bucketing, ctma, nnm

__all__ = [
    "attacks",
    "bucketing",
    "centered_clipping",
    "coordinate_median",
    "ctma",
    "geometric_median",
    "krum",
    "mean",
    "multi_krum",
    "nnm",
    "trimmed_mean",
]
