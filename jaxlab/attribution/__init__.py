"""jaxlab.attribution: FLIPAD (final-layer inversion by FISTA, Deep SAD) and DCT features."""

from jaxlab.attribution.dct import log_dct
from jaxlab.attribution.deep_sad import (
    DeepSADNet,
    deep_sad_center,
    deep_sad_loss,
    deep_sad_score,
)
from jaxlab.attribution.lasso import (
    final_layer_inversion,
    lasso_fista,
    linear_adjoint,
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
    "linear_adjoint",
    "lipschitz_constant",
    "log_dct",
    "soft_threshold",
]
