"""Checkpoints of a whole training run behind one small class over orbax.

A run's checkpoint holds the train state, the base rng and the step; the data position
is the step (see ``jaxlab.data.pipeline``), so a run killed at any moment and resumed from
its workdir ends bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp


class CheckpointError(RuntimeError):
    """A checkpoint exists but cannot be restored into the current run."""


class Checkpointer:
    """Saves and restores ``{"state", "rng", "step"}`` under ``<workdir>/checkpoints``.

    Args:
      workdir: the run's directory.
      keep: how many checkpoints to keep.
    """

    def __init__(self, workdir: str | os.PathLike, keep: int = 2):
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        self.directory = Path(workdir).absolute() / "checkpoints"
        self._manager = ocp.CheckpointManager(
            self.directory,
            options=ocp.CheckpointManagerOptions(max_to_keep=keep, create=True),
        )

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def save(self, step: int, state: Any, rng: jax.Array) -> None:
        item = {"state": state, "rng": _key_data(rng), "step": np.int64(step)}
        self._manager.save(step, args=ocp.args.StandardSave(item))

    def restore(self, state: Any, rng: jax.Array) -> tuple[Any, jax.Array, int] | None:
        """Restores the latest checkpoint shaped like ``(state, rng)``; ``None`` if none.

        Raises:
          CheckpointError: the checkpoint is corrupted or does not match ``state`` (another
            model or config); the message names the directory. A run never restarts
            silently over an unreadable checkpoint.
        """
        step = self._manager.latest_step()
        if step is None:
            return None
        target = {"state": state, "rng": _key_data(rng), "step": np.int64(0)}
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, target)
        try:
            item = self._manager.restore(step, args=ocp.args.StandardRestore(abstract))
        except Exception as error:  # orbax raises many types; all mean "cannot resume"
            raise CheckpointError(
                f"cannot restore the checkpoint at step {step} in {self.directory}: "
                f"{type(error).__name__}: {error}. Delete that directory to start over, or "
                "use another --workdir."
            ) from error
        restored_rng = item["rng"]
        if jax.dtypes.issubdtype(getattr(rng, "dtype", None), jax.dtypes.prng_key):
            restored_rng = jax.random.wrap_key_data(restored_rng, impl=jax.random.key_impl(rng))
        return item["state"], restored_rng, int(item["step"])

    def wait(self) -> None:
        self._manager.wait_until_finished()

    def close(self) -> None:
        self._manager.close()


def _key_data(rng: jax.Array) -> jax.Array:
    if jax.dtypes.issubdtype(rng.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(rng)
    return rng
