"""MCF training pieces: position normalization, the train state with EMA, the train step.

Everything here is a pure function of arrays; the loop that calls the step (checkpoints,
logging) is :func:`jaxlab.train.fit`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from jaxlab.chem.mcf import MCFDenoiser, center_positions, mcf_loss
from jaxlab.diffusion import Schedule


class PositionScale(NamedTuple):
    """Per-axis min–max normalization of centered positions (constants of the train split).

    x̃ = center(2 (x − x_min) / (x_max − x_min) − 1): per-axis scaling to [−1, 1], then
    the center of mass is moved to 0 (the offset disappears in the centering).
    """

    minimum: np.ndarray  # [3], float
    maximum: np.ndarray  # [3], float

    def normalize(self, positions: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``positions [B, N, 3]`` in Å, ``mask [B, N]`` → normalized and centered."""
        mask_j = jnp.asarray(mask)
        centered = center_positions(jnp.asarray(positions, jnp.float32), mask_j)
        axes = (1,) * (centered.ndim - 1) + (3,)
        lo = jnp.reshape(jnp.asarray(self.minimum, jnp.float32), axes)
        span = jnp.reshape(jnp.asarray(self.maximum - self.minimum, jnp.float32), axes)
        scaled = 2.0 * (centered - lo) / span - 1.0
        return np.asarray(center_positions(scaled, mask_j))

    def denormalize(self, positions: np.ndarray) -> np.ndarray:
        """Normalized → Å (up to a translation, which RMSD ignores)."""
        span = np.asarray(self.maximum) - np.asarray(self.minimum)
        return np.asarray(positions) * span / 2.0


class MCFState(struct.PyTreeNode):
    """Parameters, their exponential moving average, optimizer state and step."""

    step: jax.Array
    params: Any
    ema_params: Any
    opt_state: Any


def init_state(
    model: MCFDenoiser,
    optimizer: optax.GradientTransformation,
    example: dict[str, np.ndarray],
    key: jax.Array,
) -> MCFState:
    """Initial state from one (padded) example batch; ``key`` initialises the parameters."""
    t = jnp.zeros(example["mask"].shape[:1], jnp.int32)
    params = model.init(key, example["atom_coords"], example["positions"], t, example["mask"])
    return MCFState(
        step=jnp.zeros((), jnp.int32),
        params=params,
        ema_params=jax.tree.map(jnp.copy, params),  # separate buffers (donation)
        opt_state=optimizer.init(params),
    )


def make_train_step(
    model: MCFDenoiser,
    optimizer: optax.GradientTransformation,
    schedule: Schedule,
    ema_decay: float,
) -> Callable[[MCFState, dict, jax.Array], tuple[MCFState, dict]]:
    """The pure ``train_step(state, batch, key) -> (state, metrics)`` of MCF."""

    def train_step(state: MCFState, batch: dict, key: jax.Array):
        loss, grads = jax.value_and_grad(lambda p: mcf_loss(model.apply, p, schedule, batch, key))(
            state.params
        )
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        ema = jax.tree.map(
            lambda e, p: ema_decay * e + (1 - ema_decay) * p, state.ema_params, params
        )
        new = MCFState(step=state.step + 1, params=params, ema_params=ema, opt_state=opt_state)
        return new, {"loss": loss, "grad_norm": optax.global_norm(grads)}

    return train_step
