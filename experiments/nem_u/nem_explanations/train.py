"""SimCLR encoder → frozen → NEM-U decoder; NEM vs RELAX vs gradient saliency per seed."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.data import load_images
from jaxlab.data.canvas import textured_canvases
from jaxlab.data.paths import resolve_data_dir
from jaxlab.data.streaming import open_source
from jaxlab.explain import (
    MaskDecoder,
    NEMParams,
    StagedEncoder,
    deletion_auc,
    gradient_saliency,
    mass_inside,
    nem_mask,
    nem_objective,
    pointing_game,
    relax,
)
from jaxlab.nn import simclr_loss
from jaxlab.train import (
    atomic_write_npz,
    fit,
    make_optimizer,
    optimizer_step,
    time_min_of_k,
    to_host,
)
from jaxlab.train.mesh import replicated
from jaxlab.train.plan import PlanSpec, abstract


class Projection(nn.Module):
    """SimCLR's projection head (trained with the encoder, dropped afterwards)."""

    dim: int

    @nn.compact
    def __call__(self, e):
        return nn.Dense(self.dim)(nn.relu(nn.Dense(e.shape[-1])(e)))


def augment(key, x, config):
    """A SimCLR view of ``x [b, S, S, 1]``: shift (±``max_shift``), flip (probability
    ``view_flip``), gain in ``view_gain``, bias in ±``view_bias``, noise ``view_noise``."""
    max_shift = config.max_shift
    b, s = x.shape[0], x.shape[1]
    k_shift, k_flip, k_gain, k_bias, k_noise = jax.random.split(key, 5)
    padded = jnp.pad(
        x, ((0, 0), (max_shift, max_shift), (max_shift, max_shift), (0, 0)), mode="edge"
    )
    shifts = jax.random.randint(k_shift, (b, 2), 0, 2 * max_shift + 1)
    x = jax.vmap(lambda im, sh: jax.lax.dynamic_slice(im, (sh[0], sh[1], 0), (s, s, 1)))(
        padded, shifts
    )
    flip = jax.random.bernoulli(k_flip, config.view_flip, (b, 1, 1, 1))
    x = jnp.where(flip, x[:, :, ::-1], x)
    low, high = config.view_gain
    gain = jax.random.uniform(k_gain, (b, 1, 1, 1), minval=low, maxval=high)
    bias = jax.random.uniform(
        k_bias, (b, 1, 1, 1), minval=-config.view_bias, maxval=config.view_bias
    )
    return x * gain + bias + config.view_noise * jax.random.normal(k_noise, x.shape)


def _models(config):
    enc = StagedEncoder(tuple(config.widths), config.emb_dim)
    head = Projection(config.proj_dim)
    dec = MaskDecoder(channels=tuple(config.decoder_channels), patch=config.patch)
    return enc, head, dec


class Steps(NamedTuple):
    """The jitted programs of a seed's training (see :func:`steps`)."""

    simclr_step: Callable
    nem_step: Callable
    init_encoder: Callable
    init_decoder: Callable


def steps(config) -> Steps:
    """Jitted SimCLR and NEM-U steps and their initialisers."""
    enc, head, dec = _models(config)
    simclr_opt = make_optimizer(config.simclr_optimizer)
    nem_opt = make_optimizer(config.nem_optimizer)

    def simclr_loss_fn(p, views):
        z = head.apply(p["head"], enc.apply(p["enc"], views)[0])
        z1, z2 = jnp.split(z, 2)
        return simclr_loss(z1, z2, config.temperature)

    simclr_update = optimizer_step(simclr_loss_fn, simclr_opt)

    def nem_loss_fn(theta, batch):
        enc_params, x = batch
        return nem_objective(
            enc.apply, dec, NEMParams(enc_params, theta), x, 0.0, config.lambda_f, config.lambda_s
        )

    nem_update = optimizer_step(nem_loss_fn, nem_opt, has_aux=True)

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def simclr_step(p, state, data, key):
        k_idx, k_aug = jax.random.split(key)
        x = data[jax.random.randint(k_idx, (config.simclr_batch,), 0, data.shape[0])]
        views = augment(k_aug, jnp.concatenate([x, x]), config)  # two views
        (p, state), loss = simclr_update((p, state), views)
        return p, state, loss

    @jax.jit  # no donation: Prodigy's state holds the initial parameters' buffers
    def nem_step(theta, state, enc_params, data, key):
        x = data[jax.random.randint(key, (config.nem_batch,), 0, data.shape[0])]
        (theta, state), (loss, aux) = nem_update((theta, state), (enc_params, x))
        return theta, state, (loss, aux["mask_mean"])

    @jax.jit
    def init_encoder(key, x):
        k_enc, k_head = jax.random.split(key)
        p = {"enc": enc.init(k_enc, x), "head": head.init(k_head, jnp.zeros((2, config.emb_dim)))}
        return p, simclr_opt.init(p)

    @jax.jit
    def init_decoder(key, enc_params, x):
        theta = dec.init(key, enc.apply(enc_params, x)[1], x.shape[1:3])
        return theta, nem_opt.init(theta)

    return Steps(simclr_step, nem_step, init_encoder, init_decoder)


def trainers(config):
    """SimCLR and NEM-U training loops, each a :func:`jaxlab.train.fit` over the jitted step
    (a Python loop over jitted steps compiles several times faster on CPU than the same
    steps inside ``lax.scan``). Each takes a ``checkpoints`` folder (or ``None``): the loop
    saves there every ``config.checkpoint_every`` steps and resumes from it, ending as an
    uninterrupted run (each step's key is ``fold_in(run key, step)``). The last loss rides
    in the state, so a restored finished loop returns it too."""
    simclr_step, nem_step, init_encoder, init_decoder = steps(config)
    nan = jnp.float32(jnp.nan)

    def loop(train_step, state, data, num_steps, key, checkpoints, desc):
        state, _ = fit(
            # Distinct buffers: fit donates the state, and an optimiser state may hold the
            # initial parameters' buffers.
            state=jax.tree.map(jnp.array, state),
            train_step=train_step,
            batch_at=lambda step: data,  # every step samples its batch from all of data
            num_steps=num_steps,
            key=key,
            workdir=checkpoints,
            checkpoint_every=config.checkpoint_every,
            log_every=max(num_steps, 1),
            desc=desc,
            hparams=config.to_dict(),
        )
        return state

    def train_encoder(key, data, checkpoints=None):
        """SimCLR on ``data [n, S, S, 1]``; returns the encoder's parameters, last loss."""
        k_init, k_run = jax.random.split(key)

        def train_step(state, images, step_key):
            p, opt_state, loss = simclr_step(*state[:2], images, step_key)
            return (p, opt_state, loss), {"loss": loss}

        state = (*init_encoder(k_init, data[:2]), nan)
        p, _, loss = loop(
            train_step, state, data, config.simclr_steps, k_run, checkpoints, "simclr"
        )
        return p["enc"], loss

    def train_decoder(key, enc_params, data, checkpoints=None):
        """NEM-U's decoder on the frozen encoder; returns θ, last loss and mask mean."""
        k_init, k_run = jax.random.split(key)

        def train_step(state, batch, step_key):
            theta, opt_state, aux = nem_step(*state[:2], *batch, step_key)
            return (theta, opt_state, aux), {"loss": aux[0], "mask_mean": aux[1]}

        state = (*init_decoder(k_init, enc_params, data[:2]), (nan, nan))
        theta, _, aux = loop(
            train_step, state, (enc_params, data), config.nem_steps, k_run, checkpoints, "nem-u"
        )
        return theta, *aux

    return train_encoder, train_decoder


def explainers(config):
    """The three explainers as jitted functions of (encoder params, decoder params, x, key)."""
    enc, _, dec = _models(config)

    def encode(p):
        return lambda x: enc.apply(p, x)[0]

    @jax.jit
    def nem(enc_params, theta, x, key):
        del key
        return nem_mask(enc.apply, dec, NEMParams(enc_params, theta), x)[0]

    @jax.jit
    def relax_maps(enc_params, theta, x, key):
        del theta
        keys = jax.random.split(key, x.shape[0])
        one = functools.partial(
            relax,
            encode(enc_params),
            num_masks=config.relax_masks,
            chunk_size=config.relax_chunk,
            cells=config.relax_cells,
        )
        return jax.lax.map(lambda a: one(a[0], a[1]), (x, keys))

    @jax.jit
    def saliency(enc_params, theta, x, key):
        del theta, key
        return gradient_saliency(encode(enc_params), x)

    @jax.jit
    def scores(enc_params, x, maps, gt):
        # Mass inside on maps shifted to a zero minimum per image: RELAX's importance is a
        # similarity-weighted average whose constant offset (the mean similarity) carries
        # no location; the raw maps' mass is reported too.
        shifted = maps - jnp.min(maps, axis=(1, 2), keepdims=True)
        return {
            "pointing_game": pointing_game(maps, gt).mean(),
            "mass_inside": mass_inside(shifted, gt).mean(),
            "mass_inside_raw": mass_inside(maps, gt).mean(),
            "deletion_auc": deletion_auc(
                encode(enc_params), x, maps, 0.0, config.deletion_steps
            ).mean(),
        }

    return {"nem": nem, "relax": relax_maps, "saliency": saliency}, scores


class Items(NamedTuple):
    """A Fashion-MNIST split read by index: ``size`` items, ``take(ids [k])`` the items
    ``[k, 28, 28, 1]`` in [0, 1] (uint8 / 255) at those indices of the source's order."""

    size: int
    take: Callable[[np.ndarray], np.ndarray]


def load_items(config: ml_collections.ConfigDict, split: str) -> Items:
    """A Fashion-MNIST split: from TFDS (``fashion_mnist``,
    :func:`jaxlab.data.streaming.open_source`) when ``config.datasets`` names it, each
    ``take`` reading only the records it asks for (random access), so a process holds a
    seed's ``num_train`` and ``num_eval`` items, not the split; else from the IDX files
    (``fashion_mnist_idx``, :func:`jaxlab.data.load_images`), held whole in memory."""
    if "fashion_mnist" in config.datasets:
        source = open_source("fashion_mnist", split, data_dir=config.data_dir or None)

        def take(ids: np.ndarray) -> np.ndarray:
            images = np.stack([np.asarray(source[int(i)]["image"]) for i in ids])
            return images.reshape(len(ids), 28, 28, 1).astype(np.float32) / 255.0

        return Items(len(source), take)
    images = load_images("fashion_mnist", split, resolve_data_dir(config.data_dir or None))[0]
    return Items(len(images), lambda ids: images[ids])


def train_and_evaluate(
    config: ml_collections.ConfigDict, workdir: str
) -> dict[str, float | list[float]]:
    # Each seed's encoder and decoder checkpoint under ``workdir/seed_<seed>/``, so a killed
    # run resumes there (a finished seed is restored and evaluated again). The first seed's
    # first explanations are saved to ``workdir/examples.npz`` (images, ground truth, one
    # map per method) for the notebook.
    items = {split: load_items(config, split) for split in {config.train_split, "test"}}
    train_encoder, train_decoder = trainers(config)
    methods, scores = explainers(config)
    out: dict[str, list[float]] = {}

    def put(name, value):
        out.setdefault(name, []).append(float(value))

    for seed in range(config.seed, config.seed + config.num_seeds):
        key = jax.random.key(seed, impl="rbg")  # compiles far faster on CPU than threefry
        k_enc, k_dec, k_eval = jax.random.split(key, 3)
        rng = np.random.default_rng(seed)
        train = items[config.train_split]
        train_items = train.take(rng.choice(train.size, config.num_train, replace=False))
        test = items["test"]
        eval_items = test.take(rng.choice(test.size, config.num_eval, replace=False))
        train_x, _, _ = textured_canvases(train_items, 10_000 + seed, config.canvas_size)
        eval_x, eval_gt, _ = textured_canvases(eval_items, 20_000 + seed, config.canvas_size)
        train_x, eval_x, eval_gt = map(jnp.asarray, (train_x, eval_x, eval_gt))
        folder = os.path.join(workdir, f"seed_{seed}")
        enc_params, simclr_loss_final = train_encoder(
            k_enc, train_x, os.path.join(folder, "encoder")
        )
        theta, nem_loss_final, mask_mean = train_decoder(
            k_dec, enc_params, train_x, os.path.join(folder, "decoder")
        )
        put("simclr_loss_final", simclr_loss_final)
        put("nem_loss_final", nem_loss_final)
        put("nem_mask_mean", mask_mean)
        put("chance_pointing_game", jnp.mean(eval_gt))
        examples = {"x": eval_x[:8, ..., 0], "gt": eval_gt[:8]}
        for name, fn in methods.items():
            maps = fn(enc_params, theta, eval_x, k_eval)
            examples[name] = maps[:8]
            for metric, value in scores(enc_params, eval_x, maps, eval_gt).items():
                put(f"{name}_{metric}", value)
        if seed == config.seed:
            atomic_write_npz(os.path.join(workdir, "examples.npz"), to_host(examples))
        x_time = eval_x[: config.num_time]
        # One timing sample per seed: the fastest of timing_k interleaved calls of each
        # method on this seed's images, encoder and decoder.
        times = time_min_of_k(
            {
                name: functools.partial(fn, enc_params, theta, x_time, k_eval)
                for name, fn in methods.items()
            },
            k=config.timing_k,
            warmup=1,
        )
        for name, t in times.items():
            put(f"{name}_explanations_per_s", config.num_time / t)
            put(f"{name}_log10_explanations_per_s", float(np.log10(config.num_time / t)))
        put("speedup_nem_over_relax", times["relax"] / times["nem"])
        put("nem_pointing_game_plus_margin", out["nem_pointing_game"][-1] + config.pointing_margin)
        put("nem_mass_inside_plus_margin", out["nem_mass_inside"][-1] + config.mass_margin)
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one SimCLR step (:func:`steps`' ``simclr_step``, the costliest:
    two augmented views of a batch through the encoder), on the layout of ``config.mesh``:
    everything replicated, as the run places it. A run is one seed; the decoder's NEM-U
    steps (half as many, batch 32) and the explainers are not planned."""
    step = steps(config)
    size = config.canvas_size
    data = jax.ShapeDtypeStruct((config.num_train, size, size, 1), jnp.float32)
    key = jax.eval_shape(lambda: jax.random.key(0, impl="rbg"))
    p, state = jax.eval_shape(step.init_encoder, key, data)
    rep = replicated(mesh)
    return PlanSpec(
        fn=step.simclr_step,
        abstract_args=abstract((p, state, data, key), rep),
        steps_per_run=config.simclr_steps,
        num_runs=config.num_seeds,
        note=f"one SimCLR step (batch {config.simclr_batch} × 2 views of {size}×{size} "
        "canvases, staged conv encoder); NEM-U decoder steps and explainers not planned",
    )
