"""Online test-time adaptation along a long corrupted stream.

A small CNN with LayerNorm is trained on clean images; the test stream is a sequence of
segments, each one corruption, repeated over several passes in a new random order: on
Fashion-MNIST the synthetic corruptions (noise, blur, contrast, pixel dropout, shift) at a
random severity (quick, smoke), on CIFAR-10 the 15 CIFAR-10-C corruptions at one severity,
read from TFDS (paper). Arms: the source model,
TENT on the LayerNorm affine parameters, TENT + SLWI, and TENT + plain mean reversion. Each
arm is one ``lax.scan`` over the stream of a step ``vmap``ped over stream seeds, run in
``config.segments`` pieces checkpointed under the workdir (``segmented_scan_run``).
"""

from __future__ import annotations

import functools
import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax

from jaxlab.data import image_ops, load_images
from jaxlab.data.streaming import open_source
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    replicate,
    runs_sharding,
    scan_run,
    segmented_scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs, run_lanes
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab.train.timing import ratios, time_min_of_k
from jaxlab.tta import mean_reversion, slwi_init, slwi_update, tent, tent_step

ADAPTED = ("LayerNorm_0", "LayerNorm_1")


class Net(nn.Module):
    channels: tuple[int, ...] = (16, 32)

    @nn.compact
    def __call__(self, x):
        for c in self.channels:
            x = nn.Conv(c, (3, 3), strides=(2, 2))(x)
            x = nn.relu(nn.LayerNorm()(x))
        return nn.Dense(10)(x.mean(axis=(1, 2)))


def _load(config):
    """Fashion-MNIST's train and test splits, mean-pooled to ``image_size`` (synthetic
    stream), or CIFAR-10's and its corrupted test sets (``config.stream ==
    "cifar10_corrupted"``, :func:`_load_cifar10_c`)."""
    if config.stream == "cifar10_corrupted":
        return _load_cifar10_c(config)
    out = {}
    for split in ("train", "test"):
        x, y = load_images("fashion_mnist", split, config.data_dir or None)
        f = 28 // config.image_size
        x = x[..., 0].reshape(-1, config.image_size, f, config.image_size, f).mean(axis=(2, 4))
        out[split] = (x[..., None], y)
    return out


def _load_cifar10_c(config):
    """TFDS ``cifar10`` (train, test) and ``cifar10_corrupted/<corruption>_<severity>``'s
    test sets, normalised with CIFAR-10's training statistics
    (:data:`jaxlab.data.image_ops.STATS`); the corrupted sets stacked ``[K, n, 32, 32, 3]``
    in ``config.corruptions``' order, cut to the shortest (``n`` = 10,000 on the real
    data)."""
    ops = image_ops.eval_ops("cifar10")
    out = {}
    for split in ("train", "test"):
        arrays = image_ops.to_arrays(
            open_source("cifar10", split, data_dir=config.data_dir or None), ops
        )
        out[split] = (arrays["image"], arrays["label"])
    sets = [
        image_ops.to_arrays(
            open_source(
                f"cifar10_corrupted/{name}_{config.severity}",
                "test",
                data_dir=config.data_dir or None,
            ),
            ops,
        )
        for name in config.corruptions
    ]
    n = min(len(a["label"]) for a in sets)
    out["stream"] = (
        np.stack([a["image"][:n] for a in sets]),
        np.stack([a["label"][:n] for a in sets]),
    )
    return out


def _box_blur(x):
    padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
    h, w = x.shape[1], x.shape[2]
    return sum(padded[:, i : i + h, j : j + w] for i in range(3) for j in range(3)) / 9.0


def _corrupt(key, x, kind, severity):
    """One of five corruptions at severity 1..5 (``kind``/``severity`` may be traced)."""
    s = severity.astype(jnp.float32)
    k1, k2 = jax.random.split(key)
    branches = [
        lambda x: x + 0.08 * s * jax.random.normal(k1, x.shape),
        lambda x: jax.lax.fori_loop(0, severity, lambda _, y: _box_blur(y), x),
        lambda x: (
            (x - x.mean(axis=(1, 2, 3), keepdims=True)) * (1.0 - 0.17 * s)
            + x.mean(axis=(1, 2, 3), keepdims=True)
        ),
        lambda x: x * (jax.random.uniform(k2, x.shape) > 0.1 * s),
        lambda x: jnp.roll(x, severity, axis=2),
    ]
    return jnp.clip(jax.lax.switch(kind, branches, x), 0.0, 1.0)


def _stream(key, x_test, y_test, config):
    """Images, labels [T, b, ...] of one stream: segments of one corruption each."""
    n_kinds, per, b = len(config.corruptions), config.batches_per_segment, config.batch_size
    keys = jax.random.split(key, 4)
    kinds = jnp.concatenate(
        [jax.random.permutation(k, n_kinds) for k in jax.random.split(keys[0], config.passes)]
    )
    severity = jax.random.randint(keys[1], kinds.shape, 1, 6)
    steps = kinds.shape[0] * per
    idx = jax.random.randint(keys[2], (steps, b), 0, x_test.shape[0])
    kind_t, sev_t = jnp.repeat(kinds, per), jnp.repeat(severity, per)
    images = jax.vmap(_corrupt)(jax.random.split(keys[3], steps), x_test[idx], kind_t, sev_t)
    return images, y_test[idx]


def _corrupted_stream(key, sets, set_labels, config):
    """Images, labels [T, b, ...] of one continual CIFAR-10-C stream: each pass visits the
    corruptions in a new random order; a segment is ``batches_per_segment`` batches of that
    corruption's images, drawn without replacement (the whole set when
    ``batches_per_segment · b`` equals its size).

    Raises:
      ValueError: a segment needs more images than a corruption's set holds.
    """
    n_kinds, per, b = sets.shape[0], config.batches_per_segment, config.batch_size
    if per * b > sets.shape[1]:
        raise ValueError(
            f"batches_per_segment · batch_size = {per} · {b} = {per * b} images a segment, "
            f"but each corruption's set holds {sets.shape[1]}"
        )
    keys = jax.random.split(key, 2)
    kinds = jnp.concatenate(
        [jax.random.permutation(k, n_kinds) for k in jax.random.split(keys[0], config.passes)]
    )
    orders = jax.vmap(lambda k: jax.random.permutation(k, sets.shape[1])[: per * b])(
        jax.random.split(keys[1], kinds.shape[0])
    )
    idx = orders.reshape(-1, b)
    kind_t = jnp.repeat(kinds, per)
    return sets[kind_t[:, None], idx], set_labels[kind_t[:, None], idx]


def _split(params):
    adapted = {k: params[k] for k in ADAPTED}
    frozen = {k: v for k, v in params.items() if k not in ADAPTED}
    return frozen, adapted


def _arm_step(arm, source, config):
    """``arm``'s adaptation step, batched over stream lanes, and its initial carry.

    Returns ``(init, step)``: ``init(source)`` is one lane's state (adapted parameters,
    TENT's optimizer state, the SLWI filter); ``step(carry, (x, y))`` takes the carry
    ``(states [lanes, ...], (frozen, source))`` (the frozen and source parameters shared by
    every lane and step) and a batch per lane (``x`` [lanes, b, s, s, 1], ``y`` [lanes, b])
    and returns the next carry and the per-lane error (%) of the batch, before adapting on it.
    """
    model = Net(tuple(config.channels))
    opt = tent(make_optimizer(config.tent_optimizer), jax.tree.map(lambda _: True, source))
    hp = config.slwi.to_dict()

    def init(source):
        return source, opt.init(source), slwi_init(source)

    def one(carry, batch):
        (adapted, opt_state, filt), (frozen, source) = carry
        x, y = batch

        def apply(adapted, x):
            return model.apply({"params": {**frozen, **adapted}}, x)

        if arm == "source":
            logits = apply(adapted, x)
        else:
            adapted, opt_state, logits, updates = tent_step(adapted, opt_state, x, apply, opt)
            if arm == "slwi":
                adapted, filt, _ = slwi_update(filt, adapted, updates, **hp)
            elif arm == "pull":
                adapted = mean_reversion(adapted, source, config.pull)
        error = 100.0 * jnp.mean(logits.argmax(-1) != y)
        return ((adapted, opt_state, filt), (frozen, source)), error

    return init, jax.vmap(one, in_axes=((0, None), 0), out_axes=((0, None), 0))


def _whole_stream(arm, config):
    """``arm`` along every lane's stream as one ``lax.scan`` (``jaxlab plan`` and the timing):
    ``(images [T, lanes, ...], labels [T, lanes, b], frozen, source) -> errors [T, lanes]``."""

    def run(images, labels, frozen, source):
        init, step = _arm_step(arm, source, config)
        states = jax.vmap(lambda _: init(source))(jnp.arange(images.shape[1]))
        _, errors = scan_run(step, (states, (frozen, source)), (images, labels))
        return errors

    return run


def _time_overhead(xs, shared, n: int, config) -> tuple[list[float], list[float]]:
    """SLWI's time overhead over TENT per stream seed, and TENT's seconds per stream.

    For each of the first ``n`` lanes of ``xs`` (images [T, lanes, ...], labels
    [T, lanes, b]): that lane's stream alone (one lane, on the default device) through the
    whole-stream TENT and TENT + SLWI programs (:func:`_whole_stream`, compiled once for a
    one-lane stream before the first timing), timed with ``time_min_of_k(k=timing_k)``;
    overhead = 100 (min_SLWI / min_TENT − 1) %.
    """
    frozen, source = jax.device_put(to_host(shared))
    host_xs = to_host(xs)

    def lane(s):  # one stream on the default device, its lane axis kept (of size 1)
        return tuple(jnp.asarray(a[:, s : s + 1]) for a in host_xs)

    first = lane(0)
    compiled = {
        arm: jax.jit(_whole_stream(arm, config)).lower(*first, frozen, source).compile()
        for arm in ("tent", "slwi")
    }
    overhead, tent_s = [], []
    for s in range(n):
        images, labels = first if s == 0 else lane(s)
        times = time_min_of_k(
            {
                arm: functools.partial(fn, images, labels, frozen, source)
                for arm, fn in compiled.items()
            },
            k=config.timing_k,
            warmup=1,
        )
        overhead.append(100.0 * (ratios(times, "tent")["slwi"] - 1.0))
        tent_s.append(times["tent"])
    return overhead, tent_s


def _train_source(key, x, y, config):
    """The source model: minibatch cross-entropy on the clean training images."""
    model = Net(tuple(config.channels))
    params = model.init(key, x[:1])["params"]
    opt = make_optimizer(config.source_optimizer)
    update = optimizer_step(
        lambda p, batch: optax.softmax_cross_entropy_with_integer_labels(
            model.apply({"params": p}, batch[0]), batch[1]
        ).mean(),
        opt,
    )

    def step(carry, t):
        idx = jax.random.randint(jax.random.fold_in(key, t), (config.train_batch,), 0, x.shape[0])
        images = x[idx]
        if config.source_crop_padding:  # CIFAR-10's random crop and flip
            images = image_ops.random_crop_flip(
                jax.random.fold_in(key, -1 - t), images, config.source_crop_padding, True
            )
        return update(carry, (images, y[idx]))

    (params, _), _ = scan_run(step, (params, opt.init(params)), length=config.train_steps)
    return params


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Trains the source model, then runs every arm on ``num_seeds`` streams (vmap), each
    arm's stream scan in ``config.segments`` pieces checkpointed under
    ``<workdir>/stream_<arm>`` (a killed run resumes after its last finished piece)."""
    data = _load(config)
    (x_tr, y_tr), (x_te, y_te) = data["train"], data["test"]
    params = jax.jit(lambda k, x, y: _train_source(k, x, y, config))(
        jax.random.key(config.seed), jnp.asarray(x_tr), jnp.asarray(y_tr)
    )
    frozen, source = _split(params)
    # The stream seeds split over the mesh's runs axis; the lanes beyond num_seeds (padding
    # to a multiple of the devices) repeat stream 0 and are dropped from every result.
    mesh = mesh_from_config(config, RUNS_AXIS)
    n = config.num_seeds
    lanes = run_lanes(n, mesh)
    seeds = jnp.asarray(config.seed + lanes, jnp.int32)
    stream = _corrupted_stream if config.stream == "cifar10_corrupted" else _stream
    make = batch_runs(lambda k, x, y: stream(k, x, y, config), in_axes=(0, None, None), mesh=mesh)
    x_stream, y_stream = data.get("stream", (x_te, y_te))
    images, labels = make(
        jax.vmap(lambda s: jax.random.key(s + 1000))(seeds),
        jnp.asarray(x_stream),
        jnp.asarray(y_stream),
    )
    del x_stream, y_stream
    # The scans' step inputs: [T, lanes, ...], lanes still split over the runs axis.
    xs = (jnp.swapaxes(images, 0, 1), jnp.swapaxes(labels, 0, 1))
    del images, labels
    # The model's frozen and source parameters ride in every carry, replicated (a few
    # thousand floats: checkpointed with the lanes' states at no real cost).
    shared = replicate((frozen, source), mesh)
    clean_x = jnp.asarray(x_te[: config.source_eval])
    clean_y = jnp.asarray(y_te[: config.source_eval])
    model = Net(tuple(config.channels))

    def clean_error(adapted):
        logits = model.apply({"params": {**frozen, **adapted}}, clean_x)
        return 100.0 * jnp.mean(logits.argmax(-1) != clean_y)

    results: dict[str, float | list[float]] = {}
    steps = xs[1].shape[0]
    for arm in ("source", "tent", "slwi", "pull"):
        init, step = _arm_step(arm, source, config)
        states = batch_runs(lambda _, s, init=init: init(s), in_axes=(0, None), mesh=mesh)(
            seeds, source
        )
        (states, _), errors = segmented_scan_run(
            step,
            (states, shared),
            xs,
            segments=config.segments,
            checkpointer=Checkpointer(os.path.join(workdir, f"stream_{arm}")),
            mesh=mesh,
            carry_axes=(0, None),
        )
        errors = errors.T[:n]  # [seeds, T]
        adapted = jax.tree.map(lambda a: a[:n], states[0])
        results[f"{arm}_online_error"] = errors.mean(axis=1).tolist()
        results[f"{arm}_last_pass_error"] = errors[:, -steps // config.passes :].mean(1).tolist()
        results[f"{arm}_source_error"] = to_host(jax.vmap(clean_error)(adapted)).tolist()
        # Error curve over the stream, averaged over seeds, in 10 chunks (for plots).
        chunks = np.array_split(errors.mean(0), min(10, steps))
        results[f"{arm}_error_curve"] = [float(c.mean()) for c in chunks]
    # SLWI's time overhead over TENT, one sample per stream seed: that seed's single-stream
    # TENT and TENT + SLWI programs (compiled once, before any timing) timed min-of-k
    # interleaved (``time_min_of_k``), so a load burst on the shared machine slows both arms
    # of its round and each seed's minimum is its least disturbed cost.
    overhead, tent_s = _time_overhead(xs, shared, n, config)
    results["slwi_time_overhead"] = overhead
    results["tent_ms_per_step"] = 1000.0 * float(np.median(tent_s)) / steps
    return results


def _channels(config) -> int:
    return 3 if config.stream == "cifar10_corrupted" else 1


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the TENT + SLWI arm along every seed's stream (the run's
    :func:`_whole_stream`, one scan of the vmapped step, unsegmented), streams split over
    ``runs`` (the plan's images are [lanes, T, ...], swapped to the scan's step-major
    layout inside), the model replicated.

    A call is the whole stream of every seed (its scan counted at its trip count). The
    four arms run in turn (runs = 4 × seeds, each counted at SLWI's cost: an upper
    bound for the source and TENT arms); source training and timing are not planned.
    """
    lanes = padded_runs(config.num_seeds, mesh)
    split = runs_sharding(mesh)
    rep = replicated(mesh)
    size, b, ch = config.image_size, config.batch_size, _channels(config)
    steps = len(config.corruptions) * config.passes * config.batches_per_segment
    params = jax.eval_shape(
        lambda k: Net(tuple(config.channels)).init(k, jnp.zeros((1, size, size, ch)))["params"],
        jax.eval_shape(lambda: jax.random.key(0)),
    )
    frozen, source = _split(params)
    images = jax.ShapeDtypeStruct((lanes, steps, b, size, size, ch), jnp.float32)
    labels = jax.ShapeDtypeStruct((lanes, steps, b), jnp.int32)
    stream = _whole_stream("slwi", config)

    def run(images, labels, frozen, source):
        return stream(jnp.swapaxes(images, 0, 1), jnp.swapaxes(labels, 0, 1), frozen, source)

    return PlanSpec(
        fn=run,
        abstract_args=(
            abstract(images, split),
            abstract(labels, split),
            abstract(frozen, rep),
            abstract(source, rep),
        ),
        steps_per_run=1,
        num_runs=4 * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"{steps} TENT + SLWI steps (batch {b} of {size}×{size} images) of every stream; "
        "source training and timing not planned",
    )
