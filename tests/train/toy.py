"""A small model for the harness tests (not a registered experiment)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training import train_state

from jaxlab.data.pipeline import batch_dataset

GLOBAL_BATCH = 32


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x, *, train: bool):
        x = nn.relu(nn.Dense(32)(x))
        x = nn.Dropout(0.1, deterministic=not train)(x)
        return nn.Dense(4)(x)


def make_data(seed: int = 0, n: int = 256) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8)).astype(np.float32)
    w = rng.normal(size=(8, 4)).astype(np.float32)
    return {"x": x, "y": np.argmax(x @ w, axis=-1).astype(np.int32)}


def make_state(seed: int = 0) -> train_state.TrainState:
    model = MLP()
    params = model.init(jax.random.key(seed), jnp.zeros((1, 8)), train=False)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-2))


def train_step(state, batch, key):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch["x"], train=True, rngs={"dropout": key})
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), {"loss": loss}


def batches(seed: int = 0, **kwargs):
    ds = batch_dataset(make_data(seed), GLOBAL_BATCH, seed=seed, **kwargs)
    return lambda step: ds[step]


def flat_params(state) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(p)) for p in jax.tree.leaves(state.params)])
