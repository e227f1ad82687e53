"""jaxlab.diffusion: model-agnostic DDPM / DDIM and EDM schedules, losses and samplers, the
empirical optimal denoiser and reproducibility / memorization scores.

Every function works on pytrees of arrays with an optional real-entry mask, under
``jit``, ``vmap`` and ``grad``.
"""

from jaxlab.diffusion.edm import (
    edm_denoise,
    edm_heun_sample,
    edm_loss,
    edm_precondition,
    edm_sigma_steps,
)
from jaxlab.diffusion.forward import ddpm_loss, masked_mse, q_sample
from jaxlab.diffusion.reproducibility import (
    PCAProxy,
    calibrate_threshold,
    memorization_score,
    nearest_neighbor_ratio,
    optimal_denoiser,
    pair_cosine,
    pca_embed,
    pca_proxy,
    reproducibility_score,
)
from jaxlab.diffusion.samplers import ancestral_sample, ddim_sample, ddim_timesteps
from jaxlab.diffusion.schedules import (
    Schedule,
    cosine_beta_schedule,
    linear_beta_schedule,
    schedule_from_betas,
)

__all__ = [
    "PCAProxy",
    "Schedule",
    "ancestral_sample",
    "calibrate_threshold",
    "cosine_beta_schedule",
    "ddim_sample",
    "ddim_timesteps",
    "ddpm_loss",
    "edm_denoise",
    "edm_heun_sample",
    "edm_loss",
    "edm_precondition",
    "edm_sigma_steps",
    "linear_beta_schedule",
    "masked_mse",
    "memorization_score",
    "nearest_neighbor_ratio",
    "optimal_denoiser",
    "pair_cosine",
    "pca_embed",
    "pca_proxy",
    "q_sample",
    "reproducibility_score",
    "schedule_from_betas",
]
