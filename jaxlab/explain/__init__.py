"""jaxlab.explain: explanation masks for representations (NEM-U's loss and masking
network), RELAX, gradient saliency and locality / faithfulness metrics."""

from jaxlab.explain.masking import (
    MaskDecoder,
    NEMParams,
    StagedEncoder,
    nem_mask,
    nem_objective,
)
from jaxlab.explain.metrics import deletion_auc, insertion_auc, mass_inside, pointing_game
from jaxlab.explain.nem import (
    cosine_distance,
    gradient_saliency,
    masked_input,
    nem_contrastive_loss,
    nem_loss,
    relax,
    smooth_random_masks,
)

__all__ = [
    "MaskDecoder",
    "NEMParams",
    "StagedEncoder",
    "cosine_distance",
    "deletion_auc",
    "gradient_saliency",
    "insertion_auc",
    "masked_input",
    "mass_inside",
    "nem_contrastive_loss",
    "nem_loss",
    "nem_mask",
    "nem_objective",
    "pointing_game",
    "relax",
    "smooth_random_masks",
]
