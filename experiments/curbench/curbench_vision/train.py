"""CurBench vision: each curriculum × setting of a LeNet on an image subset, through the
curriculum trainer (:func:`jaxlab.trainers.curriculum.run_benchmark`).

Config in, metrics out: the splits are read, the model is defined, and the benchmark runs
every (setting, method) with all seeds in one program, saved to
``<workdir>/runs/<setting>__<method>.json`` (a killed experiment resumes at the next run).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.data import image_ops, load_images
from jaxlab.data.streaming import open_source
from jaxlab.nn.lenet import LeNet
from jaxlab.train.plan import PlanSpec
from jaxlab.trainers.curriculum import CurriculumData, run_benchmark

from ..plan import plan_spec

NUM_CLASSES = 10


def _pool(images: np.ndarray, size: int) -> np.ndarray:
    if size == images.shape[1]:
        return images
    f = images.shape[1] // size
    return images.reshape(-1, size, f, size, f, images.shape[-1]).mean(axis=(2, 4))


def _read(config) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(train images, labels, test images, labels)`` of ``config.dataset``: Fashion-MNIST
    in [0, 1] (:func:`jaxlab.data.load_images`), or a TFDS set (``cifar10``, ``cifar100``)
    normalised with its :data:`jaxlab.data.image_ops.STATS` (CurBench's statistics)."""
    data_dir = config.data_dir or None
    if config.dataset == "fashion_mnist":
        return (
            *load_images("fashion_mnist", "train", data_dir),
            *load_images("fashion_mnist", "test", data_dir),
        )
    ops = image_ops.eval_ops(config.dataset)
    train, test = (
        image_ops.to_arrays(open_source(config.dataset, split, data_dir=data_dir), ops)
        for split in ("train", "test")
    )
    return train["image"], train["label"], test["image"], test["label"]


def load_splits(config) -> dict[str, np.ndarray]:
    """Fixed subsets of ``config.dataset``: train/val from the train split, test from test."""
    x, y, xt, yt = _read(config)
    order = np.random.default_rng(2024).permutation(len(x))
    tr, va = order[: config.num_train], order[config.num_train : config.num_train + config.num_val]
    # The teacher of TTCL, C2F and Adaptive CL learns on a disjoint clean split.
    held = order[config.num_train + config.num_val :][: config.num_teacher]
    te = np.random.default_rng(2025).permutation(len(xt))[: config.num_test]
    size = config.image_size
    return {
        "x": _pool(x[tr], size),
        "y": y[tr],
        "val_x": _pool(x[va], size),
        "val_y": y[va],
        "test_x": _pool(xt[te], size),
        "test_y": yt[te],
        "teacher_x": _pool(x[held], size),
        "teacher_y": y[held],
    }


def _model(image_shape) -> tuple:
    """``(init_fn, apply_fn)`` of the LeNet on images of ``image_shape`` ``(h, w, c)``."""
    model = LeNet(num_classes=NUM_CLASSES)
    dummy = jnp.zeros((1, *image_shape), jnp.float32)

    def init_fn(key):
        return model.init(key, dummy)["params"]

    def apply_fn(params, x, model_args):
        return model.apply({"params": params}, x, model_args.get("sigma"))

    return init_fn, apply_fn


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    splits = load_splits(config)
    init_fn, apply_fn = _model(splits["x"].shape[1:])
    data = CurriculumData(
        splits["x"],
        splits["y"],
        splits["val_x"],
        splits["val_y"],
        splits["test_x"],
        splits["test_y"],
        NUM_CLASSES,
    )
    # The teacher of TTCL, C2F and Adaptive CL: a baseline LeNet on a disjoint clean split.
    teacher_data = data._replace(
        train_inputs=splits["teacher_x"],
        train_labels=splits["teacher_y"],
        test_inputs=splits["val_x"],
        test_labels=splits["val_y"],
    )
    return run_benchmark(config, data, init_fn, apply_fn, workdir, teacher_data=teacher_data)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one meta-gradient training step of every seed, split over
    ``runs`` (``experiments/curbench/plan.py``)."""
    shape = (config.image_size, config.image_size, config.channels)
    init_fn, apply_fn = _model(shape)
    images = jax.ShapeDtypeStruct((config.num_train, *shape), jnp.float32)
    return plan_spec(config, mesh, init_fn, apply_fn, images, NUM_CLASSES)
