"""The shared train loop: a pure ``train_step`` jitted with donation, checkpointed, logged.

``fit`` owns what every experiment would otherwise re-write: the jitted step with explicit
shardings and buffer donation, the per-step key (``fold_in(key, step)``), evaluation every
``eval_every`` steps, metrics to JSONL/TensorBoard, a progress bar with the live loss, and
orbax checkpoints from which a killed run resumes bit-identically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax
import tqdm.auto as tqdm
from flax.training import train_state
from jax.sharding import Mesh

from jaxlab.train import mesh as mesh_lib
from jaxlab.train.checkpoint import Checkpointer, CheckpointError
from jaxlab.train.metrics import MetricsWriter
from jaxlab.train.prefetch import DeviceStream

State = Any
Batch = Any
Metrics = Mapping[str, jax.Array]
TrainStep = Callable[[State, Batch, jax.Array], tuple[State, Metrics]]  # (state, batch, key)


def fit(
    *,
    state: State,
    train_step: TrainStep,
    batch_at: Callable[[int], Batch] | None = None,
    batches: DeviceStream | None = None,
    num_steps: int,
    key: jax.Array,
    workdir: str | os.PathLike | None = None,
    eval_fn: Callable[[State], Mapping[str, float]] | None = None,
    eval_every: int = 0,
    checkpoint_every: int = 0,
    keep: int = 2,
    log_every: int = 10,
    desc: str = "train",
    hparams: Mapping[str, Any] | None = None,
    mesh: Mesh | None = None,
    progress: bool = True,
) -> tuple[State, list[dict[str, float]]]:
    """Trains ``state`` for ``num_steps`` steps, resuming from ``workdir`` if it holds a run.

    Args:
      state: the train state, any pytree of arrays (e.g. a flax ``TrainState``).
      train_step: pure ``(state, batch, key) -> (state, metrics)``; its key is
        ``fold_in(key, step)``.
      batch_at: ``step -> batch`` (this process's rows); the data position is the step.
      batches: instead of ``batch_at``, a streamed input (:class:`DeviceStream` of a grain
        loader) whose position is saved with every checkpoint and restored on resume.
      num_steps: total number of steps of the run (not of this call).
      key: base PRNG key of the run.
      workdir: where metrics, hyper-parameters and checkpoints go; ``None`` keeps nothing.
      eval_fn: ``state -> {name: value}``, run every ``eval_every`` steps and at the end.
      checkpoint_every: save every this many steps (and always at the end); 0: at the end.
      keep: checkpoints kept.
      log_every: log train metrics every this many steps (and at the last step); a row is
        read from the device after the next step is dispatched.
      mesh: place the state replicated and batches split over the mesh's ``data`` axis;
        ``None`` runs on the default device.

    Returns:
      ``(state, history)``: the final state and every logged row ``{"step", **metrics}``.

    Raises:
      jaxlab.train.checkpoint.CheckpointError: ``workdir`` holds a checkpoint that does
        not restore into ``state``, or one written with other ``hparams``.
    """
    if num_steps < 0:
        raise ValueError(f"num_steps must be >= 0, got {num_steps}")
    if (batch_at is None) == (batches is None):
        raise ValueError("fit needs exactly one of batch_at (in-memory) and batches (a stream)")
    if batches is not None and batches.mesh is not mesh:
        raise ValueError("fit(batches=...) needs the stream's mesh as its mesh")

    def step_fn(state, batch, key, step):
        return train_step(state, batch, jax.random.fold_in(key, step))

    if mesh is not None:
        state = mesh_lib.replicate(state, mesh)
        key = mesh_lib.replicate(key, mesh)
        state_shardings = jax.tree.map(lambda x: x.sharding, state)
        rep = mesh_lib.replicated(mesh)
        jitted = jax.jit(
            step_fn,
            donate_argnums=0,
            in_shardings=(state_shardings, mesh_lib.batch_sharding(mesh), rep, rep),
            out_shardings=(state_shardings, rep),
        )
        place = lambda batch: mesh_lib.put_batch(batch, mesh)
        if batches is not None:
            place = lambda batch: batch  # the stream places its batches on the mesh
    else:
        jitted = jax.jit(step_fn, donate_argnums=0)
        place = lambda batch: batch

    writer = checkpointer = None
    history: list[dict[str, float]] = []
    start = 0
    if workdir is not None:
        checkpointer = Checkpointer(workdir, keep=keep)
        restored = checkpointer.restore(state, key, data=batches)
        if jax.process_index() == 0:
            writer = MetricsWriter(workdir)
        if restored is not None:
            _check_same_hparams(workdir, hparams or {}, checkpointer.directory)
            state, key, start = restored
            if writer is not None:
                history = writer.truncate_after(start)
        elif writer is not None:
            writer.truncate_after(-1)
            writer.write_hparams(hparams or {})

    def log(step: int, metrics: Mapping[str, Any]) -> dict[str, float]:
        row = {"step": step, **{k: float(v) for k, v in jax.device_get(dict(metrics)).items()}}
        history.append(row)
        if writer is not None:
            writer.write(step, {k: v for k, v in row.items() if k != "step"})
        return row

    bar = tqdm.tqdm(total=num_steps, initial=start, desc=desc, disable=not progress)
    # A logged step's metrics are read one step late: after the next step is dispatched, so
    # the host's read does not stall the device between steps.
    pending: list[tuple[int, Mapping[str, Any]]] = []

    def flush() -> None:
        for done, metrics in pending:
            row = log(done, metrics)
            bar.set_postfix({k: f"{v:.4g}" for k, v in row.items() if k != "step"}, refresh=False)
        pending.clear()

    try:
        for step in range(start, num_steps):
            batch = next(batches) if batches is not None else batch_at(step)  # type: ignore[misc]
            state, metrics = jitted(state, place(batch), key, step)
            flush()
            done = step + 1
            if done % max(log_every, 1) == 0 or done == num_steps:
                pending.append((done, metrics))
            if eval_fn is not None and (
                (eval_every and done % eval_every == 0) or done == num_steps
            ):
                flush()
                log(done, eval_fn(state))
            if checkpointer is not None and (
                (checkpoint_every and done % checkpoint_every == 0) or done == num_steps
            ):
                flush()  # a checkpoint never holds a step whose metrics are unwritten
                checkpointer.save(done, state, key, data=batches)
            bar.update(1)
        flush()
    finally:  # also on an exception (an interrupt): the checkpoint being written completes
        bar.close()
        if checkpointer is not None:
            checkpointer.wait()
            checkpointer.close()
        if writer is not None:
            writer.close()
    return state, history


def create_state(
    model: Any, example_input: Any, tx: Any, key: jax.Array
) -> tuple[train_state.TrainState, jax.Array]:
    """A flax ``TrainState`` for ``model`` and the training key, both split from ``key``.

    The parameters come from one jitted ``model.init`` on ``example_input`` (e.g. a batch
    of one); ``tx`` is the optax optimiser. Returns ``(state, key)`` for :func:`fit`.
    """
    init_key, train_key = jax.random.split(key)
    params = jax.jit(model.init)(init_key, example_input)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx), train_key


def _check_same_hparams(workdir, hparams: Mapping[str, Any], checkpoints) -> None:
    """A checkpoint of a run with other hyper-parameters must not be resumed silently."""
    path = Path(workdir) / "hparams.json"
    if not path.exists():
        return
    saved = json.loads(path.read_text())
    current = json.loads(json.dumps(dict(hparams), sort_keys=True, default=str))
    if saved != current:
        changed = sorted(k for k in saved.keys() | current.keys() if saved.get(k) != current.get(k))
        raise CheckpointError(
            f"the checkpoint in {checkpoints} was written by a run with other hyper-parameters "
            f"(differing: {', '.join(changed)}); use another --workdir or delete it to start over"
        )
