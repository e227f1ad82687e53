"""Trains the LM once per normaliser with the shared harness.

Two input paths: the quick and smoke presets hold Shakespeare's characters in memory
(:func:`jaxlab.data.batch_dataset`); the paper preset streams ``wikitext103`` from TFDS
as fairseq's word-level 512-token blocks (:mod:`jaxlab.data.wikitext`,
:func:`jaxlab.data.streaming.make_loader`, :class:`jaxlab.train.DeviceStream`) and
evaluates the whole validation and test splits, split over ``data``.
"""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax.training import train_state

from jaxlab.data import wikitext
from jaxlab.data.pipeline import batch_dataset
from jaxlab.data.streaming import eval_batches, make_loader, open_source
from jaxlab.data.text import char_vocabulary, encode, shakespeare_splits, windows
from jaxlab.nn import TransformerLM
from jaxlab.train import compute_dtype, create_state, fit, mesh_from_config, param_dtype
from jaxlab.train.lifecycle import to_host
from jaxlab.train.mesh import batch_sharding, replicated
from jaxlab.train.plan import InputPipeline, PlanSpec, abstract
from jaxlab.train.prefetch import DeviceStream, device_batches

from ..trainer import multimax_optimizer


def next_token_nll(apply_fn, params, window: jax.Array) -> jax.Array:
    """Mean next-token negative log-likelihood (nats) of ``window: int [batch, len + 1]``."""
    logits = apply_fn({"params": params}, window[:, :-1])
    return optax.softmax_cross_entropy_with_integer_labels(logits, window[:, 1:]).mean()


def train_step(state: train_state.TrainState, batch: dict, key: jax.Array):
    del key  # no dropout
    loss, grads = jax.value_and_grad(lambda p: next_token_nll(state.apply_fn, p, batch["window"]))(
        state.params
    )
    return state.apply_gradients(grads=grads), {"loss": loss}


def validation_perplexity(apply_fn, params, val_windows: np.ndarray, batch_size: int) -> float:
    nll = jax.jit(lambda w: next_token_nll(apply_fn, params, w))
    total, count = 0.0, 0
    for start in range(0, len(val_windows), batch_size):
        chunk = val_windows[start : start + batch_size]
        total += float(nll(chunk)) * len(chunk)
        count += len(chunk)
    return math.exp(total / count)


def make_model(config: ml_collections.ConfigDict, normalizer: str, vocab_size: int):
    return TransformerLM(
        vocab_size=vocab_size,
        max_len=config.seq_len,
        dim=config.dim,
        depth=config.depth,
        num_heads=config.num_heads,
        mlp_dim=config.mlp_dim,
        attention_normalizer=normalizer,
        output_normalizer=normalizer,
        dtype=compute_dtype(config),
        param_dtype=param_dtype(config),
        tie_embeddings=config.get("tie_embeddings", False),
    )


def weighted_nll(apply_fn, params, tokens: jax.Array, weights: jax.Array) -> jax.Array:
    """``[batch, block]`` next-token negative log-likelihoods (nats) times ``weights``."""
    logits = apply_fn({"params": params}, tokens[:, :-1])
    return weights * optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:])


def block_step(state: train_state.TrainState, batch: dict, key: jax.Array):
    """The paper preset's step: mean NLL over the real target tokens of the blocks."""
    del key  # no dropout

    def loss_fn(params):
        nll = weighted_nll(state.apply_fn, params, batch["tokens"], batch["weights"])
        return jnp.sum(nll) / jnp.maximum(jnp.sum(batch["weights"]), 1.0)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), {"loss": loss}


def streamed_perplexity(apply_fn, params, blocks: wikitext.TokenBlocks, config, mesh) -> float:
    """exp(mean NLL) over every token of ``blocks`` (one pass, batches split over ``data``,
    padding rows and padding tokens weighted 0); one batch in a dry run."""

    @jax.jit
    def sums(p, batch):
        weights = batch["weights"] * batch["mask"][:, None]
        return jnp.sum(weighted_nll(apply_fn, p, batch["tokens"], weights)), jnp.sum(weights)

    total = count = None
    batches = eval_batches(
        blocks,
        [],
        global_batch=config.eval_batch_size,
        max_batches=1 if config.dry_run else None,
        workers=config.data_workers,
    )
    for batch in device_batches(batches, mesh):
        t, n = sums(params, batch)
        total, count = (t, n) if total is None else (total + t, count + n)
    total, count = to_host((total, count))
    return math.exp(float(total) / float(count))


def wikitext_blocks(config: ml_collections.ConfigDict) -> dict[str, wikitext.TokenBlocks]:
    """``wikitext103``'s splits as fairseq's token blocks, over the training vocabulary
    (one counting pass per split).

    Raises:
      ValueError: the training vocabulary is larger than ``config.vocab_size``.
    """
    import jaxlab.data.tfds_builders  # noqa: F401  (registers wikitext103)

    data_dir = config.data_dir or None
    train = open_source("wikitext103", "train", data_dir=data_dir)
    lengths, counts = wikitext.count_lines(train, count_words=True)
    vocabulary = wikitext.fairseq_vocabulary(counts)
    if len(vocabulary) > config.vocab_size:
        raise ValueError(
            f"the training split has {len(vocabulary)} tokens, more than "
            f"vocab_size {config.vocab_size}"
        )
    blocks = {"train": wikitext.TokenBlocks(train, vocabulary, lengths, config.block_size)}
    for split in config.eval_splits:
        source = open_source("wikitext103", split, data_dir=data_dir)
        blocks[split] = wikitext.TokenBlocks(
            source, vocabulary, wikitext.count_lines(source)[0], config.block_size
        )
    return blocks


def train_and_evaluate_streamed(
    config: ml_collections.ConfigDict, workdir: str
) -> dict[str, float]:
    """The paper preset: fairseq's WikiText-103 LM recipe, streamed, per normaliser."""
    blocks = wikitext_blocks(config)
    mesh = mesh_from_config(config)
    results: dict[str, float] = {}
    for normalizer in config.normalizers:
        model = make_model(config, normalizer, config.vocab_size)
        state, train_key = create_state(
            model,
            jnp.zeros((1, config.block_size), jnp.int32),
            multimax_optimizer(config),
            jax.random.key(config.seed),
        )
        loader = make_loader(
            blocks["train"],
            [],
            global_batch=config.batch_size,
            seed=config.seed,
            workers=config.data_workers,
        )
        stream = DeviceStream(loader, mesh)
        try:
            state, history = fit(
                state=state,
                train_step=block_step,
                batches=stream,
                num_steps=config.num_steps,
                key=train_key,
                workdir=os.path.join(workdir, normalizer),
                checkpoint_every=config.checkpoint_every,
                log_every=config.log_every,
                mesh=mesh,
                desc=f"lm/{normalizer}",
                hparams={**config.to_dict(), "normalizer": normalizer},
            )
        finally:
            stream.close()
        for split in config.eval_splits:
            name = "val" if split == "validation" else split
            results[f"{name}_perplexity_{normalizer}"] = streamed_perplexity(
                model.apply, state.params, blocks[split], config, mesh
            )
        results[f"train_loss_{normalizer}"] = float(history[-1]["loss"])
    return results


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    if "wikitext103" in config.datasets:
        return train_and_evaluate_streamed(config, workdir)
    train_text, val_text = shakespeare_splits(tuple(config.validation_plays))
    vocabulary = char_vocabulary(train_text)
    train_windows = windows(encode(train_text, vocabulary), config.seq_len)
    val_windows = windows(encode(val_text, vocabulary), config.seq_len)
    if config.eval_windows:
        val_windows = val_windows[: config.eval_windows]
    dataset = batch_dataset({"window": train_windows}, config.batch_size, config.seed)
    mesh = mesh_from_config(config)  # the batch rows split over the data axis
    results: dict[str, float] = {}
    for normalizer in config.normalizers:
        model = make_model(config, normalizer, len(vocabulary))
        state, train_key = create_state(
            model,
            jnp.asarray(train_windows[:1, :-1]),
            multimax_optimizer(config),
            jax.random.key(config.seed),
        )
        state, history = fit(
            state=state,
            train_step=train_step,
            batch_at=lambda step: dataset[step],
            num_steps=config.num_steps,
            key=train_key,
            workdir=os.path.join(workdir, normalizer),
            checkpoint_every=config.checkpoint_every,
            log_every=config.log_every,
            mesh=mesh,
            desc=f"lm/{normalizer}",
            hparams={**config.to_dict(), "normalizer": normalizer},
        )
        results[f"val_perplexity_{normalizer}"] = validation_perplexity(
            model.apply, state.params, val_windows, config.eval_batch_size
        )
        results[f"train_loss_{normalizer}"] = float(history[-1]["loss"])
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one MultiMax train step, state replicated, batch over ``data``
    (the paper preset: a batch of WikiText-103 token blocks). On WikiText-103 the
    perplexity pass over validation and test (about 217,646 + 245,569 tokens, Merity et
    al. 2016, Table 1) is a program of its own, and the host's token blocks (split and
    looked up per line) the input pipeline of a train call."""
    streamed = "wikitext103" in config.datasets
    if streamed:
        model, length = make_model(config, "multimax", config.vocab_size), config.block_size
    else:
        train_text, _ = shakespeare_splits(tuple(config.validation_plays))
        model = make_model(config, "multimax", len(char_vocabulary(train_text)))
        length = config.seq_len
    window = jax.ShapeDtypeStruct((config.batch_size, length + 1), jnp.int32)
    state = jax.eval_shape(
        lambda w: create_state(
            model, w[:1, :-1], multimax_optimizer(config), jax.random.key(config.seed)
        )[0],
        window,
    )
    rng = jax.eval_shape(lambda: jax.random.key(0))
    if streamed:
        batch = {
            "tokens": window,
            "weights": jax.ShapeDtypeStruct((config.batch_size, length), jnp.float32),
        }
        fn, what = block_step, f"{length}-token WikiText-103 blocks"
    else:
        batch, fn, what = {"window": window}, train_step, f"{length} characters"
    runs = len(config.normalizers) * config.num_seeds
    programs, pipeline = (), None
    if streamed:
        blocks = -(-217_646 // length) + -(-245_569 // length)
        rows = config.eval_batch_size
        eval_batch = {
            "tokens": jax.ShapeDtypeStruct((rows, length + 1), jnp.int32),
            "weights": jax.ShapeDtypeStruct((rows, length), jnp.float32),
        }

        def nll(params, b):
            return jnp.sum(weighted_nll(model.apply, params, b["tokens"], b["weights"]))

        programs = (
            PlanSpec(
                fn=nll,
                abstract_args=(
                    abstract(state.params, replicated(mesh)),
                    abstract(eval_batch, batch_sharding(mesh)),
                ),
                steps_per_run=-(-blocks // rows),
                num_runs=runs,
                note=f"perplexity of {blocks} validation and test blocks",
                name="eval",
            ),
        )
        pipeline = InputPipeline(
            wikitext.synthetic_block_example(length), config.batch_size, "token blocks"
        )
    return PlanSpec(
        fn=fn,
        abstract_args=(
            abstract(state, replicated(mesh)),
            abstract(batch, batch_sharding(mesh)),
            abstract(rng, replicated(mesh)),
        ),
        steps_per_run=config.num_steps,
        num_runs=runs,
        note=f"one train step of the MultiMax LM (batch {config.batch_size} × {what} over data)",
        programs=programs,
        input_pipeline=pipeline,
    )
