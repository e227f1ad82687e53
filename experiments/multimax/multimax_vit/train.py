"""Trains the ViT once per normaliser with the shared harness and evaluates it.

Two input paths: the quick and smoke presets hold Fashion-MNIST in memory
(:func:`jaxlab.data.batch_dataset`); the paper preset streams ``imagenet2012`` from TFDS
(:func:`jaxlab.data.streaming.make_loader` with DeiT's augmentation,
:class:`jaxlab.train.DeviceStream`), trains on Mixup/CutMix soft targets and evaluates
the whole validation split, split over ``data``.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax.training import train_state

from jaxlab.data import imagenet
from jaxlab.data.images import load_images
from jaxlab.data.pipeline import batch_dataset
from jaxlab.data.streaming import eval_batches, make_loader, open_source
from jaxlab.nn import ViT
from jaxlab.train import compute_dtype, create_state, fit, mesh_from_config, param_dtype
from jaxlab.train.lifecycle import to_host
from jaxlab.train.mesh import batch_sharding, replicated
from jaxlab.train.plan import InputPipeline, PlanSpec, abstract
from jaxlab.train.prefetch import DeviceStream, device_batches

from ..trainer import multimax_optimizer


def make_model(config: ml_collections.ConfigDict, normalizer: str, num_classes: int) -> ViT:
    return ViT(
        num_classes=num_classes,
        patch_size=config.patch_size,
        dim=config.dim,
        depth=config.depth,
        num_heads=config.num_heads,
        mlp_dim=config.mlp_dim,
        attention_normalizer=normalizer,
        output_normalizer=normalizer,
        dtype=compute_dtype(config),
        param_dtype=param_dtype(config),
    )


def train_step(state: train_state.TrainState, batch: dict, key: jax.Array):
    del key  # no dropout

    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch["image"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"]).mean()
        return loss, jnp.mean(jnp.argmax(logits, -1) == batch["label"])

    (loss, accuracy), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    return state.apply_gradients(grads=grads), {"loss": loss, "accuracy": accuracy}


def evaluate(model: ViT, params, images: np.ndarray, labels: np.ndarray, config) -> dict:
    """Test accuracy (%) and, per layer, the share of attention weights below the threshold."""
    predict = jax.jit(lambda x: jnp.argmax(model.apply({"params": params}, x), -1))
    correct = 0
    for start in range(0, len(images), config.eval_batch_size):
        stop = start + config.eval_batch_size
        correct += int(jnp.sum(predict(images[start:stop]) == labels[start:stop]))
    _, inter = jax.jit(lambda x: model.apply({"params": params}, x, mutable=["intermediates"]))(
        images[: config.sparsity_images]
    )
    out = {"test_accuracy": 100.0 * correct / len(images)}
    for i in range(config.depth):
        (weights,) = inter["intermediates"][f"block_{i}"]["attention"]["attention_weights"]
        out[f"attention_sparsity_layer{i}"] = float(jnp.mean(weights < config.sparsity_threshold))
    out["attention_sparsity"] = float(
        np.mean([out[f"attention_sparsity_layer{i}"] for i in range(config.depth)])
    )
    return out


def soft_target_step(config: ml_collections.ConfigDict, num_classes: int):
    """The paper preset's train step: Mixup/CutMix with label smoothing
    (:func:`jaxlab.data.imagenet.mixup_cutmix`, keyed by the step's key), then the
    cross-entropy of the soft targets."""

    def step(state: train_state.TrainState, batch: dict, key: jax.Array):
        images, targets = imagenet.mixup_cutmix(
            key,
            batch["image"],
            batch["label"],
            num_classes,
            config.mixup_alpha,
            config.cutmix_alpha,
            config.mixup_switch_prob,
            config.label_smoothing,
        )

        def loss_fn(params):
            logits = state.apply_fn({"params": params}, images)
            return optax.softmax_cross_entropy(logits, targets).mean()

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grads), {"loss": loss}

    return step


def _masked_counts(model: ViT, params, batch: dict) -> tuple[jax.Array, jax.Array]:
    """``(correct, count)`` of one padded evaluation batch (``mask`` weighs the rows)."""
    logits = model.apply({"params": params}, batch["image"])
    hit = (jnp.argmax(logits, -1) == batch["label"]).astype(jnp.float32)
    return jnp.sum(batch["mask"] * hit), jnp.sum(batch["mask"])


def _layer_sparsity(model: ViT, params, images: jax.Array, threshold: float) -> jax.Array:
    """``[depth]``: per layer, the share of attention weights below ``threshold``."""
    _, inter = model.apply({"params": params}, images, mutable=["intermediates"])
    return jnp.stack(
        [
            jnp.mean(
                inter["intermediates"][f"block_{i}"]["attention"]["attention_weights"][0]
                < threshold
            )
            for i in range(model.depth)
        ]
    )


def evaluate_streamed(model: ViT, params, config: ml_collections.ConfigDict, mesh) -> dict:
    """Top-1 accuracy (%) over the ``imagenet2012`` validation split (streamed, each batch
    split over ``data``, padding rows weighted 0) and attention sparsity per layer on the
    first validation batch. One batch in a dry run."""
    source = open_source(config.dataset, "validation", data_dir=config.data_dir or None)
    batches = eval_batches(
        source,
        imagenet.deit_eval_ops(config.image_size),
        global_batch=config.eval_batch_size,
        max_batches=1 if config.dry_run else None,
        workers=config.data_workers,
    )
    counts = jax.jit(lambda p, b: _masked_counts(model, p, b))
    sparsity = jax.jit(lambda p, x: _layer_sparsity(model, p, x, config.sparsity_threshold))
    correct = count = layers = None
    for batch in device_batches(batches, mesh):
        c, n = counts(params, batch)
        correct, count = (c, n) if correct is None else (correct + c, count + n)
        if layers is None:
            layers = sparsity(params, batch["image"])
    correct, count, layers = to_host((correct, count, layers))
    out = {"test_accuracy": 100.0 * float(correct) / float(count)}
    for i in range(config.depth):
        out[f"attention_sparsity_layer{i}"] = float(layers[i])
    out["attention_sparsity"] = float(np.mean(layers))
    return out


def train_and_evaluate_streamed(
    config: ml_collections.ConfigDict, workdir: str
) -> dict[str, float]:
    """The paper preset: DeiT on ``imagenet2012`` streamed from TFDS, per normaliser."""
    data_dir = config.data_dir or None
    num_classes = DATASET_SHAPES[config.dataset][1]
    shape = (config.image_size, config.image_size, 3)
    mesh = mesh_from_config(config)
    results: dict[str, float] = {}
    for normalizer in config.normalizers:
        model = make_model(config, normalizer, num_classes)
        state, train_key = create_state(
            model,
            jnp.zeros((1, *shape), jnp.float32),
            multimax_optimizer(config),
            jax.random.key(config.seed),
        )
        source = open_source(config.dataset, "train", data_dir=data_dir)
        loader = make_loader(
            source,
            imagenet.deit_train_ops(config.image_size, config.rand_augment, config.erase_prob),
            global_batch=config.batch_size,
            seed=config.seed,
            workers=config.data_workers,
        )
        stream = DeviceStream(loader, mesh)
        try:
            state, _ = fit(
                state=state,
                train_step=soft_target_step(config, num_classes),
                batches=stream,
                num_steps=config.num_steps,
                key=train_key,
                workdir=os.path.join(workdir, normalizer),
                checkpoint_every=config.checkpoint_every,
                log_every=config.log_every,
                mesh=mesh,
                desc=f"vit/{normalizer}",
                hparams={**config.to_dict(), "normalizer": normalizer},
            )
        finally:
            stream.close()
        for key, value in evaluate_streamed(model, state.params, config, mesh).items():
            results[f"{key}_{normalizer}"] = value
    return results


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    if config.dataset == "imagenet2012":
        return train_and_evaluate_streamed(config, workdir)
    if config.dataset not in ("fashion_mnist", "digits"):
        raise ValueError(
            f"dataset {config.dataset!r} has no loader in jaxlab; use 'fashion_mnist', "
            "'digits' or 'imagenet2012' (TFDS)"
        )
    data_dir = config.data_dir or None
    train_images, train_labels = load_images(config.dataset, "train", data_dir)
    test_images, test_labels = load_images(config.dataset, "test", data_dir)
    if config.eval_images:
        test_images = test_images[: config.eval_images]
        test_labels = test_labels[: config.eval_images]
    num_classes = int(train_labels.max()) + 1
    dataset = batch_dataset(
        {"image": train_images, "label": train_labels}, config.batch_size, config.seed
    )
    mesh = mesh_from_config(config)  # the batch rows split over the data axis
    results: dict[str, float] = {}
    for normalizer in config.normalizers:
        model = make_model(config, normalizer, num_classes)
        state, train_key = create_state(
            model, train_images[:1], multimax_optimizer(config), jax.random.key(config.seed)
        )
        state, _ = fit(
            state=state,
            train_step=train_step,
            batch_at=lambda step: dataset[step],
            num_steps=config.num_steps,
            key=train_key,
            workdir=os.path.join(workdir, normalizer),
            checkpoint_every=config.checkpoint_every,
            log_every=config.log_every,
            mesh=mesh,
            desc=f"vit/{normalizer}",
            hparams={**config.to_dict(), "normalizer": normalizer},
        )
        for key, value in evaluate(model, state.params, test_images, test_labels, config).items():
            results[f"{key}_{normalizer}"] = value
    return results


#: ``(image shape, classes)`` per dataset, for plans made without the data.
DATASET_SHAPES = {
    "fashion_mnist": ((28, 28, 1), 10),
    "digits": ((8, 8, 1), 10),
    "imagenet2012": ((224, 224, 3), 1000),
}


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one MultiMax train step, state replicated, batch over ``data``;
    the evaluation (a pass over the test split, ``eval_batch_size`` images a call, each run
    once) a program of its own; on ImageNet the host's DeiT input pipeline (JPEG decoding
    and augmentation) per train call."""
    shape, num_classes = DATASET_SHAPES[config.dataset]
    model = make_model(config, "multimax", num_classes)
    example = jax.ShapeDtypeStruct((1, *shape), jnp.float32)
    state = jax.eval_shape(
        lambda x: create_state(model, x, multimax_optimizer(config), jax.random.key(config.seed))[
            0
        ],
        example,
    )
    rows, rep = batch_sharding(mesh), replicated(mesh)
    batch = {
        "image": jax.ShapeDtypeStruct((config.batch_size, *shape), jnp.float32),
        "label": jax.ShapeDtypeStruct((config.batch_size,), jnp.int32),
    }
    rng = jax.eval_shape(lambda: jax.random.key(0))
    imagenet2012 = config.dataset == "imagenet2012"
    step = soft_target_step(config, num_classes) if imagenet2012 else train_step
    runs = len(config.normalizers) * config.num_seeds
    test_images = config.eval_images or {"imagenet2012": 50_000, "fashion_mnist": 10_000}.get(
        config.dataset, config.eval_batch_size
    )
    eval_batch = {
        "image": jax.ShapeDtypeStruct((config.eval_batch_size, *shape), jnp.float32),
        "label": jax.ShapeDtypeStruct((config.eval_batch_size,), jnp.int32),
        "mask": jax.ShapeDtypeStruct((config.eval_batch_size,), jnp.float32),
    }
    evaluation = PlanSpec(
        fn=lambda params, b: _masked_counts(model, params, b),
        abstract_args=(abstract(state.params, rep), abstract(eval_batch, rows)),
        steps_per_run=-(-test_images // config.eval_batch_size),
        num_runs=runs,
        note=f"top-1 accuracy of {test_images} test images",
        name="eval",
    )
    pipeline = (
        InputPipeline(
            imagenet.synthetic_train_example(shape[0]),
            config.batch_size,
            "JPEG decoding + DeiT RandAugment",
        )
        if imagenet2012
        else None
    )
    return PlanSpec(
        fn=step,
        abstract_args=(abstract(state, rep), abstract(batch, rows), abstract(rng, rep)),
        steps_per_run=config.num_steps,
        num_runs=runs,
        note=f"one train step of the MultiMax ViT ({config.dataset}, batch "
        f"{config.batch_size} over data)",
        programs=(evaluation,),
        input_pipeline=pipeline,
    )
