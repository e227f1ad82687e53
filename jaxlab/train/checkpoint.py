"""Checkpoints of a whole training run behind one small class over orbax.

A run's checkpoint holds the train state, the base PRNG key (when the run has one), the
step and, for a streamed input, the input's position (each process its own, through grain's
orbax handler). For the in-memory input the data position is the step (see
``jaxlab.data.pipeline``). Either way a run killed at any moment and resumed from its
workdir ends bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import grain
import jax
import numpy as np
import orbax.checkpoint as ocp

_REASON_CHARS = 160  # orbax's messages run to pages; the first line is kept


class CheckpointError(RuntimeError):
    """A checkpoint exists but cannot be restored into the current run."""


class Checkpointer:
    """Saves and restores ``{"state", "key", "step"}`` under ``<workdir>/checkpoints``, and
    the position of a streamed input (an object with ``get_state``/``set_state``, such as
    :class:`jaxlab.train.DeviceStream`) beside them.

    Args:
      workdir: the run's directory.
      keep: how many checkpoints to keep.

    Raises:
      CheckpointError: (here, from ``latest_step`` and from ``restore``) the checkpoints
        cannot be opened or read; one line naming the directory and the remedy.
    """

    def __init__(self, workdir: str | os.PathLike, keep: int = 2):
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        self.directory = Path(workdir).absolute() / "checkpoints"
        try:
            self._manager = ocp.CheckpointManager(
                self.directory,
                options=ocp.CheckpointManagerOptions(max_to_keep=keep, create=True),
            )
        except Exception as error:  # orbax reads the existing steps here
            raise self._error("cannot open the checkpoints", error) from error

    def latest_step(self) -> int | None:
        """The step of the newest checkpoint, ``None`` when there is none.

        Raises:
          CheckpointError: the checkpoint folder cannot be read (see ``restore``).
        """
        try:
            return self._manager.latest_step()
        except Exception as error:  # orbax raises many types; all mean "cannot resume"
            raise self._error("cannot read the checkpoints", error) from error

    def save(
        self, step: int, state: Any, key: jax.Array | None = None, *, data: Any = None
    ) -> None:
        """Saves ``state``, the run's base PRNG ``key`` (typed or raw; ``None``: the run keeps
        its rng in ``state``) and the position of the input ``data`` (or ``None``) at
        ``step``."""
        item = {"state": state, "step": np.asarray(step, np.int64)}
        if key is not None:
            item["key"] = _key_data(key)
        items = {"run": ocp.args.StandardSave(_savable(item))}
        if data is not None:
            items["data"] = grain.checkpoint.CheckpointSave(data)
        self._manager.save(step, args=ocp.args.Composite(**items))

    def restore(
        self, state: Any, key: jax.Array | None = None, *, data: Any = None
    ) -> tuple[Any, Any, int] | None:
        """Restores the latest ``(state, key, step)`` shaped like ``(state, key)``; ``None`` if
        there is no checkpoint. A typed ``key`` gets a typed key back; ``key=None`` gives
        ``None``. ``data`` (the input, as passed to :meth:`save`) is moved to its saved
        position.

        Raises:
          CheckpointError: the checkpoint is corrupted (a truncated file) or does not match
            ``state`` (another model, config or experiment). The message is one line: the
            directory, orbax's reason (shortened) and the remedy; the full orbax error is
            the exception's ``__cause__``. A run never restarts silently over an
            unreadable checkpoint.
        """
        step = self.latest_step()
        if step is None:
            return None
        target = {"state": state, "step": np.asarray(0, np.int64)}
        if key is not None:
            target["key"] = _key_data(key)
        target = _savable(target)
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, target)
        items = {"run": ocp.args.StandardRestore(abstract)}
        if data is not None:
            items["data"] = grain.checkpoint.CheckpointRestore(data)
        try:
            item = self._manager.restore(step, args=ocp.args.Composite(**items))["run"]
        except Exception as error:  # orbax raises many types; all mean "cannot resume"
            raise self._error(f"cannot restore the checkpoint at step {step}", error) from error
        restored_key = item.get("key")
        if key is not None and jax.dtypes.issubdtype(
            getattr(key, "dtype", None), jax.dtypes.prng_key
        ):
            restored_key = jax.random.wrap_key_data(restored_key, impl=jax.random.key_impl(key))
        return item["state"], restored_key, int(item["step"])

    def _error(self, what: str, error: Exception) -> CheckpointError:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        if len(reason) > _REASON_CHARS:
            reason = reason[:_REASON_CHARS] + "..."
        return CheckpointError(
            f"{what} in {self.directory} (corrupted, or written by another model or "
            f"experiment: {type(error).__name__}: {reason}); delete {self.directory} or "
            "pass another --workdir"
        )

    def wait(self) -> None:
        self._manager.wait_until_finished()

    def close(self) -> None:
        self._manager.close()


def _key_data(key: jax.Array) -> jax.Array:
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key)
    return key


def _savable(tree: Any) -> Any:
    """The tree as orbax can save it on every host: global arrays stay global (each process
    writes its shards); on several processes, a process-local array (each process holds the
    same copy: an unsharded run, a base key) becomes a host array, which process 0 writes
    and every process restores."""
    if jax.process_count() == 1:
        return tree
    return jax.tree.map(
        lambda x: np.asarray(x) if isinstance(x, jax.Array) and x.is_fully_addressable else x, tree
    )
