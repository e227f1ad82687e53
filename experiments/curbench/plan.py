"""``jaxlab plan`` for CurBench's experiments: one training step of the costliest run.

The step is :meth:`jaxlab.trainers.curriculum.CurriculumTrainer.train_step` (what ``run``
scans) of the first meta-gradient method the config runs (LRE, MW-Net or DDS: a look-ahead
step and a meta gradient, the heaviest per step; the baseline otherwise), with the
trainer's ``"vmap"`` seed batching: every seed advances in one call, the seeds split over
the ``runs`` mesh axis (padded to it), the training set replicated. Every run is costed at
this step, an upper bound for the cheaper curricula. The evaluation (the logits of every
seed on ``eval_batch_size`` rows a call: the validation split each epoch, the test split
once) is a program of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from jaxlab.train.lifecycle import padded_runs, runs_sharding
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab.trainers.curriculum import CurriculumTrainer, TrainCarry, curriculum_from_config


def plan_spec(
    config: Any,
    mesh: Mesh,
    init_fn: Callable,
    apply_fn: Callable,
    train_inputs: jax.ShapeDtypeStruct,
    num_classes: int,
) -> PlanSpec:
    """The :class:`~jaxlab.train.plan.PlanSpec` of a CurBench experiment.

    Args:
      config: the experiment's config (methods, meta_methods, settings, num_seeds,
        num_epochs, batch_size, optimizer, eval_batch_size and the curriculum's fields, see
        :func:`jaxlab.trainers.curriculum.curriculum_from_config`).
      mesh: the plan's mesh.
      init_fn, apply_fn: the model, as the experiment gives them to the trainer.
      train_inputs: the training set's shape and dtype ``[N, ...]``.
      num_classes: ``C``.
    """
    method = next((m for m in config.methods if m in config.meta_methods), "baseline")
    curriculum = curriculum_from_config(method, config)
    trainer = CurriculumTrainer(
        curriculum,
        init_fn,
        apply_fn,
        batch_size=config.batch_size,
        optimizer=config.optimizer,
        seed_batching="vmap",
        eval_batch_size=config.eval_batch_size,
    )
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    n, b = train_inputs.shape[0], config.batch_size

    def init(key):  # as CurriculumTrainer.run's initial state, for one seed
        k_model, k_cur, k_run = jax.random.split(key, 3)
        params = init_fn(k_model)
        state = curriculum.data_prepare(n, num_classes, k_cur)
        state = curriculum.model_prepare(state, params, config.num_epochs)
        return TrainCarry(
            params,
            trainer.tx.init(params),
            state,
            jax.random.key_data(k_run),
            jnp.zeros((), jnp.int32),
        )

    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    carry = jax.eval_shape(jax.vmap(init), keys)
    model_args = jax.eval_shape(
        jax.vmap(lambda s: curriculum.model_curriculum(s, 0)), carry.curriculum
    )
    ints = jax.ShapeDtypeStruct((lanes, b), jnp.int32)
    xs = (ints, jax.ShapeDtypeStruct((lanes, b), jnp.bool_), ints)
    labels = jax.ShapeDtypeStruct((lanes, n), jnp.int32)
    spmd = RUNS_AXIS if runs > 1 else None
    split = runs_sharding(mesh) if spmd else replicated(mesh)

    def fn(carry, xs, labels, model_args, data):
        def one(c, x, y, m):
            return trainer.train_step(data, m, y, c, x)[0]

        return jax.vmap(one, spmd_axis_name=spmd)(carry, xs, labels, model_args)

    steps = config.num_epochs * -(-n // b)
    e = config.eval_batch_size
    chunk = jax.ShapeDtypeStruct((e, *train_inputs.shape[1:]), train_inputs.dtype)
    evaluation = PlanSpec(
        fn=jax.vmap(lambda p, m, x: apply_fn(p, x, m), in_axes=(0, 0, None)),
        abstract_args=(
            *abstract((carry.params, model_args), split),
            abstract(chunk, replicated(mesh)),
        ),
        # num_test 0 (the whole split) counts one call
        steps_per_run=config.num_epochs * -(-config.num_val // e)
        + -(-max(config.num_test, 1) // e),
        num_runs=len(config.methods) * len(config.settings) * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"logits of {e} rows for every seed (validation each epoch, test once)",
        name="eval",
    )
    return PlanSpec(
        fn=fn,
        abstract_args=(
            *abstract((carry, xs, labels, model_args), split),
            abstract(train_inputs, replicated(mesh)),
        ),
        steps_per_run=steps,
        num_runs=len(config.methods) * len(config.settings) * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one {method} training step (batch {b}) of {config.num_seeds} seeds ({lanes} "
        f"with padding, over runs), every run costed at it; the teacher and the host-side "
        "curriculum selection not planned",
        programs=(evaluation,),
    )
