"""What the MultiMax ViT and LM experiments share: their optimiser, built from the config."""

from __future__ import annotations

from typing import Any

import ml_collections
import optax

from jaxlab.nn import multimax_decay_mask
from jaxlab.train import make_optimizer


def adamw_warmup_cosine(peak: float, warmup: int, num_steps: int, weight_decay: float,
                        clip: float | None = None) -> ml_collections.ConfigDict:
    """The config entry: AdamW on a linear warm-up (from 0) then cosine decay over the run."""
    return ml_collections.ConfigDict({
        "name": "adamw", "weight_decay": weight_decay, "clip_global_norm": clip,
        "learning_rate": {"name": "warmup_cosine_decay_schedule", "init_value": 0.0,
                          "peak_value": peak, "warmup_steps": warmup,
                          "decay_steps": num_steps}})


def multimax_optimizer(config: Any) -> optax.GradientTransformation:
    """``config.optimizer``, with the MultiMax scalars excluded from weight decay (they get
    plain Adam updates, as in the reference README).

    Raises:
      ValueError: the schedule's ``decay_steps`` is not ``config.num_steps`` (overriding
        ``num_steps`` alone would otherwise leave the rate at its floor for the extra steps).
    """
    schedule = config.optimizer.learning_rate
    if schedule.get("decay_steps") != config.num_steps:
        raise ValueError(f"optimizer.learning_rate.decay_steps ({schedule.get('decay_steps')}) "
                         f"must equal num_steps ({config.num_steps})")
    return make_optimizer({**config.optimizer.to_dict(), "mask": multimax_decay_mask})
