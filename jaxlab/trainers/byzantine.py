"""The Byzantine paper's trainer: ``m`` simulated workers, a small CNN or MLP, batches of runs.

Both ``byzantine_*`` experiments and the benchmark build their runs here (this paper's
experiments only; ``jaxlab/train`` keeps what any experiment could use), so the code path
is shared: :func:`make_run_spec` names the optimizer, aggregator and attacks;
:func:`simulate_run` trains one model as a :func:`jaxlab.train.scan_run` of
:func:`jaxlab.robust.simulation.byzantine_step` (the kernel); :func:`run_batch` trains a batch
of runs (seeds × attacks × learning rates) with :func:`jaxlab.train.batch_runs`, the training
and test arrays passed to the compiled program as arguments. With a mesh, the runs are
split over its ``runs`` axis and each run's workers over its ``workers`` axis (the
kernel's ``shard_map`` path), when the mesh has those axes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from jaxlab import optim
from jaxlab.data import image_ops, load_images
from jaxlab.data.images import BUILDERS
from jaxlab.data.streaming import open_source
from jaxlab.nn.cnn import SmallCNN, SmallMLP, classifier_functions
from jaxlab.robust import attacks as attacks_lib
from jaxlab.robust import simulation
from jaxlab.robust.compose import make_aggregator
from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.lifecycle import padded_runs, runs_sharding
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab.train.runs import batch_runs, scan_run

Params = Any


class RunSpec(NamedTuple):
    """What one batch of simulated runs shares (everything static under ``jit``).

    Attributes:
      init_params: ``key -> params``.
      loss_fn: ``(params, images [B, ...], labels [B]) -> scalar``.
      predict_fn: ``(params, images [n, ...]) -> logits [n, C]``.
      estimator: per-worker estimator (``worker_momentum`` or ``storm``).
      make_server: ``learning_rate -> server optimizer``.
      aggregators: the candidate ``(rows [m, d], key) -> [d]`` rules; a run picks one by
        index (under ``vmap`` every candidate is evaluated and one selected: cheap next to
        the workers' gradients, and one compilation covers a whole grid).
      attacks: the candidate attacks; a run picks one by index.
      attack_flips_labels: per attack, whether it is the label-flip data attack.
      num_workers: ``m``.
      num_byzantine: ``f``.
      batch_size: per-worker minibatch size ``B``.
      num_steps: training steps.
      num_classes: ``C``.
      two_point: the estimator needs the previous query point (STORM).
      crop_padding: random-crop padding of every sampled image (0: none).
      flip: random horizontal flips of the sampled images.
    """

    init_params: Callable[[jax.Array], Params]
    loss_fn: Callable[[Params, jax.Array, jax.Array], jax.Array]
    predict_fn: Callable[[Params, jax.Array], jax.Array]
    estimator: optax.GradientTransformationExtraArgs
    make_server: Callable[[jax.Array], optax.GradientTransformation]
    aggregators: tuple[Callable[[jax.Array, jax.Array], jax.Array], ...]
    attacks: tuple[Callable[[Any, Any], Any], ...]
    attack_flips_labels: tuple[bool, ...]
    num_workers: int
    num_byzantine: int
    batch_size: int
    num_steps: int
    num_classes: int
    two_point: bool
    crop_padding: int = 0
    flip: bool = False


def simulate_run(
    spec: RunSpec,
    key: jax.Array,
    aggregator_index: jax.Array,
    attack_index: jax.Array,
    learning_rate: jax.Array,
    train: tuple[jax.Array, jax.Array],
    test: tuple[jax.Array, jax.Array],
    mesh: Mesh | None = None,
) -> dict[str, jax.Array]:
    """Trains one model from scratch and returns its test accuracy and loss curve.

    Each step every worker samples ``B`` training examples uniformly (i.i.d. data across
    workers). The steps are one :func:`jaxlab.train.scan_run` of
    :func:`jaxlab.robust.simulation.byzantine_step`. ``key``, the indices, ``learning_rate``
    and the data may be traced, so a batch of runs is one ``batch_runs`` of this function
    (one compilation; see :func:`run_batch`).

    Args:
      spec: the shared :class:`RunSpec`.
      key: PRNG key of the run (init, sampling, bucketing).
      aggregator_index: index into ``spec.aggregators``.
      attack_index: index into ``spec.attacks``.
      learning_rate: the server's learning rate.
      train: ``(images [n, ...], labels [n])``.
      test: ``(images [n_test, ...], labels [n_test])``.
      mesh: optional mesh; its ``workers`` axis (if any) splits the workers.

    Returns:
      ``{"accuracy": scalar test accuracy, "loss": [num_steps] honest train loss}``.
    """
    init_key, data_key = jax.random.split(key)
    state = init_run(spec, init_key, learning_rate)
    images, labels = (jnp.asarray(a) for a in train)
    train = (images, labels)

    def body(state, step):
        return run_step(
            spec, state, step, data_key, aggregator_index, attack_index, learning_rate, train, mesh
        )

    state, metrics = scan_run(body, state, length=spec.num_steps)
    test_images, test_labels = (jnp.asarray(a) for a in test)
    logits = spec.predict_fn(state.params, test_images)
    accuracy = jnp.mean(jnp.argmax(logits, axis=-1) == test_labels)
    return {"accuracy": accuracy, "loss": metrics["loss"]}


def init_run(spec: RunSpec, init_key: jax.Array, learning_rate: jax.Array):
    """A run's initial :class:`~jaxlab.robust.simulation.ByzantineState`."""
    server = spec.make_server(learning_rate)
    return simulation.init_state(
        spec.init_params(init_key), spec.estimator, server, spec.num_workers
    )


def run_step(
    spec: RunSpec,
    state: Any,
    step: jax.Array,
    data_key: jax.Array,
    aggregator_index: jax.Array,
    attack_index: jax.Array,
    learning_rate: jax.Array,
    train: tuple[jax.Array, jax.Array],
    mesh: Mesh | None = None,
):
    """Step ``step`` of a run: every worker samples ``B`` training examples uniformly (from
    ``fold_in(data_key, step)``), then one :func:`jaxlab.robust.simulation.byzantine_step`.
    Returns ``(state, {"loss", "grad_norm"})``."""
    train_images, train_labels = train
    server = spec.make_server(learning_rate)
    flips = jnp.asarray(spec.attack_flips_labels)[attack_index]

    def attack(honest, own):
        return jax.lax.switch(attack_index, spec.attacks, honest, own)

    def aggregate(rows, key):
        return jax.lax.switch(aggregator_index, spec.aggregators, rows, key)

    sample_key, agg_key = jax.random.split(jax.random.fold_in(data_key, step))
    idx = jax.random.randint(
        sample_key, (spec.num_workers, spec.batch_size), 0, train_labels.shape[0]
    )
    images = train_images[idx]
    if spec.crop_padding or spec.flip:  # the reference's CIFAR-10 augmentation
        images = image_ops.random_crop_flip(
            jax.random.fold_in(sample_key, 1), images, spec.crop_padding, spec.flip
        )
    return simulation.byzantine_step(
        state,
        images,
        train_labels[idx],
        agg_key,
        loss_fn=spec.loss_fn,
        estimator=spec.estimator,
        server=server,
        aggregate=aggregate,
        attack=attack,
        num_byzantine=spec.num_byzantine,
        num_classes=spec.num_classes,
        flip_labels=flips,
        two_point=spec.two_point,
        mesh=mesh if mesh is not None and simulation.WORKERS_AXIS in mesh.axis_names else None,
    )


def plan_lanes(
    spec: RunSpec, mesh: Mesh, num_lanes: int, image_shape: Sequence[int], num_train: int
):
    """``(fn, abstract_args, lanes)`` for :mod:`jaxlab.train.plan`: one step of
    ``num_lanes`` runs (padded to the ``runs`` axis), split over the mesh like
    :func:`run_batch`, the training set replicated; nothing allocated."""
    lanes = padded_runs(num_lanes, mesh)
    split = runs_sharding(mesh)
    assert split is not None  # a mesh is given
    rep = replicated(mesh)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    lrs = jax.ShapeDtypeStruct((lanes,), jnp.float32)
    state = jax.eval_shape(jax.vmap(lambda k, lr: init_run(spec, k, lr)), keys, lrs)
    ints = jax.ShapeDtypeStruct((lanes,), jnp.int32)
    train = (
        jax.ShapeDtypeStruct((num_train, *image_shape), jnp.float32),
        jax.ShapeDtypeStruct((num_train,), jnp.int32),
    )

    def fn(state, step, keys, aggregator_index, attack_indices, lrs, train):
        one = lambda s, k, a, lr: run_step(  # noqa: E731
            spec, s, step, k, aggregator_index, a, lr, train, mesh
        )
        spmd = RUNS_AXIS if RUNS_AXIS in mesh.axis_names else None
        return jax.vmap(one, spmd_axis_name=spmd)(state, keys, attack_indices, lrs)

    args = (
        abstract(state, split),
        abstract(jax.ShapeDtypeStruct((), jnp.int32), rep),
        abstract(keys, split),
        abstract(jax.ShapeDtypeStruct((), jnp.int32), rep),
        abstract(ints, split),
        abstract(lrs, split),
        abstract(train, rep),
    )
    return fn, args, lanes


#: ``(image shape, training examples)`` of each dataset, for plans made without the data.
TRAIN_SHAPES = {
    "digits": ((8, 8, 1), 1437),
    "fashion_mnist": ((28, 28, 1), 60000),
    "mnist": ((28, 28, 1), 60000),
    "cifar10": ((32, 32, 3), 50000),
}

#: The reference code's per-dataset input pipeline (``mlopt/dataset/mnist.py``,
#: ``cifar10.py``): normalisation ``(mean, std)`` and training augmentation
#: ``(crop padding, horizontal flip)``. MNIST's statistics are
#: :data:`jaxlab.data.image_ops.STATS`'s.
REFERENCE_STATS = {"cifar10": ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))}
REFERENCE_AUGMENTATION = {"cifar10": (2, True)}


def load_dataset(
    name: str, data_dir: str | None = None, limit: int | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((train images, labels), (test images, labels))`` of ``name``, in memory.

    ``"digits"`` and ``"fashion_mnist"`` come from :func:`jaxlab.data.load_images` (scaled to
    [0, 1]); a TFDS name (``"mnist"``, ``"cifar10"``) is read with
    :func:`jaxlab.data.streaming.open_source` and normalised as the reference code does
    (augmentation happens per sampled minibatch, see :func:`make_run_spec`). ``limit`` keeps
    the first records of each split (a dry run's few).
    """
    if name in BUILDERS:
        return load_images(name, "train", data_dir), load_images(name, "test", data_dir)
    ops = image_ops.eval_ops(name, stats=REFERENCE_STATS.get(name))
    splits = []
    for split in ("train", "test"):
        arrays = image_ops.to_arrays(open_source(name, split, data_dir=data_dir), ops, limit=limit)
        splits.append((arrays["image"], arrays["label"]))
    return splits[0], splits[1]


def checkpoint_pieces(workdir: str, pieces: dict[str, dict[str, np.ndarray]]) -> None:
    """Saves the finished pieces' results (``{piece: {name: array}}``, e.g. each call's
    test accuracies and loss curves) as one orbax checkpoint under ``<workdir>/checkpoints``
    at step ``len(pieces)``; a step already saved (a resumed run) is left as it is."""
    checkpointer = Checkpointer(workdir)
    try:
        if checkpointer.latest_step() != len(pieces):
            checkpointer.save(len(pieces), pieces)
    finally:
        checkpointer.close()


def plan_spec(
    config: Any, mesh: Mesh, cells: Sequence[tuple[str, str]], num_lanes: int, num_runs: int
) -> PlanSpec:
    """The :class:`jaxlab.train.plan.PlanSpec` of a Byzantine experiment: one μ²-SGD step
    (the two-point estimator, the heavier optimiser) of a call's ``num_lanes`` runs on the
    config's largest dataset (the last of ``config.datasets``)."""
    dataset = config.datasets[-1]
    image_shape, num_train = TRAIN_SHAPES[dataset]
    spec = make_run_spec(
        optimizer="mu2sgd",
        cells=cells,
        attack_names=list(config.attacks),
        image_shape=image_shape,
        **spec_kwargs(config, dataset),
    )
    fn, args, lanes = plan_lanes(spec, mesh, num_lanes, image_shape, num_train)
    return PlanSpec(
        fn=fn,
        abstract_args=args,
        steps_per_run=config.num_steps,
        num_runs=num_runs,
        runs_per_call=num_lanes,
        note=f"one μ²-SGD step of {num_lanes} runs ({lanes} with padding) × {config.num_workers}"
        f" workers, {config.model} on {dataset}; test evaluation and timing not planned",
    )


def spec_kwargs(config: Any, dataset: str) -> dict[str, Any]:
    """The config's :data:`SPEC_KEYS` and ``dataset``'s reference augmentation
    (:data:`REFERENCE_AUGMENTATION`), as keyword arguments of :func:`make_run_spec`."""
    padding, flip = REFERENCE_AUGMENTATION.get(dataset, (0, False))
    return {**{key: config[key] for key in SPEC_KEYS}, "crop_padding": padding, "flip": flip}


OPTIMIZERS = ("momentum", "mu2sgd")
ATTACKS = ("none", "sf", "lf", "ipm", "alie")
MODELS = ("cnn", "mlp")


def worker_and_server(
    optimizer: str,
    *,
    momentum_beta: float,
    clip_norm: float | None,
    beta_floor: float,
    gamma_floor: float,
):
    """``(estimator, make_server(lr), two_point)`` for ``optimizer`` ∈ OPTIMIZERS.

    momentum: workers send ``worker_momentum(β)``; the server clips and takes an SGD step.
    mu2sgd: workers send their STORM estimate; the server clips and takes the AnyTime step
    (reference variant: no α_t in the w-step, γ_t and β_t floored at 0.01).
    """
    clip = optax.clip_by_global_norm(clip_norm) if clip_norm else optax.identity()
    if optimizer == "momentum":
        return (
            optim.worker_momentum(momentum_beta),
            lambda lr: optax.chain(clip, optax.sgd(lr)),
            False,
        )
    if optimizer == "mu2sgd":
        return (
            optim.storm(beta_floor),
            lambda lr: optax.chain(clip, optim.anytime_averaging(lr, gamma_floor=gamma_floor)),
            True,
        )
    raise ValueError(f"unknown optimizer {optimizer!r}; valid: {OPTIMIZERS}")


#: The keyword arguments of :func:`make_run_spec` that experiment configs carry by name.
SPEC_KEYS = (
    "model",
    "hidden",
    "num_workers",
    "num_byzantine",
    "batch_size",
    "num_steps",
    "features",
    "kernel_size",
    "ipm_epsilon",
    "clip_norm",
    "momentum_beta",
    "beta_floor",
    "gamma_floor",
)


def make_run_spec(
    *,
    optimizer: str,
    cells: Sequence[tuple[str, str]],
    attack_names: Sequence[str],
    num_workers: int,
    num_byzantine: int,
    batch_size: int,
    num_steps: int,
    image_shape: Sequence[int],
    model: str,
    hidden: Sequence[int],
    features: Sequence[int],
    kernel_size: int,
    ipm_epsilon: float,
    clip_norm: float | None,
    momentum_beta: float,
    beta_floor: float,
    gamma_floor: float,
    num_classes: int = 10,
    crop_padding: int = 0,
    flip: bool = False,
) -> RunSpec:
    """The :class:`RunSpec` of a classifier trained by ``m`` workers, ``f`` of them Byzantine.

    ``model`` ∈ MODELS picks a :class:`~jaxlab.nn.cnn.SmallCNN` (``features``,
    ``kernel_size``) or a :class:`~jaxlab.nn.cnn.SmallMLP` (``hidden``); the other model's
    arguments are ignored. Every hyper-parameter is required (the experiments pass their
    config's :data:`SPEC_KEYS`). ``cells`` are the ``(base, meta)`` aggregator pairs a run can pick
    by index (see :func:`jaxlab.robust.compose.make_aggregator`); ``attack_names`` ⊆ ATTACKS
    likewise. ``crop_padding`` and ``flip`` augment every sampled minibatch
    (:func:`jaxlab.data.image_ops.random_crop_flip`).
    """
    net: SmallCNN | SmallMLP
    if model == "cnn":
        net = SmallCNN(num_classes, tuple(features), kernel_size)
    elif model == "mlp":
        net = SmallMLP(num_classes, tuple(hidden))
    else:
        raise ValueError(f"unknown model {model!r}; valid: {MODELS}")
    init_params, loss_fn, predict_fn = classifier_functions(net, tuple(image_shape))
    estimator, make_server, two_point = worker_and_server(
        optimizer,
        momentum_beta=momentum_beta,
        clip_norm=clip_norm,
        beta_floor=beta_floor,
        gamma_floor=gamma_floor,
    )
    return RunSpec(
        init_params=init_params,
        loss_fn=loss_fn,
        predict_fn=predict_fn,
        estimator=estimator,
        make_server=make_server,
        aggregators=tuple(
            make_aggregator(base, meta, num_workers, num_byzantine) for base, meta in cells
        ),
        attacks=tuple(
            attacks_lib.get_attack(a, num_workers, num_byzantine, ipm_epsilon) for a in attack_names
        ),
        attack_flips_labels=tuple(a == "lf" for a in attack_names),
        num_workers=num_workers,
        num_byzantine=num_byzantine,
        batch_size=batch_size,
        num_steps=num_steps,
        num_classes=num_classes,
        two_point=two_point,
        crop_padding=crop_padding,
        flip=flip,
    )


@functools.lru_cache(maxsize=8)
def _batched_runs(spec: RunSpec, mesh: Mesh | None, method: str, shared_aggregator: bool):
    """The jitted batch of :func:`simulate_run`, cached so that repeated calls reuse it."""
    runs_mesh = mesh if mesh is not None and RUNS_AXIS in mesh.axis_names else None
    return batch_runs(
        lambda k, g, a, lr, tr, te: simulate_run(spec, k, g, a, lr, tr, te, mesh),
        in_axes=(0, None if shared_aggregator else 0, 0, 0, None, None),
        method=method,
        mesh=runs_mesh,
    )


def run_batch(
    spec: RunSpec,
    seeds: Sequence[int],
    aggregator_indices: Sequence[int] | int,
    attack_indices: Sequence[int],
    learning_rates: Sequence[float],
    train: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    mesh: Mesh | None = None,
    method: str = "vmap",
) -> dict[str, np.ndarray]:
    """Trains ``len(seeds)`` runs (equal-length sequences) as one batched program.

    The runs are :func:`simulate_run` batched by :func:`jaxlab.train.batch_runs` over
    (seed, aggregator, attack, learning rate); ``train`` and ``test`` are shared arguments
    of the compiled program, not constants baked into it.

    ``aggregator_indices`` may be one ``int`` shared by every run: the aggregator is then
    an unbatched (traced) argument, so only that rule runs (under ``vmap`` a per-run index
    evaluates every candidate rule and selects one), and one compiled program, cached per
    ``spec``, serves every index — a grid over aggregators is a loop of such calls.

    With a ``mesh``, the runs are split over its ``runs`` axis (padded to a multiple of
    its size, see :func:`jaxlab.train.batch_runs`) and each run's workers over its
    ``workers`` axis; either axis may be absent.

    Returns ``{"accuracy": [R], "loss": [R, num_steps]}`` as numpy arrays.
    """
    shared = isinstance(aggregator_indices, (int, np.integer))
    if not isinstance(aggregator_indices, (int, np.integer)) and len(aggregator_indices) != len(
        seeds
    ):
        raise ValueError("seeds, indices and learning_rates need equal lengths")
    if not len(seeds) == len(attack_indices) == len(learning_rates):
        raise ValueError("seeds, indices and learning_rates need equal lengths")
    train_on, test_on = tuple(jnp.asarray(a) for a in train), tuple(jnp.asarray(a) for a in test)
    runs = _batched_runs(spec, mesh, method, shared)
    keys = jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32))
    out = runs(
        keys,
        jnp.asarray(aggregator_indices, jnp.int32),
        jnp.asarray(attack_indices),
        jnp.asarray(learning_rates, jnp.float32),
        train_on,
        test_on,
    )
    return jax.tree_util.tree_map(np.asarray, out)
