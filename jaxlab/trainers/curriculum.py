"""The curriculum trainer: every curriculum of :mod:`jaxlab.curriculum` through one training
loop, CurBench's grid of methods × settings over it, and the meta-gradient cost timing.

The method is CurBench's protocol (Zhou et al., "CurBench: Curriculum Learning Benchmark",
ICML 2024, §3): a curriculum is five hooks (:class:`jaxlab.curriculum.Curriculum`) that one
trainer calls at fixed points. For a run of ``E`` epochs over ``N`` training samples and
``S`` seeds, per seed:

    state = model_prepare(data_prepare(N, C, key), params_0, E)          once
    for epoch e:
        state = data_curriculum(state, e, losses_e)      w_e = state.weights  [N], >= 0
        args_e = model_curriculum(state, e)              e.g. CBS's {"sigma": σ_e}
        for each batch B of the samples with w_e > 0 (shuffled, padded to whole batches):
            ℓ_i = CE(f(θ; x_i, args_e), y_i)             per-sample loss, i ∈ B
            L, state = loss_curriculum(ℓ, logits, y, B, state, ctx)
            θ ← optimiser(θ, ∇_θ L)
        validate; keep each seed's best-validation θ
    test the best-validation θ of every seed

Typical use::

    trainer = CurriculumTrainer(curriculum, init_fn, apply_fn, batch_size=50,
                                optimizer={"name": "adam", "learning_rate": 1e-3})
    result = trainer.run(data, seeds=[0, 1, 2], num_epochs=30)     # per-seed accuracies
    metrics = run_benchmark(config, data, init_fn, apply_fn, workdir,
                            teacher_data=teacher_data)            # CurBench's tables

Shapes never change from epoch to epoch (a smaller subset becomes padded, skipped steps:
``lax.cond``), so a run compiles its epoch program once (``max_traces`` makes that an
assertion with ``chex.assert_max_traces``). The seeds of a run are batched in one program
(``lax.map`` or ``vmap``, :func:`jaxlab.train.batch_runs`), split over the ``runs`` axis of
a mesh when one with several devices is given. With a ``workdir`` a run saves a
:class:`jaxlab.train.Checkpointer` checkpoint (model, optimiser and curriculum states, the
best parameters, the history) after every epoch, and with ``chunk_steps`` after every chunk
of that many steps; a killed run resumes from it and ends as the uninterrupted one.

The curriculum selection between epochs is a data-dependent search: it runs on the host in
plain Python, and only the epoch's steps and the evaluation passes are jitted. A run is
therefore a host loop over epochs, each a jitted scan of its steps, and not one
:func:`jaxlab.train.segmented_scan_run`.

The benchmark (:func:`run_benchmark_grid`, :func:`run_benchmark`) saves every
``(setting, method)`` run, all seeds in one program, to
``<workdir>/runs/<setting>__<method>-<digest>.json``; a killed benchmark resumes at the next run.
Curricula that need a teacher (TTCL, C2F, Adaptive CL) get its logits and losses on each
setting's training labels. Hyper-parameters are the reference's, their 200-epoch schedules
scaled to the run (:func:`scaled_curriculum`). The cost of the meta-gradient methods is
timed per seed, the fastest of ``k`` interleaved calls (:func:`epoch_cost_ratios`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from jaxlab._checks import check_callable, check_integer, check_range, check_type
from jaxlab.curriculum import baseline, get_curriculum, imbalance, noisy_labels
from jaxlab.curriculum.base import (
    Curriculum,
    CurriculumState,
    EpochInputs,
    StepContext,
    check_weights,
)
from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.lifecycle import atomic_write_json, atomic_write_text, config_digest
from jaxlab.train.mesh import RUNS_AXIS, mesh_from_config
from jaxlab.train.optim import make_optimizer, optimizer_step
from jaxlab.train.runs import batch_runs
from jaxlab.train.timing import time_min_of_k

__all__ = [
    "BENCHMARK_FIELDS",
    "SETTINGS",
    "TEACHER_SEED_OFFSET",
    "CurriculumData",
    "CurriculumTrainer",
    "TrainCarry",
    "benchmark_setting",
    "curriculum_from_config",
    "epoch_cost_ratios",
    "run_benchmark",
    "run_benchmark_grid",
    "scaled_curriculum",
    "summarize_runs",
    "train_teacher",
    "with_teacher",
]

#: CurBench's settings of a clean task (:func:`benchmark_setting`).
SETTINGS = ("standard", "noise", "imbalance")
#: The teacher of a benchmark trains with seed ``config.seed + TEACHER_SEED_OFFSET``.
TEACHER_SEED_OFFSET = 10_000


class CurriculumData(NamedTuple):
    """A classification task for the curriculum trainer.

    Attributes:
      train_inputs: ``[N, ...]`` training inputs.
      train_labels: ``[N]`` or ``[S, N]`` integer training labels (``[S, N]``: one row per
        seed, e.g. per-seed noisy labels).
      val_inputs, val_labels: ``[n_val, ...]``, ``[n_val]``: the validation split (model
        selection).
      test_inputs, test_labels: ``[n_test, ...]``, ``[n_test]``: the test split.
      num_classes: ``C``.
      teacher_losses: ``[N]`` or ``[S, N]`` per-sample losses of a teacher (TTCL, Adaptive
        CL), or ``None``.
      teacher_logits: ``[N, C]`` the teacher's logits on the training set (C2F, Adaptive
        CL), or ``None``.
    """

    train_inputs: Any
    train_labels: Any
    val_inputs: Any
    val_labels: Any
    test_inputs: Any
    test_labels: Any
    num_classes: int
    teacher_losses: Any = None
    teacher_logits: Any = None


class TrainCarry(NamedTuple):
    """The state of one seed's training, carried through its steps (every leaf an array;
    stacked on a leading seed axis ``[S, ...]`` between epochs).

    Attributes:
      params: the model's parameters ``θ``.
      opt_state: the optimiser's state.
      curriculum: the curriculum's state (weights ``[N]``, learned curriculum parameters).
      key: ``[2]`` raw ``uint32`` key data of the seed's step key (checkpointable); step
        ``t`` draws from ``fold_in(key, t)``.
      step: the number of optimiser steps taken (skipped, padding-only steps not counted).
    """

    params: Any
    opt_state: Any
    curriculum: CurriculumState
    key: jax.Array
    step: jax.Array


def _stack(trees: Sequence[Any]) -> Any:
    """Stacks a list of equally shaped pytrees on a new leading (seed) axis."""
    return jax.tree.map(lambda *a: jnp.stack([jnp.asarray(v) for v in a]), *trees)


@jax.jit
def _select_seeds(take: Any, new: Any, old: Any) -> Any:
    """Per seed, ``new``'s leaves where ``take [S]`` is true, else ``old``'s (one program for
    the whole tree)."""
    return jax.tree.map(
        lambda a, b: jnp.where(take.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), new, old
    )


def _per_sample_cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """``ℓ_i = −log softmax(logits_i)[y_i]``: ``[b, C], [b] -> [b]``."""
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels)


def _host_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Host-side per-sample cross-entropy of ``logits [..., n, C]`` at ``labels [..., n]``."""
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, labels[..., None].astype(np.int64), -1)[..., 0]


def _constant_rate(optimizer: Any) -> float:
    """The optimiser entry's constant learning rate (the meta look-ahead step).

    Raises:
      ValueError: no ``learning_rate``, or a schedule (the look-ahead needs one number).
    """
    rate = optimizer.get("learning_rate") if hasattr(optimizer, "get") else None
    if rate is None or hasattr(rate, "get"):
        raise ValueError(
            "optimizer needs a constant learning_rate (the meta-gradient "
            f"look-ahead step), got {optimizer}"
        )
    return float(rate)


def _check_seed_batching(seed_batching: Any) -> None:
    if seed_batching not in ("map", "vmap"):
        raise ValueError(f"seed_batching must be 'map' or 'vmap', got {seed_batching!r}")


def _check_optional_integer(name: str, value: Any) -> None:
    if value is not None:
        check_integer(name, value, low=1)


def _check_seeds(seeds: Any) -> list[int]:
    """The seeds as a non-empty list of ints >= 0."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise ValueError(f"seeds must be a non-empty sequence of ints, got {seeds!r}")
    return [check_integer("seeds", s, low=0) for s in seeds]


def _check_mesh(mesh: Any) -> None:
    if mesh is not None:
        check_type("mesh", mesh, Mesh)


@dataclasses.dataclass
class CurriculumTrainer:
    """Trains a classifier under one curriculum; the jitted programs are built once.

    Attributes:
      curriculum: the curriculum (its five hooks).
      init_fn: ``key -> params``.
      apply_fn: ``(params, inputs [b, ...], model_args) -> logits [b, C]``; ``model_args``
        is the dict from ``model_curriculum`` (e.g. ``{"sigma": ...}`` for CBS).
      batch_size: training batch size ``b`` (the meta batch has the same size).
      optimizer: the optimiser's config entry (:func:`jaxlab.train.make_optimizer`, e.g.
        ``{"name": "adam", "learning_rate": 1e-3}``); its constant ``learning_rate`` is
        also the look-ahead step of the meta-gradient methods (as in the reference).
      seed_batching: ``"map"`` (``lax.map`` over seeds: skipped steps stay cheap) or
        ``"vmap"``.
      eval_batch_size: chunk size of evaluation passes.
      max_traces: if set, the epoch program may be traced at most this often
        (``chex.assert_max_traces``); a curriculum that changes shapes then fails loudly.
      chunk_steps: if set, each epoch runs as jitted chunks of this many steps (the last
        padded with skipped steps: one compiled program) and, with a ``workdir``, a
        checkpoint is saved after every chunk: a killed run resumes mid-epoch with the
        curriculum state of the epoch (its weights, the loss hook's updates so far) and
        the same batch plan.
      mesh: a mesh whose ``runs`` axis splits the seeds (:func:`jaxlab.train.batch_runs`);
        ``None`` or one device on ``runs``: the default device and the program of
        ``mesh=None`` (a skipped step stays a ``lax.cond`` branch there; split over
        devices it becomes a ``select``: same numbers, full cost).

    Raises:
      ValueError: an argument of the wrong type or out of range, or an ``optimizer``
        without a constant ``learning_rate``.
    """

    curriculum: Curriculum
    init_fn: Callable[[jax.Array], Any]
    apply_fn: Callable[[Any, jax.Array, dict], jax.Array]
    batch_size: int
    optimizer: Any
    seed_batching: str = "map"
    eval_batch_size: int = 500
    max_traces: int | None = None
    chunk_steps: int | None = None
    mesh: Mesh | None = None

    def __post_init__(self) -> None:
        check_type("curriculum", self.curriculum, Curriculum)
        check_callable("init_fn", self.init_fn)
        check_callable("apply_fn", self.apply_fn)
        check_integer("batch_size", self.batch_size, low=1)
        check_integer("eval_batch_size", self.eval_batch_size, low=1)
        _check_optional_integer("max_traces", self.max_traces)
        _check_optional_integer("chunk_steps", self.chunk_steps)
        _check_seed_batching(self.seed_batching)
        _check_mesh(self.mesh)
        self.lr = _constant_rate(self.optimizer)
        self.tx = make_optimizer(self.optimizer)

        def epoch(c, p, y, m, data):  # one seed's epoch: a scan of its steps
            return jax.lax.scan(lambda cc, xs: self.train_step(data, m, y, cc, xs), c, p)[0]

        if self.max_traces is not None:
            # chex counts traces per (definition site, name): a per-trainer name makes the
            # count this trainer's own.
            epoch.__name__ = f"curriculum_epoch_{self.curriculum.name}_{id(self)}"
            epoch = chex.assert_max_traces(epoch, n=self.max_traces)
        runs = 1 if self.mesh is None else self.mesh.shape.get(RUNS_AXIS, 1)
        mesh = self.mesh if runs > 1 else None
        # Per seed: (carry, plan, labels, model_args); the training inputs are shared.
        self._epoch_jit = batch_runs(
            epoch, in_axes=(0, 0, 0, 0, None), method=self.seed_batching, mesh=mesh
        )
        # Logits of one fixed-size chunk [e, ...] for every seed: [S, e, C].
        self._logits_jit = batch_runs(
            lambda p, m, inputs: self.apply_fn(p, inputs, m),
            in_axes=(0, 0, None),
            method=self.seed_batching,
            mesh=mesh,
        )
        self._init_jit = jax.jit(self.init_fn)  # one compile, not one per primitive

    # ---------------------------------------------------------------- jitted programs
    def train_step(
        self,
        inputs: jax.Array,
        model_args: dict,
        labels: jax.Array,
        carry: TrainCarry,
        batch: tuple[jax.Array, jax.Array, jax.Array],
    ) -> tuple[TrainCarry, None]:
        """One optimiser step of one seed (a ``lax.scan`` step; pure, jittable).

        Args:
          inputs: ``[N, ...]`` the training inputs.
          model_args: this epoch's ``model_curriculum`` output.
          labels: ``[N]`` this seed's training labels.
          carry: the seed's state.
          batch: ``(indices [b], valid [b], meta_indices [b])``: the batch's rows of
            ``inputs``, which of them are samples (``False``: padding) and the rows of
            the meta batch (the held-out split of LRE, MW-Net, DDS; else the batch).

        Returns:
          ``(carry, None)``: ``θ ← optimiser(θ, ∇_θ L)`` with ``L`` the curriculum's loss
          of the batch's per-sample cross-entropies, and the curriculum state its loss
          hook returns; a batch of padding only leaves ``carry`` unchanged.
        """
        idx, valid, meta_idx = batch
        curriculum, tx, apply_fn = self.curriculum, self.tx, self.apply_fn

        def loss_fn(p, x, y):
            return _per_sample_cross_entropy(apply_fn(p, x, model_args), y)

        def do(carry: TrainCarry) -> TrainCarry:
            x, y = jnp.take(inputs, idx, axis=0), jnp.take(labels, idx)
            xm, ym = jnp.take(inputs, meta_idx, axis=0), jnp.take(labels, meta_idx)
            key = jax.random.fold_in(jax.random.wrap_key_data(carry.key), carry.step)
            if curriculum.transform_inputs is not None:  # training batches only
                x = curriculum.transform_inputs(x, carry.curriculum, jax.random.fold_in(key, 1))

            def objective(p):
                logits = apply_fn(p, x, model_args)
                losses = _per_sample_cross_entropy(logits, y)
                ctx = StepContext(
                    params=p,
                    loss_fn=loss_fn,
                    apply_fn=lambda q, z: apply_fn(q, z, model_args),
                    inputs=x,
                    valid=valid,
                    meta_inputs=xm,
                    meta_labels=ym,
                    lr=self.lr,
                    step=carry.step,
                    key=key,
                )
                return curriculum.loss_curriculum(losses, logits, y, idx, carry.curriculum, ctx)

            step = optimizer_step(lambda p, _: objective(p), tx, has_aux=True)
            (params, opt_state), (_, cstate) = step((carry.params, carry.opt_state), None)
            return TrainCarry(params, opt_state, cstate, carry.key, carry.step + 1)

        # A batch of padding only (a curriculum chose fewer samples) is skipped entirely.
        return jax.lax.cond(jnp.any(valid), do, lambda c: c, carry), None

    def _logits(self, params: Any, inputs: np.ndarray, model_args: Any) -> np.ndarray:
        """``[S, n, C]`` logits in chunks of ``eval_batch_size`` (one compiled program for
        every split and setting: the last chunk is padded)."""
        n, size = inputs.shape[0], self.eval_batch_size
        out = []
        for start in range(0, n, size):
            chunk = inputs[start : start + size]
            pad = size - chunk.shape[0]
            if pad:
                chunk = np.concatenate([chunk, np.zeros((pad, *chunk.shape[1:]), chunk.dtype)])
            out.append(np.asarray(self._logits_jit(params, model_args, chunk))[:, : size - pad])
        return np.concatenate(out, axis=1)

    def _accuracy(self, params: Any, inputs: Any, labels: Any, model_args: Any) -> np.ndarray:
        """``[S]`` accuracy of every seed's parameters on ``inputs [n, ...]``."""
        logits = self._logits(params, np.asarray(inputs), model_args)
        return np.mean(logits.argmax(-1) == np.asarray(labels)[None], axis=1)

    # ---------------------------------------------------------------- host side
    def _batch_plan(
        self,
        weights: np.ndarray,
        rng: np.random.Generator,
        num_steps: int,
        meta_idx: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One seed's epoch as ``(indices, valid, meta_indices)``, each ``[num_steps, b]``:
        the samples with ``weights > 0`` in a random order, then padding (``valid``
        false); the meta batches cycle through random orders of ``meta_idx`` (``None``:
        the batch itself)."""
        b = self.batch_size
        chosen = rng.permutation(np.flatnonzero(weights > 0))
        idx = np.zeros(num_steps * b, np.int32)
        valid = np.zeros(num_steps * b, bool)
        idx[: len(chosen)], valid[: len(chosen)] = chosen, True
        if meta_idx is None or len(meta_idx) == 0:
            meta = idx.copy()
        else:
            reps = -(-num_steps * b // len(meta_idx))
            meta = np.concatenate([rng.permutation(meta_idx) for _ in range(reps)])
            meta = meta[: num_steps * b].astype(np.int32)
        shape = (num_steps, b)
        return idx.reshape(shape), valid.reshape(shape), meta.reshape(shape)

    def _initial_state(
        self, data: CurriculumData, seeds: Sequence[int], num_epochs: int
    ) -> tuple[np.ndarray, np.ndarray, TrainCarry, np.ndarray, list[np.ndarray | None]]:
        """Checked inputs and the initial state of every seed: ``(x [N, ...], labels
        [S, N], carry, base_mask [S, N], meta_sets)``; ``base_mask`` zeroes each seed's
        held-out meta split (LRE, MW-Net, DDS), ``meta_sets`` its indices (or ``None``)."""
        check_type("data", data, CurriculumData)
        check_integer("num_epochs", num_epochs, low=1)
        seeds = _check_seeds(seeds)
        curriculum = self.curriculum
        x = np.asarray(data.train_inputs)
        n, s = x.shape[0], len(seeds)
        if curriculum.vision_only and x.ndim != 4:
            raise ValueError(
                f"curriculum {curriculum.name!r} is vision-only (CurBench): "
                f"inputs must be images [N, h, w, c], got shape {x.shape}"
            )
        labels = np.asarray(data.train_labels, np.int32)
        labels = np.broadcast_to(labels, (s, n)) if labels.ndim == 1 else labels
        if labels.shape != (s, n):
            raise ValueError(f"train_labels must be [N] or [S, N] = {(s, n)}, got {labels.shape}")
        keys = [jax.random.key(int(seed)) for seed in seeds]
        rngs = [np.random.default_rng([int(seed), 1]) for seed in seeds]
        # Meta split (LRE, MW-Net, DDS): a fixed fraction held out from training.
        base_mask = np.ones((s, n), np.float32)
        meta_sets: list[np.ndarray | None] = [None] * s
        if curriculum.meta_fraction > 0:
            m = max(1, int(n * curriculum.meta_fraction))
            for i in range(s):
                held_out = np.sort(rngs[i].permutation(n)[:m])
                meta_sets[i] = held_out
                base_mask[i, held_out] = 0.0
        params, cstates = [], []
        for i, key in enumerate(keys):
            k_model, k_cur, k_run = jax.random.split(key, 3)
            params.append(self._init_jit(k_model))
            c = curriculum.data_prepare(n, data.num_classes, k_cur)
            cstates.append(curriculum.model_prepare(c, params[-1], num_epochs))
            keys[i] = k_run
        carry = TrainCarry(
            _stack(params),
            _stack([self.tx.init(p) for p in params]),
            _stack(cstates),
            jnp.stack([jax.random.key_data(k) for k in keys]),
            jnp.zeros(s, jnp.int32),
        )
        return x, labels, carry, base_mask, meta_sets

    def _seed_args(self, curriculum_states: Any, epoch: int, num_seeds: int) -> Any:
        """``model_curriculum`` of every seed's (host) curriculum state, stacked ``[S, ...]``."""
        return _stack(
            [
                self.curriculum.model_curriculum(
                    jax.tree.map(lambda a, i=i: a[i], curriculum_states), epoch
                )
                for i in range(num_seeds)
            ]
        )

    def epoch_program(self, data: CurriculumData, seed: int, num_epochs: int) -> Callable[[], Any]:
        """One training epoch of one seed as a function of no arguments (for timing).

        The epoch starts from the seed's initial state and steps through its whole
        training set (less its meta split), the plan ``run`` makes when the curriculum
        keeps every sample; the function returns the new parameters. The first call
        compiles the program for one seed.

        Raises:
          ValueError: bad ``data``, ``seed`` or ``num_epochs`` (see :meth:`run`).
        """
        x, labels, carry, base_mask, meta_sets = self._initial_state(data, [seed], num_epochs)
        state = jax.tree.map(lambda a: a[0], jax.device_get(carry.curriculum))
        model_args = _stack([self.curriculum.model_curriculum(state, 0)])
        weights = check_weights(base_mask[0], x.shape[0], f"{self.curriculum.name} weights")
        steps = -(-x.shape[0] // self.batch_size)
        plan = self._batch_plan(
            weights, np.random.default_rng([int(seed), 2, 0]), steps, meta_sets[0]
        )
        plan_dev = tuple(jnp.asarray(a[None]) for a in plan)
        x_dev, labels_dev = jnp.asarray(x), jnp.asarray(labels)
        return lambda: self._epoch_jit(carry, plan_dev, labels_dev, model_args, x_dev).params

    def run(
        self,
        data: CurriculumData,
        seeds: Sequence[int],
        num_epochs: int,
        workdir: str | os.PathLike | None = None,
        progress: bool = False,
        stop_after: int | None = None,
        return_params: bool = False,
        stop_after_chunks: int | None = None,
    ) -> dict[str, Any]:
        """Trains one model per seed; returns per-seed results.

        Args:
          data: the task.
          seeds: ``S`` seeds (ints >= 0): the model's initialisation, the curriculum's key,
            the meta split and every epoch's batch order derive from each.
          num_epochs: ``E``.
          workdir: if set, the run checkpoints after every epoch (and every chunk of
            ``chunk_steps`` steps) under ``<workdir>/checkpoints`` and resumes from the
            last checkpoint there.
          progress: print each epoch's validation accuracies.
          stop_after: end this call after that many epochs (an interrupted run).
          return_params: also return the best-validation parameters.
          stop_after_chunks: end this call after that many chunks of ``chunk_steps``
            steps (an interrupted run, resumed mid-epoch by the next call).

        Returns:
          ``{"test_acc": [S], "best_val_acc": [S], "val_acc": [E, S], "epoch_time_s": [E],
          "wall_time_s": float}``: ``test_acc`` is the test accuracy of each seed's
          best-validation parameters; ``epoch_time_s`` the wall time of each epoch (all
          seeds), the first including compilation. With ``return_params`` also
          ``"params"``: the best-validation parameters stacked over seeds.

        Raises:
          ValueError: bad shapes or arguments, a vision-only curriculum on non-image
            inputs, or a curriculum returning invalid weights.
        """
        start_time = time.perf_counter()
        _check_optional_integer("stop_after", stop_after)
        if stop_after_chunks is not None:
            check_integer("stop_after_chunks", stop_after_chunks, low=0)
        x, labels, carry, base_mask, meta_sets = self._initial_state(data, seeds, num_epochs)
        curriculum = self.curriculum
        n, s = x.shape[0], len(seeds)
        best_params = carry.params
        best_val = np.full(s, -1.0)
        val_hist = np.zeros((num_epochs, s))
        epoch_times = np.zeros(num_epochs)
        steps_per_epoch = -(-n // self.batch_size)
        chunk = steps_per_epoch if self.chunk_steps is None else self.chunk_steps
        num_chunks = -(-steps_per_epoch // chunk)
        position = 0  # chunks done since the start of the run
        checkpointer = None if workdir is None else Checkpointer(workdir, keep=1)

        def checkpoint(position: int) -> None:
            if checkpointer is not None:
                state = {
                    "carry": carry,
                    "best": best_params,
                    "best_val": best_val,
                    "val": val_hist,
                    "times": epoch_times,
                }
                checkpointer.save(position, state, jax.random.key(0))
                # The save completes before the next epoch's programs run: orbax's background
                # save must not overlap a multi-device program (XLA:CPU's collectives of two
                # programs in flight at once can wait on each other).
                checkpointer.wait()

        if checkpointer is not None:
            target = {
                "carry": carry,
                "best": best_params,
                "best_val": best_val,
                "val": val_hist,
                "times": epoch_times,
            }
            restored = checkpointer.restore(target, jax.random.key(0))
            if restored is not None:
                saved, _, position = restored
                carry, best_params = saved["carry"], saved["best"]
                best_val, val_hist = np.array(saved["best_val"]), np.array(saved["val"])
                epoch_times = np.array(saved["times"])
        x_dev, labels_dev = jnp.asarray(x), jnp.asarray(labels)
        val_x, val_y = np.asarray(data.val_inputs), np.asarray(data.val_labels)
        last = num_epochs if stop_after is None else min(stop_after, num_epochs)
        chunks_left = stop_after_chunks
        for epoch in range(position // num_chunks, last):
            tick = time.perf_counter()
            # A run restored mid-epoch keeps the curriculum state of this epoch's start (its
            # weights; the loss hook's updates so far) and redoes only the epoch's plan.
            resumed_chunk = position % num_chunks if epoch == position // num_chunks else 0
            host = jax.device_get(carry.curriculum)
            model_args = self._seed_args(host, epoch, s)
            losses = logits = teacher = teacher_logits = None
            if curriculum.needs_losses and not resumed_chunk:
                logits = self._logits(carry.params, x, model_args)
                losses = _host_cross_entropy(logits, labels)
            if curriculum.uses_teacher and not resumed_chunk:
                if data.teacher_losses is None:
                    raise ValueError(
                        f"curriculum {curriculum.name!r} needs the task's teacher_losses"
                    )
                teacher = np.broadcast_to(np.asarray(data.teacher_losses, np.float32), (s, n))
                if data.teacher_logits is not None:
                    teacher_logits = np.asarray(data.teacher_logits, np.float32)
            new_states, plans = [], []
            for i in range(s):
                state_i = jax.tree.map(lambda a, i=i: a[i], host)
                arg: Any
                if curriculum.epoch_inputs:
                    pick = lambda a, i=i: None if a is None else a[i]  # noqa: E731
                    arg = EpochInputs(
                        labels[i], pick(losses), pick(logits), pick(teacher), teacher_logits
                    )
                else:
                    arg = losses if curriculum.needs_losses else teacher
                    arg = None if arg is None else arg[i]
                if not resumed_chunk:
                    state_i = curriculum.data_curriculum(state_i, epoch, arg)
                w = check_weights(
                    np.asarray(state_i.weights) * base_mask[i], n, f"{curriculum.name} weights"
                )
                new_states.append(state_i)
                epoch_rng = np.random.default_rng([int(seeds[i]), 2, epoch])
                plans.append(self._batch_plan(w, epoch_rng, num_chunks * chunk, meta_sets[i]))
            if not resumed_chunk:
                carry = carry._replace(curriculum=_stack(new_states))
            plan = tuple(np.stack(p) for p in zip(*plans, strict=True))
            position = epoch * num_chunks + resumed_chunk
            for k in range(resumed_chunk, num_chunks):
                if chunks_left is not None:
                    if chunks_left == 0:
                        break
                    chunks_left -= 1
                part = tuple(jnp.asarray(a[:, k * chunk : (k + 1) * chunk]) for a in plan)
                carry = self._epoch_jit(carry, part, labels_dev, model_args, x_dev)
                position = epoch * num_chunks + k + 1
                if k < num_chunks - 1:
                    checkpoint(position)
            if position < (epoch + 1) * num_chunks:
                break  # interrupted mid-epoch (stop_after_chunks)
            val = self._accuracy(carry.params, val_x, val_y, model_args)
            better = val > best_val
            best_val = np.where(better, val, best_val)
            best_params = _select_seeds(better, carry.params, best_params)
            val_hist[epoch] = val
            epoch_times[epoch] = time.perf_counter() - tick
            checkpoint(position)
            if progress:
                print(
                    f"[{curriculum.name}] epoch {epoch + 1}/{num_epochs} "
                    f"val {np.round(val, 4).tolist()} ({epoch_times[epoch]:.2f}s)"
                )
        if checkpointer is not None:
            checkpointer.wait()
            checkpointer.close()
        final_args = self._seed_args(jax.device_get(carry.curriculum), num_epochs, s)
        test = self._accuracy(best_params, data.test_inputs, data.test_labels, final_args)
        result = {
            "test_acc": test.tolist(),
            "best_val_acc": best_val.tolist(),
            "val_acc": val_hist.tolist(),
            "epoch_time_s": epoch_times.tolist(),
            "wall_time_s": time.perf_counter() - start_time,
        }
        if return_params:
            result["params"] = best_params
        return result

    def logits(self, params: Any, inputs: Any, model_args: dict | None = None) -> np.ndarray:
        """``[S, n, C]`` logits of seed-stacked ``params`` on ``inputs [n, ...]``."""
        s = jax.tree.leaves(params)[0].shape[0]
        args = jax.tree.map(lambda a: jnp.stack([jnp.asarray(a)] * s), model_args or {})
        return self._logits(params, np.asarray(inputs), args)


def _epoch_time(result: Mapping[str, Any]) -> float:
    """The median epoch time of a run after its first epoch (which compiles)."""
    times = np.asarray(result["epoch_time_s"])
    return float(np.median(times[1:] if len(times) > 1 else times))


def summarize_runs(
    runs: Mapping[str, Mapping[str, Mapping[str, Any]]], baseline: str = "baseline"
) -> tuple[dict[str, Any], str]:
    """CurBench's tables from ``runs[setting][method]`` (results of ``run``).

    Returns ``(metrics, markdown)``. Metrics (accuracies in %, lists one entry per seed):
    ``{setting}_{method}_test_acc``, ``{setting}_best_cl_test_acc`` (the curriculum with the
    best mean validation accuracy, chosen without looking at the test set) and
    ``{setting}_gain`` (that minus the baseline). The table also shows each method's median
    epoch time after the first (all seeds in one program) over the baseline's.

    Raises:
      ValueError: no runs, or a setting without a ``baseline`` run.
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(
            f"runs must be a non-empty mapping setting -> method -> result, got {runs!r}"
        )
    metrics: dict[str, Any] = {}
    lines = []
    for setting, by_method in runs.items():
        if baseline not in by_method:
            raise ValueError(f"setting {setting!r} has no baseline {baseline!r} run")
        base_time = _epoch_time(by_method[baseline])
        curricula = [m for m in by_method if m != baseline]
        best = max(curricula, key=lambda m: np.mean(by_method[m]["best_val_acc"]), default=baseline)
        lines += [
            f"\n### {setting}\n",
            "| method | test acc (%) | val acc (%) | time × baseline |",
            "|---|---|---|---|",
        ]
        for method, result in by_method.items():
            acc = 100 * np.asarray(result["test_acc"])
            metrics[f"{setting}_{method}_test_acc"] = acc.tolist()
            mark = " (best by val)" if method == best else ""
            lines.append(
                f"| {method}{mark} | {acc.mean():.2f} ± {acc.std():.2f} | "
                f"{100 * np.mean(result['best_val_acc']):.2f} | "
                f"{_epoch_time(result) / base_time:.2f} |"
            )
        best_acc = 100 * np.asarray(by_method[best]["test_acc"])
        metrics[f"{setting}_best_cl_test_acc"] = best_acc.tolist()
        metrics[f"{setting}_gain"] = (
            best_acc - 100 * np.asarray(by_method[baseline]["test_acc"])
        ).tolist()
    return metrics, "\n".join(lines) + "\n"


def epoch_cost_ratios(
    trainers: Mapping[str, CurriculumTrainer],
    data: CurriculumData,
    *,
    seeds: Sequence[int],
    num_epochs: int,
    k: int,
    baseline: str = "baseline",
) -> dict[str, list[float]]:
    """Per seed, each trainer's epoch time over the baseline trainer's (CurBench Table 8a's
    cost, measured here on the same model and data).

    For every seed the one-epoch programs (:meth:`CurriculumTrainer.epoch_program`, on that
    seed's initial state and batch order) of all trainers are timed by
    :func:`jaxlab.train.time_min_of_k`: one untimed call each (it compiles), then ``k``
    round-robin rounds, each program's fastest call. Load on a shared machine only adds
    time, and a load burst slows every program of its round alike; each seed gives one
    independent ratio ``t_method / t_baseline``.

    Returns:
      ``{name: [ratio per seed]}`` for every trainer but the baseline.

    Raises:
      ValueError: ``trainers`` without ``baseline`` or holding a non-trainer, bad ``data``,
        ``seeds``, ``num_epochs`` or ``k``.
    """
    if not isinstance(trainers, Mapping) or not all(
        isinstance(t, CurriculumTrainer) for t in trainers.values()
    ):
        raise ValueError(f"trainers must map names to CurriculumTrainers, got {trainers!r}")
    if baseline not in trainers:
        raise ValueError(f"trainers lack the baseline {baseline!r}: {sorted(trainers)}")
    check_type("data", data, CurriculumData)
    seeds = _check_seeds(seeds)
    check_integer("num_epochs", num_epochs, low=1)
    check_integer("k", k, low=1)
    out: dict[str, list[float]] = {name: [] for name in trainers if name != baseline}
    for seed in seeds:
        fns = {name: t.epoch_program(data, seed, num_epochs) for name, t in trainers.items()}
        times = time_min_of_k(fns, k=k)
        for name in out:
            out[name].append(times[name] / times[baseline])
    return out


def scaled_curriculum(
    name: str,
    num_epochs: int,
    lr: float,
    spl_start_rate: float,
    grow_fraction: float,
    schedules: Mapping[str, Mapping[str, int]],
    reference_epochs: int,
) -> Curriculum:
    """The curriculum ``name`` with the reference's hyper-parameters, scaled to the run.

    Each epoch count of ``schedules[name]`` (keyword -> epochs of a ``reference_epochs``-
    epoch run) becomes ``max(1, round(epochs / reference_epochs * num_epochs))``; SPL and
    TTCL's pacing starts at ``spl_start_rate`` of the set and reaches all of it after
    ``max(1, round(grow_fraction * num_epochs))`` epochs; ScreenerNet and DDS step at
    ``lr``.

    Raises:
      ValueError: an unknown ``name`` or an argument out of range.
    """
    e = check_integer("num_epochs", num_epochs, low=1)
    reference = check_integer("reference_epochs", reference_epochs, low=1)
    check_range("lr", lr, 0.0, low_open=True)
    check_range("spl_start_rate", spl_start_rate, 0.0, 1.0, low_open=True)
    check_range("grow_fraction", grow_fraction, 0.0, 1.0, low_open=True)
    if not hasattr(schedules, "items"):
        raise ValueError(f"schedules must map a method to its epoch keywords, got {schedules!r}")
    for method, schedule in dict(schedules).items():
        for keyword, epochs in dict(schedule).items():
            check_integer(f"schedules[{method!r}][{keyword!r}]", epochs, low=1)

    def scale(epochs: int) -> int:
        return max(1, round(epochs / reference * e))

    pacing = {"start_rate": spl_start_rate, "grow_epochs": max(1, round(grow_fraction * e))}
    kwargs: dict[str, dict[str, Any]] = {
        "spl": pacing,
        "ttcl": pacing,
        "screener_net": {"lr": lr},
        "dds": {"lr": lr},
    }
    kwargs.update(
        {m: {k: scale(v) for k, v in dict(s).items()} for m, s in dict(schedules).items()}
    )
    return get_curriculum(name, **kwargs.get(name, {}))


_MISSING = object()


def _field(config: Any, name: str, default: Any = _MISSING) -> Any:
    """``config.<name>`` (a ``ConfigDict`` or any object with attributes)."""
    value = getattr(config, name, default)
    if value is _MISSING:
        raise ValueError(f"config lacks the field {name!r} (got {type(config).__name__})")
    return value


def curriculum_from_config(name: str, config: Any) -> Curriculum:
    """:func:`scaled_curriculum` with the config's ``num_epochs``, ``optimizer`` (its
    learning rate), ``spl_start_rate``, ``grow_fraction``, ``reference_schedules`` and
    ``reference_epochs``.

    Raises:
      ValueError: a field missing from ``config``, or as :func:`scaled_curriculum`.
    """
    return scaled_curriculum(
        name,
        _field(config, "num_epochs"),
        _constant_rate(_field(config, "optimizer")),
        _field(config, "spl_start_rate"),
        _field(config, "grow_fraction"),
        _field(config, "reference_schedules"),
        _field(config, "reference_epochs"),
    )


def benchmark_setting(
    data: CurriculumData,
    setting: str,
    seeds: Sequence[int],
    *,
    noise_rate: float | None = None,
    imbalance_ratio: float | None = None,
    imbalance_seed: int = 0,
) -> CurriculumData:
    """A CurBench setting of a clean task.

    ``"standard"``: the task unchanged. ``"noise"``: per-seed labels ``[S, N]``, each a
    fraction ``noise_rate`` flipped (:func:`jaxlab.curriculum.noisy_labels`, key
    ``1000 + seed``). ``"imbalance"``: the subset :func:`jaxlab.curriculum.imbalance` keeps
    at ``imbalance_ratio`` (largest over smallest class, key ``imbalance_seed``). The
    setting's own rate must be given.

    Raises:
      ValueError: an unknown ``setting``, the setting's rate missing or out of range, or
        bad ``data``, ``seeds`` or ``imbalance_seed``.
    """
    check_type("data", data, CurriculumData)
    seeds = _check_seeds(seeds)
    check_integer("imbalance_seed", imbalance_seed, low=0)
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; valid: {', '.join(SETTINGS)}")
    if noise_rate is not None:
        check_range("noise_rate", noise_rate, 0.0, 1.0)
    if imbalance_ratio is not None:
        check_range("imbalance_ratio", imbalance_ratio, 1.0)
    x, y = np.asarray(data.train_inputs), np.asarray(data.train_labels)
    c = data.num_classes
    if setting == "noise":
        if noise_rate is None:
            raise ValueError("setting 'noise' needs noise_rate")
        rate = noise_rate
        y = np.stack(
            [np.asarray(noisy_labels(y, rate, c, jax.random.key(1000 + s))) for s in seeds]
        )
    elif setting == "imbalance":
        if imbalance_ratio is None:
            raise ValueError("setting 'imbalance' needs imbalance_ratio")
        kept = np.asarray(imbalance(y, imbalance_ratio, c, jax.random.key(imbalance_seed)))
        x, y = x[kept], y[kept]
    return data._replace(train_inputs=x, train_labels=y)


def with_teacher(trainer: CurriculumTrainer, params: Any, data: CurriculumData) -> CurriculumData:
    """``data`` with a fixed teacher's logits ``[N, C]`` and per-sample cross-entropies
    (``[N]``, or ``[S, N]`` for per-seed labels) on the task's training labels.

    Args:
      trainer: the teacher's trainer (its model).
      params: the teacher's parameters, stacked on a leading axis of one seed.
      data: the task.

    Raises:
      ValueError: ``trainer`` or ``data`` of the wrong type, ``params`` not one seed's.
    """
    check_type("trainer", trainer, CurriculumTrainer)
    check_type("data", data, CurriculumData)
    leaves = jax.tree.leaves(params)
    if not leaves or any(np.ndim(leaf) < 1 or np.shape(leaf)[0] != 1 for leaf in leaves):
        raise ValueError("params must be one seed's parameters stacked on a leading axis of 1")
    logits = trainer.logits(params, data.train_inputs)[0]
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    labels = np.asarray(data.train_labels)
    losses = -logp[np.arange(logp.shape[0]), labels]
    return data._replace(teacher_losses=losses, teacher_logits=logits)


def train_teacher(
    teacher_data: CurriculumData,
    init_fn: Callable[[jax.Array], Any],
    apply_fn: Callable[[Any, jax.Array, dict], jax.Array],
    seed: int,
    num_epochs: int,
    batch_size: int,
    optimizer: Any,
    eval_batch_size: int,
    seed_batching: str,
) -> tuple[CurriculumTrainer, Any]:
    """A baseline model trained on a held-out clean split (one seed, default device).

    Returns:
      ``(trainer, params)``: the teacher's trainer and its best-validation parameters
      (stacked over the one seed), as :func:`with_teacher` takes them.

    Raises:
      ValueError: as :class:`CurriculumTrainer` and :meth:`CurriculumTrainer.run`.
    """
    check_type("teacher_data", teacher_data, CurriculumData)
    check_integer("seed", seed, low=0)
    trainer = CurriculumTrainer(
        baseline(),
        init_fn,
        apply_fn,
        batch_size=batch_size,
        optimizer=optimizer,
        eval_batch_size=eval_batch_size,
        seed_batching=seed_batching,
    )
    params = trainer.run(teacher_data, [seed], num_epochs, return_params=True)["params"]
    return trainer, params


def run_benchmark_grid(
    curricula: Mapping[str, Curriculum],
    settings: Sequence[str],
    make_data: Callable[[str], CurriculumData],
    init_fn: Callable[[jax.Array], Any],
    apply_fn: Callable[[Any, jax.Array, dict], jax.Array],
    *,
    seeds: Sequence[int],
    num_epochs: int,
    batch_size: int,
    optimizer: Any,
    workdir: str | os.PathLike,
    seed_batching: str,
    eval_batch_size: int,
    teacher: Callable[[], tuple[CurriculumTrainer, Any]] | None = None,
    chunk_steps: int | None = None,
    mesh: Mesh | None = None,
    verbose: bool = True,
) -> dict[str, dict[str, dict]]:
    """Runs every curriculum in every setting; returns ``runs[setting][method]``.

    Args:
      curricula: name -> curriculum (the no-op ``"baseline"`` among them).
      settings: setting names, passed to ``make_data``.
      make_data: ``setting -> CurriculumData``.
      init_fn, apply_fn: the model (see :class:`CurriculumTrainer`).
      seeds, num_epochs, batch_size, optimizer, seed_batching, eval_batch_size, mesh: the
        trainer's (``mesh``: the seeds of a run split over its ``runs`` axis).
      workdir: each finished run is saved, atomically, as
        ``<workdir>/runs/<setting>__<method>-<digest>.json`` and not repeated; the digest
        (``jaxlab.train.config_digest``) is of the seeds, epochs, batch sizes, optimiser,
        seed batching and chunking, so a run of other settings is never read. A
        curriculum enters by its name: give one of other hyper-parameters another name
        (or another workdir).
      teacher: ``() -> (trainer, params)`` of the teacher, called once if a curriculum
        ``uses_teacher``.
      chunk_steps: if set, each run also checkpoints every ``chunk_steps`` steps under
        ``<workdir>/checkpoints/<setting>__<method>-<digest>`` and resumes mid-epoch (long
        runs).
      verbose: print each run's test accuracy.

    Raises:
      ValueError: an argument of the wrong type or out of range, or a curriculum that
        needs a teacher without ``teacher``.
    """
    if not isinstance(curricula, Mapping) or not curricula:
        raise ValueError(
            f"curricula must be a non-empty mapping name -> Curriculum, got {curricula!r}"
        )
    for curriculum in curricula.values():
        check_type("curricula", curriculum, Curriculum)
    if isinstance(settings, str) or not isinstance(settings, Sequence) or not settings:
        raise ValueError(f"settings must be a non-empty sequence of names, got {settings!r}")
    check_callable("make_data", make_data)
    check_callable("init_fn", init_fn)
    check_callable("apply_fn", apply_fn)
    seeds = _check_seeds(seeds)
    check_integer("num_epochs", num_epochs, low=1)
    check_integer("batch_size", batch_size, low=1)
    _constant_rate(optimizer)
    if not isinstance(workdir, (str, os.PathLike)):
        raise ValueError(f"workdir must be a path, got {workdir!r}")
    _check_seed_batching(seed_batching)
    check_integer("eval_batch_size", eval_batch_size, low=1)
    if teacher is not None:
        check_callable("teacher", teacher)
    _check_optional_integer("chunk_steps", chunk_steps)
    _check_mesh(mesh)
    runs_dir = Path(workdir) / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, dict]] = {s: {} for s in settings}
    teacher_model = None
    digest = config_digest(
        {
            "seeds": seeds,
            "num_epochs": num_epochs,
            "batch_size": batch_size,
            "optimizer": optimizer,
            "seed_batching": seed_batching,
            "eval_batch_size": eval_batch_size,
            "chunk_steps": chunk_steps,
        }
    )
    for method, curriculum in curricula.items():
        trainer = None
        for setting in settings:
            path = runs_dir / f"{setting}__{method}-{digest}.json"
            if path.exists():
                runs[setting][method] = json.loads(path.read_text())
                continue
            if trainer is None:  # one trainer per method: settings of equal shapes share
                trainer = CurriculumTrainer(  # its programs
                    curriculum,
                    init_fn,
                    apply_fn,
                    batch_size=batch_size,
                    optimizer=optimizer,
                    seed_batching=seed_batching,
                    eval_batch_size=eval_batch_size,
                    chunk_steps=chunk_steps,
                    mesh=mesh,
                )
            data = make_data(setting)
            if curriculum.uses_teacher:
                if teacher is None:
                    raise ValueError(f"curriculum {method!r} needs a teacher")
                if teacher_model is None:
                    teacher_model = teacher()
                data = with_teacher(*teacher_model, data)
            checkpoints = None
            if chunk_steps is not None:
                checkpoints = str(Path(workdir).resolve() / "checkpoints" / path.stem)
            result = trainer.run(data, seeds, num_epochs, workdir=checkpoints)
            atomic_write_json(path, result)
            runs[setting][method] = result
            if verbose:
                print(
                    f"{setting:>9} {method:>15}: test "
                    f"{100 * np.mean(result['test_acc']):.2f} ± "
                    f"{100 * np.std(result['test_acc']):.2f}  "
                    f"({result['wall_time_s']:.1f} s)",
                    flush=True,
                )
    return runs


#: The config fields :func:`run_benchmark` reads.
BENCHMARK_FIELDS = (
    "seed",
    "num_seeds",
    "methods",
    "settings",
    "num_epochs",
    "batch_size",
    "optimizer",
    "eval_batch_size",
    "spl_start_rate",
    "grow_fraction",
    "reference_schedules",
    "reference_epochs",
    "seed_batching",
    "chunk_steps",
    "meta_methods",
    "timing_repeats",
)


def run_benchmark(
    config: Any,
    data: CurriculumData,
    init_fn: Callable[[jax.Array], Any],
    apply_fn: Callable[[Any, jax.Array, dict], jax.Array],
    workdir: str | os.PathLike,
    teacher_data: CurriculumData | None = None,
) -> dict[str, Any]:
    """A CurBench experiment from its config: every curriculum of ``config.methods`` in
    every setting of ``config.settings`` (:func:`benchmark_setting` of the clean task
    ``data``), then the cost of each of ``config.meta_methods``.

    The seeds are ``config.seed .. config.seed + config.num_seeds - 1``; the curricula are
    :func:`curriculum_from_config`'s; the seeds of every run split over the ``runs`` axis of
    ``config.mesh``. A curriculum with a teacher gets a baseline model trained on
    ``teacher_data`` (seed ``config.seed + TEACHER_SEED_OFFSET``, the config's epochs,
    batch and optimiser, :func:`train_teacher`).

    Returns:
      :func:`summarize_runs`'s metrics and ``meta_cost_ratio_{method}``: per seed, the
      method's epoch time over the baseline's in the ``"standard"`` setting, each the
      fastest of ``config.timing_repeats`` interleaved calls (:func:`epoch_cost_ratios`;
      one seed at a time on the default device). The table goes to
      ``<workdir>/table.md``, the ratios to ``<workdir>/timing.json`` (read back, not
      re-timed, on a resumed run).

    Raises:
      ValueError: a field of :data:`BENCHMARK_FIELDS` missing from ``config``, bad
        ``data``, ``teacher_data``, ``workdir``, model functions, or as
        :func:`run_benchmark_grid`.
    """
    fields = {name: _field(config, name) for name in BENCHMARK_FIELDS}
    check_type("data", data, CurriculumData)
    if teacher_data is not None:
        check_type("teacher_data", teacher_data, CurriculumData)
    check_callable("init_fn", init_fn)
    check_callable("apply_fn", apply_fn)
    if not isinstance(workdir, (str, os.PathLike)):
        raise ValueError(f"workdir must be a path, got {workdir!r}")
    seed = check_integer("config.seed", fields["seed"], low=0)
    seeds = list(range(seed, seed + check_integer("config.num_seeds", fields["num_seeds"], low=1)))

    def curriculum(name: str) -> Curriculum:
        return curriculum_from_config(name, config)

    def make_data(setting: str) -> CurriculumData:
        return benchmark_setting(
            data,
            setting,
            seeds,
            noise_rate=_field(config, "noise_rate", None),
            imbalance_ratio=_field(config, "imbalance_ratio", None),
            imbalance_seed=seed,
        )

    def teacher() -> tuple[CurriculumTrainer, Any]:
        if teacher_data is None:
            raise ValueError("a curriculum of config.methods needs teacher_data")
        return train_teacher(
            teacher_data,
            init_fn,
            apply_fn,
            seed + TEACHER_SEED_OFFSET,
            fields["num_epochs"],
            fields["batch_size"],
            fields["optimizer"],
            fields["eval_batch_size"],
            fields["seed_batching"],
        )

    runs = run_benchmark_grid(
        {m: curriculum(m) for m in fields["methods"]},
        fields["settings"],
        make_data,
        init_fn,
        apply_fn,
        seeds=seeds,
        num_epochs=fields["num_epochs"],
        batch_size=fields["batch_size"],
        optimizer=fields["optimizer"],
        workdir=workdir,
        seed_batching=fields["seed_batching"],
        eval_batch_size=fields["eval_batch_size"],
        teacher=teacher,
        chunk_steps=fields["chunk_steps"],
        mesh=mesh_from_config(config, RUNS_AXIS),
    )
    metrics, table = summarize_runs(runs)
    timing = Path(workdir) / "timing.json"
    if timing.exists():
        ratios = json.loads(timing.read_text())
    else:
        trainers = {
            m: CurriculumTrainer(
                curriculum(m),
                init_fn,
                apply_fn,
                batch_size=fields["batch_size"],
                optimizer=fields["optimizer"],
                eval_batch_size=fields["eval_batch_size"],
                seed_batching=fields["seed_batching"],
            )
            for m in ("baseline", *fields["meta_methods"])
        }
        ratios = epoch_cost_ratios(
            trainers,
            make_data("standard"),
            seeds=seeds,
            num_epochs=fields["num_epochs"],
            k=fields["timing_repeats"],
        )
        atomic_write_json(timing, ratios)
    table += "\n### epoch cost (standard setting, per seed, fastest of k interleaved calls)\n\n"
    table += "| method | epoch time × baseline |\n|---|---|\n"
    for method, per_seed in ratios.items():
        metrics[f"meta_cost_ratio_{method}"] = per_seed
        table += f"| {method} | {', '.join(f'{r:.2f}' for r in per_seed)} |\n"
    atomic_write_text(Path(workdir) / "table.md", table)
    print(table)
    return metrics
