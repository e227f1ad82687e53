"""A scoring network that copies the model and adds a sigmoid unit (ScreenerNet, DDS)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def init_scorer(model_params: Any, num_classes: int, key: jax.Array) -> dict:
    """``{"net": copy of the model's parameters, "fc": Linear(C → 1)}`` (PyTorch init)."""
    bound = 1.0 / jnp.sqrt(num_classes)
    k1, k2 = jax.random.split(key)
    fc = {"w": jax.random.uniform(k1, (num_classes, 1), jnp.float32, -bound, bound),
          "b": jax.random.uniform(k2, (1,), jnp.float32, -bound, bound)}
    return {"net": jax.tree.map(jnp.array, model_params), "fc": fc}


def scorer_weights(scorer: dict, apply_fn, inputs: ArrayLike) -> jax.Array:
    """``w_i = sigmoid(fc(net(x_i))) ∈ (0, 1)`` for a batch ``[b, ...]`` → ``[b]``."""
    logits = apply_fn(scorer["net"], inputs)
    return jax.nn.sigmoid(logits @ scorer["fc"]["w"] + scorer["fc"]["b"][None, :])[:, 0]
