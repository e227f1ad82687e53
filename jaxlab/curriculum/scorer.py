"""A scoring network that copies the model and adds a sigmoid unit (ScreenerNet, DDS)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab.curriculum.base import CurriculumState


def init_scorer(model_params: Any, num_classes: int, key: jax.Array) -> dict:
    """``{"net": copy of the model's parameters, "fc": Linear(C → 1)}`` (PyTorch init)."""
    bound = 1.0 / jnp.sqrt(num_classes)
    k1, k2 = jax.random.split(key)
    fc = {
        "w": jax.random.uniform(k1, (num_classes, 1), jnp.float32, -bound, bound),
        "b": jax.random.uniform(k2, (1,), jnp.float32, -bound, bound),
    }
    return {"net": jax.tree.map(jnp.array, model_params), "fc": fc}


def scorer_weights(scorer: dict, apply_fn, inputs: ArrayLike) -> jax.Array:
    """``w_i = sigmoid(fc(net(x_i))) ∈ (0, 1)`` for a batch ``[b, ...]`` → ``[b]``."""
    logits = apply_fn(scorer["net"], inputs)
    return jax.nn.sigmoid(logits @ scorer["fc"]["w"] + scorer["fc"]["b"][None, :])[:, 0]


def scorer_prepare_hooks(tx: optax.GradientTransformation):
    """The ``data_prepare`` / ``model_prepare`` hooks shared by the learned-scorer curricula
    (ScreenerNet, DDS): all-ones weights, the rng key and the class count in the state, then
    a fresh scorer network and its ``tx`` state once the model's parameters exist."""

    def data_prepare(num_samples, num_classes, key):
        return CurriculumState(
            weights=jnp.ones(num_samples, jnp.float32),
            extra={"key": jax.random.key_data(key), "classes": jnp.zeros(num_classes)},
        )

    def model_prepare(state, params, num_epochs):
        del num_epochs
        key = jax.random.wrap_key_data(state.extra["key"])
        scorer = init_scorer(params, state.extra["classes"].shape[0], key)
        return state._replace(params=scorer, opt_state=tx.init(scorer))

    return data_prepare, model_prepare
