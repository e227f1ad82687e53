"""jaxlab.attribution: FLIPAD's final-layer inversion (anchored lasso by FISTA) and Deep SAD."""

from jaxlab.attribution.deep_sad import (
    DeepSADNet,
    deep_sad_center,
    deep_sad_loss,
    deep_sad_score,
)
from jaxlab.attribution.lasso import (
    final_layer_inversion,
    lasso_fista,
    lipschitz_constant,
    soft_threshold,
)

__all__ = [
    "DeepSADNet",
    "deep_sad_center",
    "deep_sad_loss",
    "deep_sad_score",
    "final_layer_inversion",
    "lasso_fista",
    "lipschitz_constant",
    "soft_threshold",
]
