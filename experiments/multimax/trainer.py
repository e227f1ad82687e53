"""What the MultiMax ViT and LM experiments share: their optimiser, built from the config.

Two learning-rate schedules: AdamW on a linear warm-up then cosine decay
(:func:`adamw_warmup_cosine`, DeiT's and the quick presets'), and fairseq's
``inverse_sqrt`` (:func:`adam_inverse_sqrt`, the WikiText-103 language-model recipe):
a linear warm-up from ``init`` to ``peak`` over ``warmup`` steps, then
``peak · sqrt(warmup / step)``.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import ml_collections
import optax

from jaxlab.nn import multimax_decay_mask
from jaxlab.train import make_optimizer


def adamw_warmup_cosine(
    peak: float,
    warmup: int,
    num_steps: int,
    weight_decay: float,
    clip_global_norm: float | None = None,
    init: float = 0.0,
    end: float | None = None,
) -> ml_collections.ConfigDict:
    """The config entry: AdamW on a linear warm-up (from ``init``) then cosine decay over
    the run (to ``end``; ``None``: to 0)."""
    schedule = {
        "name": "warmup_cosine_decay_schedule",
        "init_value": init,
        "peak_value": peak,
        "warmup_steps": warmup,
        "decay_steps": num_steps,
    }
    if end is not None:
        schedule["end_value"] = end
    return ml_collections.ConfigDict(
        {
            "name": "adamw",
            "weight_decay": weight_decay,
            "clip_global_norm": clip_global_norm,
            "learning_rate": schedule,
        }
    )


def adam_inverse_sqrt(
    peak: float, warmup: int, init: float, weight_decay: float, b2: float = 0.98
) -> ml_collections.ConfigDict:
    """The config entry of fairseq's LM recipe: Adam(β₂) with decoupled weight decay
    (AdamW) on the ``inverse_sqrt`` schedule (module docstring)."""
    return ml_collections.ConfigDict(
        {
            "name": "adamw",
            "weight_decay": weight_decay,
            "b1": 0.9,
            "b2": b2,
            "clip_global_norm": None,
            "learning_rate": {
                "name": "inverse_sqrt",
                "init_value": init,
                "peak_value": peak,
                "warmup_steps": warmup,
            },
        }
    )


def inverse_sqrt_schedule(
    init_value: float, peak_value: float, warmup_steps: int
) -> optax.Schedule:
    """``init + (peak − init) · step / warmup`` for ``step < warmup``, then
    ``peak · sqrt(warmup / step)`` (fairseq's ``inverse_sqrt``)."""

    def schedule(step):
        step = jnp.asarray(step, jnp.float32)
        ramp = init_value + (peak_value - init_value) * step / warmup_steps
        decay = peak_value * jnp.sqrt(warmup_steps / jnp.maximum(step, 1.0))
        return jnp.where(step < warmup_steps, ramp, decay)

    return schedule


def multimax_optimizer(config: Any) -> optax.GradientTransformation:
    """``config.optimizer``, with the MultiMax scalars excluded from weight decay (they get
    plain Adam updates, as in the reference README).

    Raises:
      ValueError: the schedule's ``decay_steps`` is not ``config.num_steps`` (overriding
        ``num_steps`` alone would otherwise leave the rate at its floor for the extra steps).
    """
    schedule = config.optimizer.learning_rate
    if schedule.get("name") == "inverse_sqrt":
        kwargs = {
            k: v
            for k, v in config.optimizer.to_dict().items()
            if k not in ("name", "clip_global_norm", "learning_rate")
        }
        rate = inverse_sqrt_schedule(
            schedule.init_value, schedule.peak_value, schedule.warmup_steps
        )
        return optax.adamw(rate, **kwargs, mask=multimax_decay_mask)
    if schedule.get("decay_steps") != config.num_steps:
        raise ValueError(
            f"optimizer.learning_rate.decay_steps ({schedule.get('decay_steps')}) "
            f"must equal num_steps ({config.num_steps})"
        )
    return make_optimizer({**config.optimizer.to_dict(), "mask": multimax_decay_mask})
