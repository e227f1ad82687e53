"""jaxlab.diffusion: model-agnostic DDPM / DDIM schedules, losses and samplers.

Every function works on pytrees of arrays with an optional real-entry mask, under
``jit``, ``vmap`` and ``grad``.
"""

from jaxlab.diffusion.forward import ddpm_loss, masked_mse, q_sample
from jaxlab.diffusion.samplers import ancestral_sample, ddim_sample, ddim_timesteps
from jaxlab.diffusion.schedules import (
    Schedule,
    cosine_beta_schedule,
    linear_beta_schedule,
    schedule_from_betas,
)

__all__ = [
    "Schedule",
    "ancestral_sample",
    "cosine_beta_schedule",
    "ddim_sample",
    "ddim_timesteps",
    "ddpm_loss",
    "linear_beta_schedule",
    "masked_mse",
    "q_sample",
    "schedule_from_betas",
]
