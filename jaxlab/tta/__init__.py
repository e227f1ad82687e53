"""jaxlab.tta: online test-time adaptation kernels (TENT, SLWI)."""

from jaxlab.tta.slwi import (
    SLWIInfo,
    SLWIState,
    entropy_loss,
    mean_reversion,
    slwi_init,
    slwi_update,
    tent,
    tent_step,
)

__all__ = [
    "SLWIInfo",
    "SLWIState",
    "entropy_loss",
    "mean_reversion",
    "slwi_init",
    "slwi_update",
    "tent",
    "tent_step",
]
