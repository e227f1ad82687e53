"""Trains the character-level LM once per normaliser with the shared harness."""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax.training import train_state

from jaxlab.data.pipeline import batch_dataset
from jaxlab.data.text import char_vocabulary, encode, shakespeare_splits, windows
from jaxlab.nn import TransformerLM
from jaxlab.train import create_state, fit, mesh_from_config
from jaxlab.train.mesh import batch_sharding, replicated
from jaxlab.train.plan import PlanSpec, abstract

from ..trainer import multimax_optimizer


def next_token_nll(apply_fn, params, window: jax.Array) -> jax.Array:
    """Mean next-token negative log-likelihood (nats) of ``window: int [batch, len + 1]``."""
    logits = apply_fn({"params": params}, window[:, :-1])
    return optax.softmax_cross_entropy_with_integer_labels(logits, window[:, 1:]).mean()


def train_step(state: train_state.TrainState, batch: dict, key: jax.Array):
    del key  # no dropout
    loss, grads = jax.value_and_grad(
        lambda p: next_token_nll(state.apply_fn, p, batch["window"])
    )(state.params)
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
    )


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
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
        state, train_key = create_state(model, jnp.asarray(train_windows[:1, :-1]),
                                        multimax_optimizer(config), jax.random.key(config.seed))
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
    """For ``jaxlab plan``: one MultiMax train step, state replicated, batch over ``data``."""
    train_text, _ = shakespeare_splits(tuple(config.validation_plays))
    model = make_model(config, "multimax", len(char_vocabulary(train_text)))
    window = jax.ShapeDtypeStruct((config.batch_size, config.seq_len + 1), jnp.int32)
    state = jax.eval_shape(
        lambda w: create_state(model, w[:1, :-1], multimax_optimizer(config),
                               jax.random.key(config.seed))[0],
        window)
    rng = jax.eval_shape(lambda: jax.random.key(0))
    return PlanSpec(
        fn=train_step,
        abstract_args=(abstract(state, replicated(mesh)),
                       abstract({"window": window}, batch_sharding(mesh)),
                       abstract(rng, replicated(mesh))),
        steps_per_run=config.num_steps,
        num_runs=len(config.normalizers) * config.num_seeds,
        note=f"one train step of the MultiMax LM (batch {config.batch_size} × "
        f"{config.seq_len} characters over data); validation not planned")
