"""CurBench's trainer, shared by its two experiments: one trainer for every curriculum, the
benchmark loop over methods × settings, and the meta-gradient cost measurement.

    trainer = CurriculumTrainer(curriculum, init_fn, apply_fn, batch_size=50,
                                optimizer=config.optimizer, mesh=mesh)
    result = trainer.run(data, seeds=[0, 1, 2], num_epochs=30)
    metrics = run_experiment(config, make_data, init_fn, apply_fn, seeds=seeds,
                             workdir=workdir, teacher=teacher_fn)

Per epoch, on the host, each seed's curriculum gets ``data_curriculum`` (with the current
model's per-sample training losses when it asks for them) and ``model_curriculum``; the
selected samples are shuffled and padded to whole batches, and the epoch's steps run as
one jitted ``lax.scan`` whose step evaluates ``loss_curriculum`` on the per-sample loss.
Every array keeps its shape from epoch to epoch — a smaller subset becomes padded,
skipped steps (``lax.cond``) — so a run compiles its epoch once (``max_traces`` turns
that into an assertion with ``chex.assert_max_traces``). Seeds are batched in one program
(``lax.map`` or ``vmap``, :func:`jaxlab.train.batch_runs`), split over the ``runs`` axis
of a mesh when one with several devices is given. Each epoch validates every seed and keeps
its best-validation parameters, which are tested at the end; wall times per epoch are
recorded. With a ``workdir`` the run saves an orbax checkpoint (model, optimiser and
curriculum states, best parameters, history) after every epoch and resumes from it.

The benchmark loop (:func:`run_curbench`) saves every (setting, method) run, all seeds in
one program, to ``<workdir>/runs/<setting>__<method>.json``; a killed experiment resumes at
the next run. Curricula that need a teacher (TTCL, C2F, Adaptive CL) get its logits and
losses on each setting's training labels. Hyper-parameters are the reference's, with their
200-epoch schedules scaled to the run (:func:`scaled_curriculum`). The cost of the
meta-gradient methods is timed separately, per seed (:func:`epoch_cost_ratios`).

The curriculum selection between epochs is a data-dependent search: it runs on the host in
plain Python, and only the epoch's steps and the evaluation passes are jitted.
"""

from __future__ import annotations

import dataclasses
import functools
import json
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

from jaxlab import curriculum as cl
from jaxlab.curriculum.base import (
    Curriculum,
    CurriculumState,
    EpochInputs,
    StepContext,
    check_weights,
)
from jaxlab.train import batch_runs, make_optimizer, optimizer_step, time_interleaved
from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.lifecycle import atomic_write_text
from jaxlab.train.mesh import RUNS_AXIS, mesh_from_config


class CurriculumData(NamedTuple):
    """A classification task for the curriculum trainer.

    Attributes:
      train_inputs: ``[N, ...]`` training inputs (after the imbalance transform).
      train_labels: ``[N]`` or ``[S, N]`` training labels (per seed, e.g. noisy).
      val_inputs, val_labels: the validation split (model selection).
      test_inputs, test_labels: the test split.
      num_classes: ``C``.
      teacher_losses: ``[N]`` or ``[S, N]`` per-sample losses of a teacher (TTCL), or
        ``None``.
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


class Carry(NamedTuple):
    params: Any
    opt_state: Any
    curriculum: CurriculumState
    key: jax.Array  # raw key data (uint32), checkpointable
    step: jax.Array


def _stack(trees: Sequence[Any]) -> Any:
    """Stacks a list of equally shaped pytrees on a new leading (seed) axis."""
    return jax.tree.map(lambda *a: jnp.stack([jnp.asarray(v) for v in a]), *trees)


def per_sample_ce(logits: jax.Array, labels: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels)


def _cross_entropy(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Host-side per-sample cross-entropy of ``logits [..., n, C]`` at ``labels [..., n]``."""
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, labels[..., None].astype(np.int64), -1)[..., 0]


@dataclasses.dataclass
class CurriculumTrainer:
    """Trains a classifier under one curriculum; the jitted programs are built once.

    Attributes:
      curriculum: the curriculum (its five hooks).
      init_fn: ``key -> params``.
      apply_fn: ``(params, inputs, model_args) -> logits``; ``model_args`` is the dict
        from ``model_curriculum`` (e.g. ``{"sigma": ...}`` for CBS).
      batch_size: training batch size (the meta batch has the same size).
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
        checkpoint is saved after every chunk — a killed run resumes mid-epoch with the
        curriculum state of the epoch (its weights, the loss hook's updates so far) and
        the same batch plan.
      mesh: a mesh whose ``runs`` axis splits the seeds (:func:`jaxlab.train.batch_runs`);
        ``None`` or one device on ``runs``: the default device and the program of
        ``mesh=None`` (a skipped step stays a ``lax.cond`` branch there; split over
        devices it becomes a ``select``: same numbers, full cost).
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

    def __post_init__(self):
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.chunk_steps is not None and self.chunk_steps < 1:
            raise ValueError(f"chunk_steps must be >= 1, got {self.chunk_steps}")
        if self.seed_batching not in ("map", "vmap"):
            raise ValueError(f"seed_batching must be 'map' or 'vmap', got {self.seed_batching!r}")
        self.tx = make_optimizer(self.optimizer)
        self.lr = _constant_rate(self.optimizer)

        def epoch(c, p, y, m, data):  # one seed's epoch: a scan of its steps
            return jax.lax.scan(lambda cc, xs: self._step(data, m, y, cc, xs), c, p)[0]

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
    def _step(self, data, model_args, labels, carry: Carry, xs):
        idx, valid, meta_idx = xs
        curriculum, tx, apply_fn = self.curriculum, self.tx, self.apply_fn

        def loss_fn(p, inputs, y):
            return per_sample_ce(apply_fn(p, inputs, model_args), y)

        def do(carry: Carry) -> Carry:
            x, y = jnp.take(data, idx, axis=0), jnp.take(labels, idx)
            xm, ym = jnp.take(data, meta_idx, axis=0), jnp.take(labels, meta_idx)
            key = jax.random.fold_in(jax.random.wrap_key_data(carry.key), carry.step)
            if curriculum.transform_inputs is not None:  # training batches only
                x = curriculum.transform_inputs(x, carry.curriculum, jax.random.fold_in(key, 1))

            def objective(p):
                logits = apply_fn(p, x, model_args)
                losses = per_sample_ce(logits, y)
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
            return Carry(params, opt_state, cstate, carry.key, carry.step + 1)

        # A batch of padding only (a curriculum chose fewer samples) is skipped entirely.
        return jax.lax.cond(jnp.any(valid), do, lambda c: c, carry), None

    def _logits(self, params, inputs: np.ndarray, model_args) -> np.ndarray:
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

    def _accuracy(self, params, inputs, labels, model_args) -> np.ndarray:
        logits = self._logits(params, np.asarray(inputs), model_args)
        return np.mean(logits.argmax(-1) == np.asarray(labels)[None], axis=1)

    # ---------------------------------------------------------------- host side
    def _plan(
        self,
        weights: np.ndarray,
        rng: np.random.Generator,
        num_steps: int,
        meta_idx: np.ndarray | None,
    ):
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

    def _start(self, data: CurriculumData, seeds: Sequence[int], num_epochs: int):
        """Checked inputs and the initial state of every seed: ``(x [N, ...], labels
        [S, N], carry, base_mask [S, N], meta_sets)`` — ``base_mask`` zeroes each seed's
        held-out meta split (LRE, MW-Net, DDS), ``meta_sets`` its indices (or ``None``)."""
        curriculum = self.curriculum
        x = np.asarray(data.train_inputs)
        n, s = x.shape[0], len(seeds)
        if num_epochs < 1 or s < 1:
            raise ValueError(f"need num_epochs >= 1 and seeds, got {num_epochs}, {seeds}")
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
                meta_sets[i] = np.sort(rngs[i].permutation(n)[:m])
                base_mask[i, meta_sets[i]] = 0.0
        params, cstates = [], []
        for i, key in enumerate(keys):
            k_model, k_cur, k_run = jax.random.split(key, 3)
            params.append(self._init_jit(k_model))
            c = curriculum.data_prepare(n, data.num_classes, k_cur)
            cstates.append(curriculum.model_prepare(c, params[-1], num_epochs))
            keys[i] = k_run
        carry = Carry(
            _stack(params),
            _stack([self.tx.init(p) for p in params]),
            _stack(cstates),
            jnp.stack([jax.random.key_data(k) for k in keys]),
            jnp.zeros(s, jnp.int32),
        )
        return x, labels, carry, base_mask, meta_sets

    def epoch_program(self, data: CurriculumData, seed: int, num_epochs: int) -> Callable[[], Any]:
        """One training epoch of one seed as a function of no arguments (for timing).

        The epoch starts from the seed's initial state and steps through its whole
        training set (less its meta split), the plan ``run`` makes when the curriculum
        keeps every sample; the function returns the new parameters. The first call
        compiles the program for one seed.
        """
        x, labels, carry, base_mask, meta_sets = self._start(data, [seed], num_epochs)
        state = jax.tree.map(lambda a: a[0], jax.device_get(carry.curriculum))
        model_args = _stack([self.curriculum.model_curriculum(state, 0)])
        weights = check_weights(base_mask[0], x.shape[0], f"{self.curriculum.name} weights")
        steps = -(-x.shape[0] // self.batch_size)
        plan = self._plan(weights, np.random.default_rng([int(seed), 2, 0]), steps, meta_sets[0])
        plan = tuple(jnp.asarray(a[None]) for a in plan)
        x_dev, labels_dev = jnp.asarray(x), jnp.asarray(labels)
        return lambda: self._epoch_jit(carry, plan, labels_dev, model_args, x_dev).params

    def run(
        self,
        data: CurriculumData,
        seeds: Sequence[int],
        num_epochs: int,
        workdir: str | None = None,
        progress: bool = False,
        stop_after: int | None = None,
        return_params: bool = False,
        stop_after_chunks: int | None = None,
    ) -> dict[str, Any]:
        """Trains one model per seed; returns per-seed results.

        With ``workdir`` the run checkpoints every epoch and resumes from the last one;
        ``stop_after`` ends this call after that many epochs, ``stop_after_chunks`` after
        that many chunks of ``chunk_steps`` steps (an interrupted run; resumed mid-epoch
        from the workdir's checkpoint by the next call).

        Returns:
          ``{"test_acc": [S], "best_val_acc": [S], "val_acc": [E, S], "epoch_time_s": [E],
          "wall_time_s": float}`` — ``test_acc`` is the test accuracy of each seed's
          best-validation parameters; ``epoch_time_s`` the wall time of each epoch (all
          seeds), the first including compilation. With ``return_params`` also
          ``"params"``: the best-validation parameters stacked over seeds.

        Raises:
          ValueError: bad shapes, a vision-only curriculum on non-image inputs, or a
            curriculum returning invalid weights.
        """
        start_time = time.perf_counter()
        x, labels, carry, base_mask, meta_sets = self._start(data, seeds, num_epochs)
        curriculum, stack = self.curriculum, _stack
        n, s = x.shape[0], len(seeds)
        best_params = carry.params
        best_val = np.full(s, -1.0)
        val_hist = np.zeros((num_epochs, s))
        epoch_times = np.zeros(num_epochs)
        steps_per_epoch = -(-n // self.batch_size)
        chunk = steps_per_epoch if self.chunk_steps is None else self.chunk_steps
        num_chunks = -(-steps_per_epoch // chunk)
        position = 0  # chunks done since the start of the run
        checkpointer = None
        if workdir is not None:
            checkpointer = Checkpointer(workdir, keep=1)
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
        chunks_left = None if stop_after_chunks is None else stop_after_chunks
        for epoch in range(position // num_chunks, last):
            tick = time.perf_counter()
            # A run restored mid-epoch keeps the curriculum state of this epoch's start (its
            # weights; the loss hook's updates so far) and redoes only the epoch's plan.
            resumed_chunk = position % num_chunks if epoch == position // num_chunks else 0
            host = jax.device_get(carry.curriculum)
            model_args = stack(
                [
                    curriculum.model_curriculum(jax.tree.map(lambda a, i=i: a[i], host), epoch)
                    for i in range(s)
                ]
            )
            losses = logits = teacher = teacher_logits = None
            if curriculum.needs_losses and not resumed_chunk:
                logits = self._logits(carry.params, x, model_args)
                losses = _cross_entropy(logits, labels)
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
                if curriculum.epoch_inputs:
                    pick = lambda a, i=i: None if a is None else a[i]
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
                plans.append(self._plan(w, epoch_rng, num_chunks * chunk, meta_sets[i]))
            if not resumed_chunk:
                carry = carry._replace(curriculum=stack(new_states))
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
                if checkpointer is not None and k < num_chunks - 1:
                    checkpointer.save(
                        position,
                        {
                            "carry": carry,
                            "best": best_params,
                            "best_val": best_val,
                            "val": val_hist,
                            "times": epoch_times,
                        },
                        jax.random.key(0),
                    )
            if position < (epoch + 1) * num_chunks:
                break  # interrupted mid-epoch (stop_after_chunks)
            val = self._accuracy(carry.params, val_x, val_y, model_args)
            better = val > best_val
            best_val = np.where(better, val, best_val)
            sel = jnp.asarray(better)
            best_params = jax.tree.map(
                lambda new, old, sel=sel: jnp.where(
                    sel.reshape((-1,) + (1,) * (new.ndim - 1)), new, old
                ),
                carry.params,
                best_params,
            )
            val_hist[epoch] = val
            epoch_times[epoch] = time.perf_counter() - tick
            if checkpointer is not None:
                checkpointer.save(
                    position,
                    {
                        "carry": carry,
                        "best": best_params,
                        "best_val": best_val,
                        "val": val_hist,
                        "times": epoch_times,
                    },
                    jax.random.key(0),
                )
            if progress:
                print(
                    f"[{curriculum.name}] epoch {epoch + 1}/{num_epochs} "
                    f"val {np.round(val, 4).tolist()} ({epoch_times[epoch]:.2f}s)"
                )
        if checkpointer is not None:
            checkpointer.wait()
            checkpointer.close()
        final_args = stack(
            [
                curriculum.model_curriculum(
                    jax.tree.map(lambda a, i=i: a[i], jax.device_get(carry.curriculum)), num_epochs
                )
                for i in range(s)
            ]
        )
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

    def logits(self, params, inputs, model_args: dict | None = None) -> np.ndarray:
        """``[S, n, C]`` logits of seed-stacked ``params`` on ``inputs [n, ...]``."""
        s = jax.tree.leaves(params)[0].shape[0]
        args = jax.tree.map(lambda a: jnp.stack([jnp.asarray(a)] * s), model_args or {})
        return self._logits(params, np.asarray(inputs), args)


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


def _epoch_time(result: dict) -> float:
    times = np.asarray(result["epoch_time_s"])
    return float(np.median(times[1:] if len(times) > 1 else times))  # the first compiles


def summarize_runs(
    runs: dict[str, dict[str, dict]], baseline: str = "baseline"
) -> tuple[dict[str, Any], str]:
    """CurBench's tables from ``runs[setting][method]`` (results of ``run``).

    Returns ``(metrics, markdown)``. Metrics (accuracies in %, lists one entry per seed):
    ``{setting}_{method}_test_acc``, ``{setting}_best_cl_test_acc`` (the curriculum with the
    best mean validation accuracy — chosen without looking at the test set) and
    ``{setting}_gain`` (that minus the baseline). The table also shows each method's median
    epoch time after the first (all seeds in one program) over the baseline's.
    """
    metrics: dict[str, Any] = {}
    lines = []
    for setting, by_method in runs.items():
        if baseline not in by_method:
            raise ValueError(f"setting {setting!r} has no {baseline!r} run")
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
    trainers: dict[str, CurriculumTrainer],
    data: CurriculumData,
    *,
    seeds: Sequence[int],
    num_epochs: int,
    repeats: int,
    baseline: str = "baseline",
) -> dict[str, list[float]]:
    """Per seed, each trainer's epoch time over the baseline trainer's (CurBench Table 8a's
    cost, measured here on the same model and data).

    For every seed the one-epoch programs (:meth:`CurriculumTrainer.epoch_program`) of all
    trainers are timed round-robin by :func:`jaxlab.train.time_interleaved` (one warm-up
    call, which compiles, then ``repeats`` rounds; medians), so a load burst on a shared
    machine slows every method of its round alike. Returns ``{name: [ratio per seed]}`` for
    every trainer but the baseline.
    """
    if baseline not in trainers:
        raise ValueError(f"trainers lack the baseline {baseline!r}: {sorted(trainers)}")
    out: dict[str, list[float]] = {name: [] for name in trainers if name != baseline}
    for seed in seeds:
        fns = {name: t.epoch_program(data, seed, num_epochs) for name, t in trainers.items()}
        times = time_interleaved(fns, repeats=repeats)
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
) -> cl.Curriculum:
    """The curriculum ``name`` with the reference's hyper-parameters: its epoch schedules
    ``schedules[name]`` (keyword -> epochs of a ``reference_epochs``-epoch run) scaled to
    ``num_epochs`` (each at least one epoch); SPL and TTCL's pacing starts at
    ``spl_start_rate`` and reaches the whole set at ``grow_fraction`` of the run; ScreenerNet
    and DDS step at ``lr``."""
    e = num_epochs

    def scale(epochs: int) -> int:
        return max(1, round(epochs / reference_epochs * e))

    pacing = {"start_rate": spl_start_rate, "grow_epochs": max(1, round(grow_fraction * e))}
    kwargs = {"spl": pacing, "ttcl": pacing, "screener_net": {"lr": lr}, "dds": {"lr": lr}}
    kwargs.update(
        {m: {k: scale(v) for k, v in dict(s).items()} for m, s in dict(schedules).items()}
    )
    return cl.get_curriculum(name, **kwargs.get(name, {}))


def curriculum_from_config(name: str, config: Any) -> cl.Curriculum:
    """:func:`scaled_curriculum` with the config's num_epochs, optimizer (its learning rate),
    spl_start_rate, grow_fraction, reference_schedules and reference_epochs."""
    return scaled_curriculum(
        name,
        config.num_epochs,
        _constant_rate(config.optimizer),
        config.spl_start_rate,
        config.grow_fraction,
        config.reference_schedules,
        config.reference_epochs,
    )


def noisy_or_imbalanced(
    data: CurriculumData,
    setting: str,
    seeds: Sequence[int],
    *,
    noise_rate: float | None = None,
    imbalance_ratio: float | None = None,
    imbalance_seed: int = 0,
) -> CurriculumData:
    """A CurBench setting of a clean task: ``"standard"``; ``"noise"`` (per-seed noisy
    labels at ``noise_rate``, :func:`~jaxlab.curriculum.noisy_labels` with key
    ``1000 + seed``); ``"imbalance"`` (the kept subset of
    :func:`~jaxlab.curriculum.imbalance` at ``imbalance_ratio``). The setting's own rate
    must be given."""
    x, y = np.asarray(data.train_inputs), np.asarray(data.train_labels)
    c = data.num_classes
    needs = {"noise": ("noise_rate", noise_rate), "imbalance": ("imbalance_ratio", imbalance_ratio)}
    if setting in needs and needs[setting][1] is None:
        raise ValueError(f"setting {setting!r} needs {needs[setting][0]}")
    if setting == "noise":
        y = np.stack(
            [np.asarray(cl.noisy_labels(y, noise_rate, c, jax.random.key(1000 + s))) for s in seeds]
        )
    elif setting == "imbalance":
        kept = np.asarray(cl.imbalance(y, imbalance_ratio, c, jax.random.key(imbalance_seed)))
        x, y = x[kept], y[kept]
    elif setting != "standard":
        raise ValueError(f"unknown setting {setting!r}; valid: standard, noise, imbalance")
    return data._replace(train_inputs=x, train_labels=y)


def with_teacher(trainer: CurriculumTrainer, params: Any, data: CurriculumData) -> CurriculumData:
    """``data`` with a fixed teacher's logits ``[N, C]`` and per-sample losses (``[N]``, or
    ``[S, N]`` for per-seed labels) on the setting's (possibly noisy) training labels."""
    logits = trainer.logits(params, data.train_inputs)[0]
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    labels = np.asarray(data.train_labels)
    losses = -logp[np.arange(logp.shape[0]), labels]
    return data._replace(teacher_losses=losses, teacher_logits=logits)


def train_teacher(
    teacher_data: CurriculumData,
    init_fn,
    apply_fn,
    seed: int,
    num_epochs: int,
    batch_size: int,
    optimizer: Any,
    eval_batch_size: int,
    seed_batching: str,
) -> tuple[CurriculumTrainer, Any]:
    """A baseline model trained on a held-out clean split (one seed, default device):
    ``(trainer, params)``."""
    trainer = CurriculumTrainer(
        cl.baseline(),
        init_fn,
        apply_fn,
        batch_size=batch_size,
        optimizer=optimizer,
        eval_batch_size=eval_batch_size,
        seed_batching=seed_batching,
    )
    params = trainer.run(teacher_data, [seed], num_epochs, return_params=True)["params"]
    return trainer, params


def run_curbench(
    curricula: dict[str, cl.Curriculum],
    settings: Sequence[str],
    make_data: Callable[[str], CurriculumData],
    init_fn,
    apply_fn,
    *,
    seeds: Sequence[int],
    num_epochs: int,
    batch_size: int,
    optimizer: Any,
    workdir: str,
    seed_batching: str,
    eval_batch_size: int,
    teacher: Callable[[], tuple[CurriculumTrainer, Any]] | None = None,
    chunk_steps: int | None = None,
    mesh: Mesh | None = None,
    verbose: bool = True,
) -> dict[str, dict[str, dict]]:
    """Runs every curriculum in every setting; returns ``runs[setting][method]``.

    Args:
      curricula: name → curriculum (the no-op ``"baseline"`` among them).
      settings: setting names, passed to ``make_data``.
      make_data: ``setting -> CurriculumData``.
      init_fn, apply_fn: the model (see ``CurriculumTrainer``).
      seeds, num_epochs, batch_size, optimizer, seed_batching, eval_batch_size, mesh: the
        trainer's (``mesh``: the seeds of a run split over its ``runs`` axis).
      workdir: finished runs are saved under ``<workdir>/runs`` and not repeated.
      teacher: ``() -> (trainer, params)`` of the teacher, called once if a curriculum
        ``uses_teacher``.
      chunk_steps: if set, each run also checkpoints every ``chunk_steps`` steps under
        ``<workdir>/checkpoints/<setting>__<method>`` and resumes mid-epoch (long runs).
    """
    runs_dir = Path(workdir) / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, dict]] = {s: {} for s in settings}
    teacher_model = None
    for method, curriculum in curricula.items():
        trainer = None
        for setting in settings:
            path = runs_dir / f"{setting}__{method}.json"
            if path.exists():
                runs[setting][method] = json.loads(path.read_text())
                continue
            if trainer is None:  # one trainer per method: settings of equal shapes share
                trainer = CurriculumTrainer(
                    curriculum,
                    init_fn,
                    apply_fn,  # its programs
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
            result = trainer.run(data, list(seeds), num_epochs, workdir=checkpoints)
            atomic_write_text(path, json.dumps(result))
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


def run_experiment(
    config,
    make_data: Callable[[str], CurriculumData],
    init_fn,
    apply_fn,
    *,
    seeds: Sequence[int],
    workdir: str,
    teacher: Callable[[], tuple[CurriculumTrainer, Any]] | None = None,
) -> dict[str, Any]:
    """A CurBench experiment from its config: every curriculum of ``config.methods``
    (``scaled_curriculum`` to the config's epochs and learning rate) in every setting of
    ``config.settings``, then the cost of each of ``config.meta_methods``.

    Returns ``summarize_runs``'s metrics and ``meta_cost_ratio_{method}`` (per seed, its
    epoch time over the baseline's in the ``"standard"`` setting, ``epoch_cost_ratios``
    with ``config.timing_repeats`` rounds); writes the table to ``<workdir>/table.md`` and
    the ratios to ``<workdir>/timing.json`` (read back, not re-timed, on a resumed run).

    The seeds of every run split over the ``runs`` axis of ``config.mesh``; the timing runs
    one seed at a time on the default device.

    ``config`` fields: methods, settings, num_epochs, batch_size, optimizer,
    eval_batch_size, spl_start_rate, grow_fraction, reference_schedules, reference_epochs,
    seed_batching, chunk_steps, mesh, meta_methods, timing_repeats.
    """
    curriculum = functools.partial(curriculum_from_config, config=config)
    runs = run_curbench(
        {m: curriculum(m) for m in config.methods},
        config.settings,
        make_data,
        init_fn,
        apply_fn,
        seeds=seeds,
        num_epochs=config.num_epochs,
        batch_size=config.batch_size,
        optimizer=config.optimizer,
        workdir=workdir,
        seed_batching=config.seed_batching,
        eval_batch_size=config.eval_batch_size,
        teacher=teacher,
        chunk_steps=config.chunk_steps,
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
                batch_size=config.batch_size,
                optimizer=config.optimizer,
                eval_batch_size=config.eval_batch_size,
                seed_batching=config.seed_batching,
            )
            for m in ("baseline", *config.meta_methods)
        }
        ratios = epoch_cost_ratios(
            trainers,
            make_data("standard"),
            seeds=seeds,
            num_epochs=config.num_epochs,
            repeats=config.timing_repeats,
        )
        atomic_write_text(timing, json.dumps(ratios))
    table += "\n### epoch cost (standard setting, per seed, interleaved)\n\n"
    table += "| method | epoch time × baseline |\n|---|---|\n"
    for method, per_seed in ratios.items():
        metrics[f"meta_cost_ratio_{method}"] = per_seed
        table += f"| {method} | {', '.join(f'{r:.2f}' for r in per_seed)} |\n"
    atomic_write_text(Path(workdir) / "table.md", table)
    print(table)
    return metrics
