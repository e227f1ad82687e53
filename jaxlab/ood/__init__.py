"""jaxlab.ood: out-of-distribution scores, metrics and ensemble-diversity diagnostics."""

from jaxlab.ood.diagnostics import (
    BarrierResult,
    affine_coupling_r2,
    linear_cka,
    loss_barrier,
    weight_match_mlp,
)
from jaxlab.ood.metrics import auroc, fpr_at_tpr
from jaxlab.ood.scores import (
    ClassGaussians,
    energy_score,
    ensemble_score,
    fit_class_gaussians,
    knn_score,
    l2_normalize,
    mahalanobis_score,
    msp_score,
    standardize_scores,
)

__all__ = [
    "BarrierResult",
    "ClassGaussians",
    "affine_coupling_r2",
    "auroc",
    "energy_score",
    "ensemble_score",
    "fit_class_gaussians",
    "fpr_at_tpr",
    "knn_score",
    "l2_normalize",
    "linear_cka",
    "loss_barrier",
    "mahalanobis_score",
    "msp_score",
    "standardize_scores",
    "weight_match_mlp",
]
