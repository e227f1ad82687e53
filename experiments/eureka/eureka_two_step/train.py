"""Trains the ViT arms and the CNN on the two-step task; share solved, jump step, ‖∂L/∂W_Q,K‖."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from tqdm import tqdm

from jaxlab.data.paths import resolve_data_dir
from jaxlab.data.two_step import (
    TwoStepSources,
    load_two_step_sources,
    load_two_step_sources_tfds,
    two_step_batch,
)
from jaxlab.nn import ViT, heat_treatment_schedule
from jaxlab.nn.cnn import SmallCNN
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    runs_sharding,
    segmented_scan_run,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract

NORMALIZER = {
    "softmax": "softmax",
    "heat": "softmax",
    "norm_softmax": "norm_softmax",
    "norm_softmax_std": "norm_softmax_std",
}


def _model(arm: str, config: ml_collections.ConfigDict):
    if arm == "cnn":
        return SmallCNN(num_classes=10)
    return ViT(
        num_classes=10,
        patch_size=config.patch_size,
        dim=config.dim,
        depth=config.depth,
        num_heads=config.num_heads,
        mlp_dim=config.mlp_dim,
        attention_normalizer=NORMALIZER[arm],
    )


def _qk_grad_norms(grads) -> tuple[jax.Array, jax.Array]:
    """‖∂L/∂W_Q‖, ‖∂L/∂W_K‖ over all layers (Frobenius norm of the stacked kernels)."""
    q = k = jnp.zeros(())
    for name, block in grads.items():
        if name.startswith("block_"):
            q = q + jnp.sum(block["attention"]["query"]["kernel"] ** 2)
            k = k + jnp.sum(block["attention"]["key"]["kernel"] ** 2)
    return jnp.sqrt(q), jnp.sqrt(k)


def _arm(arm, config):
    """``(model, tx, apply)`` of ``arm``: ``apply(params, images, t) -> logits``."""
    model = _model(arm, config)
    d_head = config.dim // config.num_heads
    heat = heat_treatment_schedule(
        config.ht_init_scale, d_head**-0.5, max(config.num_steps // 2, 1)
    )
    optimizer = config.optimizer
    if arm in config.arm_peak_lr:
        optimizer = ml_collections.ConfigDict(optimizer.to_dict())
        optimizer.learning_rate.peak_value = config.arm_peak_lr[arm]
    tx = make_optimizer(optimizer)

    def apply(params, images, t):
        if arm == "heat":
            return model.apply({"params": params}, images, attention_scale=heat(t))
        return model.apply({"params": params}, images)

    return model, tx, apply


def _init_params(model, config, key):
    return model.init(key, jnp.zeros((1, 2 * config.tile, 2 * config.tile, 3)))["params"]


def _train_step(apply, tx, config, carry, t, k_data, src, use_same):
    """One AdamW step of a run on a fresh two-step batch; its loss, accuracy, ‖∂L/∂W_Q,K‖."""
    params, opt_state = carry
    images, labels, same = two_step_batch(
        jax.random.fold_in(k_data, t),
        src,
        config.batch_size,
        config.color_noise,
        config.indicator_noise,
    )
    labels = jnp.where(use_same, same, labels)  # "same": the intermediate step alone

    def loss_fn(p):
        logits = apply(p, images, t)
        if config.label_smoothing:
            targets = optax.smooth_labels(
                jax.nn.one_hot(labels, logits.shape[-1]), config.label_smoothing
            )
            loss = optax.softmax_cross_entropy(logits, targets).mean()
        else:
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, jnp.mean(jnp.argmax(logits, -1) == labels)

    # Written out, not ``jaxlab.train.optimizer_step``: the metrics need the gradient itself
    # (‖∂L/∂W_Q‖, ‖∂L/∂W_K‖), which that step does not return.
    (loss, acc), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    gq, gk = _qk_grad_norms(grads)
    return (params, opt_state), {"loss": loss, "accuracy": acc, "grad_q": gq, "grad_k": gk}


def _run_arm(arm, config, train_src, evals, keys, workdir):
    """Trains ``arm`` on every task of ``evals`` (task → eval images, labels):
    ``{task: (history [seeds, steps] per metric, final held-out accuracy [seeds])}``.

    Per task: init (``batch_runs``, seeds over ``runs``), the batched steps as a
    :func:`segmented_scan_run` in ``config.segments`` pieces checkpointed in
    ``<workdir>/<arm>_<task>`` (the sources ride in the carry, unbatched: arguments of the
    compiled pieces, not constants), then the held-out accuracy (``batch_runs``)."""
    model, tx, apply = _arm(arm, config)
    mesh = mesh_from_config(config, RUNS_AXIS)

    def init(key):
        k_init, k_data = jax.random.split(key)
        params = _init_params(model, config, k_init)
        return (params, tx.init(params)), k_data

    def step(carry, t):
        (state, k_data), (src, use_same) = carry
        state, metrics = _train_step(apply, tx, config, state, t, k_data, src, use_same)
        return ((state, k_data), (src, use_same)), metrics

    # Seeds are vmapped, except the CNN's on XLA:CPU (lax.map there): a vmapped convolution
    # over per-seed weights becomes a grouped convolution, CPU's slow path.
    if arm == "cnn" and jax.default_backend() == "cpu":

        def batched_step(carry, t):
            runs, shared = carry

            def one(run):
                (run, _), metrics = step((run, shared), t)
                return run, metrics

            runs, metrics = jax.lax.map(one, runs)
            return (runs, shared), metrics
    else:
        batched_step = jax.vmap(step, in_axes=((0, None), None), out_axes=((0, None), 0))

    def accuracy(params, images, labels):
        logits = apply(params, images, config.num_steps)
        return jnp.mean(jnp.argmax(logits, -1) == labels)

    carry0 = batch_runs(init, mesh=mesh, fast_compile=config.fast_compile)(keys)
    evaluate = batch_runs(
        accuracy, in_axes=(0, None, None), mesh=mesh, fast_compile=config.fast_compile
    )
    out = {}
    for task, (images, labels) in evals.items():
        shared = (train_src, jnp.asarray(task == "same"))
        ((state, _), _), history = segmented_scan_run(
            batched_step,
            (carry0, shared),
            length=config.num_steps,
            segments=config.segments,
            fast_compile=config.fast_compile,
            checkpointer=Checkpointer(os.path.join(workdir, f"{arm}_{task}")),
            mesh=mesh,
            carry_axes=(0, None),
        )
        history = {name: np.moveaxis(h, 0, 1) for name, h in history.items()}
        out[task] = (history, jax.device_get(evaluate(state[0], images, labels)))
    return out


def _check_schedule(config: ml_collections.ConfigDict) -> None:
    """A learning-rate schedule must span the run: ``decay_steps == num_steps``."""
    schedule = config.optimizer.learning_rate
    decay = schedule.get("decay_steps") if hasattr(schedule, "get") else None
    if decay is not None and decay != config.num_steps:
        raise ValueError(
            f"optimizer.learning_rate.decay_steps ({decay}) must equal num_steps "
            f"({config.num_steps}): override both"
        )


def _smooth(x: np.ndarray, width: int) -> np.ndarray:
    kernel = np.ones(width) / width
    return np.stack([np.convolve(row, kernel, mode="valid") for row in x])


def _first_step(curves: np.ndarray, level: float, offset: int) -> np.ndarray:
    hit = curves >= level
    return np.where(hit.any(-1), np.argmax(hit, -1) + offset, curves.shape[-1] + offset)


def _task_metrics(runs: dict, config: ml_collections.ConfigDict) -> dict[str, list[float]]:
    """Per-arm metrics of one task from ``runs`` (arm → (history, final accuracies))."""
    results: dict[str, list[float]] = {}
    width = config.smooth
    base_final = float(np.mean(runs["softmax"][1])) if "softmax" in runs else 1.0
    for arm, (history, final) in runs.items():
        curves = _smooth(np.asarray(history["accuracy"]), width)
        final = np.asarray(final)
        results[f"final_accuracy_{arm}"] = final.tolist()
        results[f"solved_{arm}"] = (final >= config.solved_accuracy).astype(float).tolist()
        results[f"jump_step_{arm}"] = (
            _first_step(curves, config.solved_accuracy, width).astype(float).tolist()
        )
        results[f"steps_to_95pct_softmax_{arm}"] = (
            _first_step(curves, 0.95 * base_final, width).astype(float).tolist()
        )
        gq = np.asarray(history["grad_q"])
        gk = np.asarray(history["grad_k"])
        early = max(config.num_steps // 10, 1)
        results[f"grad_q_early_{arm}"] = gq[:, :early].mean(-1).tolist()
        results[f"grad_k_early_{arm}"] = gk[:, :early].mean(-1).tolist()
        # ‖∂L/∂(W_Q, W_K)‖ jointly: the paper's diagnosis is about both together.
        results[f"grad_qk_early_{arm}"] = np.sqrt(gq**2 + gk**2)[:, :early].mean(-1).tolist()
        results[f"accuracy_curve_{arm}"] = curves.mean(0)[:: max(len(curves[0]) // 20, 1)].tolist()
    return results


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    _check_schedule(config)
    if not config.tasks or set(config.tasks) - {"label", "same"}:
        raise ValueError(
            f"tasks must be a non-empty subset of ('label', 'same'), got {config.tasks!r}"
        )
    if "mnist" in config.datasets:  # the paper's tiles, through TFDS
        train_src, test_src = (
            load_two_step_sources_tfds(split, config.tile, config.data_dir or None)
            for split in ("train", "test")
        )
    else:
        data_dir = resolve_data_dir(config.data_dir or None)
        train_src = load_two_step_sources("train", config.tile, data_dir)
        test_src = load_two_step_sources("test", config.tile, data_dir)
    eval_images, eval_labels, eval_same = two_step_batch(
        jax.random.key(10_000 + config.seed),
        test_src,
        config.eval_size,
        config.color_noise,
        config.indicator_noise,
    )
    evals = {
        task: (eval_images, eval_same if task == "same" else eval_labels) for task in config.tasks
    }
    keys = jax.random.split(jax.random.key(config.seed), config.num_seeds)
    by_arm = {
        arm: _run_arm(arm, config, train_src, evals, keys, workdir)
        for arm in tqdm(config.arms, desc="eureka arms")
    }
    results: dict[str, list[float]] = {}
    for task in config.tasks:
        prefix = "intermediate_" if task == "same" else ""
        runs = {arm: by_arm[arm][task] for arm in config.arms}
        results.update({prefix + k: v for k, v in _task_metrics(runs, config).items()})
    return results


#: Sizes of the training sources (indicators: scikit-learn digits 1 and 2 of the train
#: split; targets: Fashion-MNIST test images 0..7999), for plans made without the data.
TRAIN_SOURCES = (288, 8000)
#: The same for the paper's TFDS sources (MNIST train 1s and 2s; Fashion-MNIST train).
TRAIN_SOURCES_TFDS = (6742 + 5958, 60_000)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one training step of the first arm's ViT for every seed (as
    ``batch_runs`` vmaps them), the seeds split over ``runs`` (padded to it), the sources
    replicated; every (arm, task) run is costed at it; evaluation not planned."""
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    arm = config.arms[0]
    model, tx, apply = _arm(arm, config)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    carry = jax.eval_shape(
        jax.vmap(lambda k: (lambda p: (p, tx.init(p)))(_init_params(model, config, k))), keys
    )
    (n_ind, n_tgt) = TRAIN_SOURCES_TFDS if "mnist" in config.datasets else TRAIN_SOURCES
    t = config.tile
    src = TwoStepSources(
        jax.ShapeDtypeStruct((n_ind, t, t), jnp.float32),
        jax.ShapeDtypeStruct((n_ind,), jnp.int32),
        jax.ShapeDtypeStruct((n_tgt, t, t), jnp.float32),
        jax.ShapeDtypeStruct((n_tgt,), jnp.int32),
    )
    spmd = RUNS_AXIS if runs > 1 else None

    def fn(carry, keys, t, src, use_same):
        return jax.vmap(
            lambda c, k: _train_step(apply, tx, config, c, t, k, src, use_same), spmd_axis_name=spmd
        )(carry, keys)

    rep = replicated(mesh)
    scalar = lambda dtype: abstract(jax.ShapeDtypeStruct((), dtype), rep)  # noqa: E731
    return PlanSpec(
        fn=fn,
        abstract_args=(
            *abstract((carry, keys), runs_sharding(mesh)),
            scalar(jnp.int32),
            abstract(src, rep),
            scalar(jnp.bool_),
        ),
        steps_per_run=config.num_steps,
        num_runs=len(config.arms) * len(config.tasks) * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one AdamW step of the {arm} ViT (dim {config.dim}, depth {config.depth}, batch "
        f"{config.batch_size}) of {config.num_seeds} seeds ({lanes} with padding, over runs); "
        "every arm and task costed at it; evaluation not planned",
    )
