"""Batched node-classification runs shared by the GADC experiments and benchmarks.

``decoupled_runs`` trains ``num_runs`` MLP/linear heads on pre-diffused features as one
``vmap``-ed program; ``graph_model_runs`` does the same for GCN/APPNP, which propagate in
every forward pass. Both accept per-run masks and features (leading run axis) or shared
ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import jraph
import numpy as np

from jaxlab.graph.diffusion import gcn_normalize
from jaxlab.graph.graphs import make_propagate
from jaxlab.graph.models import MLP
from jaxlab.graph.training import flax_fns, train_node_classifier


def row_normalize(x: jax.Array) -> jax.Array:
    """Divides each row by its sum (rows summing to 0 stay unchanged), as the reference."""
    s = jnp.sum(x, axis=-1, keepdims=True)
    return x * jnp.where(s != 0, 1.0 / jnp.where(s != 0, s, 1.0), 0.0)


def index_masks(num_nodes: int, *indices: np.ndarray) -> tuple[jax.Array, ...]:
    """Boolean ``[n]`` masks from index arrays."""
    out = []
    for idx in indices:
        m = np.zeros((num_nodes,), bool)
        m[np.asarray(idx)] = True
        out.append(jnp.asarray(m))
    return tuple(out)


def random_split_masks(key: jax.Array, num_nodes: int, fractions=(0.6, 0.2, 0.2)):
    """``[n]`` train/val/test masks of a random split (val and test of ⌊f·n⌋ nodes)."""
    perm = jax.random.permutation(key, num_nodes)
    n_val, n_test = int(num_nodes * fractions[1]), int(num_nodes * fractions[2])
    rank = jnp.zeros((num_nodes,), jnp.int32).at[perm].set(jnp.arange(num_nodes))
    val = rank < n_val
    test = (rank >= n_val) & (rank < n_val + n_test)
    return ~(val | test), val, test


_NAMES = ("x", "train", "val", "test", "labels")


def _batch_program(train_one: Callable, batching: str) -> Callable:
    """Jits ``train_one`` over a leading run axis: ``fn(keys, per_run, common) -> metrics``.

    ``per_run`` holds the arrays with a run axis, ``common`` the shared ones (both dicts
    keyed by ``_NAMES``). The arrays are arguments, not constants baked into the program:
    the same program then serves every graph of the same shapes, and XLA does not spend
    seconds constant-folding expressions of an ``[n, d]`` feature matrix.

    ``batching="vmap"`` trains the runs side by side (accelerators); ``"map"`` loops over
    them inside the program with ``lax.map`` (CPU, where XLA's batched matmuls with a
    broadcast input ran slower than the per-run 2-D matmuls); ``"auto"`` picks by backend.
    """
    if batching == "auto":
        batching = "map" if jax.default_backend() == "cpu" else "vmap"
    if batching not in ("vmap", "map"):
        raise ValueError(f"batching must be 'auto', 'vmap' or 'map', got {batching!r}")

    def one(k, batched, common):
        full = {**common, **batched}
        return train_one(k, *(full[n] for n in _NAMES))

    if batching == "vmap":
        return jax.jit(jax.vmap(one, in_axes=(0, 0, None)))
    return jax.jit(lambda ks, b, c: jax.lax.map(lambda kb: one(*kb, c), (ks, b)))


def _split_args(x, labels, masks, per_run) -> tuple[dict, dict]:
    arrays = {"x": x, "train": masks[0], "val": masks[1], "test": masks[2], "labels": labels}
    batched = {"x"} & set(per_run) | ({"train", "val", "test"} if "masks" in per_run else set())
    return ({n: arrays[n] for n in _NAMES if n in batched},
            {n: arrays[n] for n in _NAMES if n not in batched})


@functools.lru_cache(maxsize=16)
def _decoupled_program(hidden: tuple[int, ...], num_classes: int, dropout: float, init: str,
                       sizes: tuple[int, int, int], lr: float, weight_decay: float,
                       epochs: int, select: str, batching: str) -> Callable:
    """The compiled batch of MLP trainings, cached: cells of one table share it."""
    module = MLP(hidden, num_classes, dropout, init)

    def train_one(k, x, tr, va, te, labels):
        init_fn, apply_fn = flax_fns(module, x)
        metrics, _ = train_node_classifier(k, init_fn, apply_fn, x, labels, tr, va, te,
                                           lr=lr, weight_decay=weight_decay, epochs=epochs,
                                           select=select, row_wise_sizes=sizes)
        return metrics

    return _batch_program(train_one, batching)


def decoupled_runs(
    key: jax.Array, x: jax.Array, labels: jax.Array, masks: tuple, *, num_runs: int,
    hidden: tuple[int, ...], dropout: float, lr: float, weight_decay: float, epochs: int,
    select: str, init: str = "default", per_run: tuple[str, ...] = (),
    batching: str = "auto",
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` MLPs on fixed (diffused) features as one compiled batch.

    The MLP is row-wise, so each epoch runs it on the labelled rows only (see
    ``train_node_classifier``'s ``row_wise_sizes``). The compiled program is cached by
    shapes and hyper-parameters, so the cells of a table with equal shapes compile once.

    Args:
      key: PRNG key; run ``i`` uses ``split(key, num_runs)[i]``.
      x: ``[n, d]`` (or ``[R, n, d]`` if ``"x"`` in ``per_run``) model input.
      labels: ``[n]``.
      masks: ``(train, val, test)``, each ``[n]`` or ``[R, n]`` (``"masks"`` in ``per_run``).
      per_run: which of ``"x"``, ``"masks"`` carry a leading run axis.
      batching: ``"vmap"``, ``"map"`` or ``"auto"`` (see ``_batch_program``).

    Returns:
      ``{"val_acc", "test_acc", "val_loss", "best_epoch"}``, each ``[R]``.
    """
    num_nodes = x.shape[-2]
    sizes = tuple(int(np.asarray(m).reshape(-1, num_nodes).sum(-1).max()) for m in masks)
    program = _decoupled_program(tuple(hidden), int(jnp.max(labels)) + 1, float(dropout),
                                 init, sizes, float(lr), float(weight_decay), int(epochs),
                                 select, batching)
    batched, common = _split_args(x, labels, masks, per_run)
    return program(jax.random.split(key, num_runs), batched, common)


def graph_model_runs(
    key: jax.Array, module, graph: jraph.GraphsTuple, x: jax.Array, labels: jax.Array,
    masks: tuple, *, num_runs: int, lr: float, weight_decay: float, epochs: int,
    select: str, per_run: tuple[str, ...] = (),
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` GCN/APPNP-style models (``module(x, propagate_fn, train=)``)."""
    num_nodes = x.shape[-2]
    a_hat = gcn_normalize(graph, num_nodes)
    propagate_fn = make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, num_nodes)

    def train_one(k, xi, tr, va, te, labels):
        init_fn, apply_fn = flax_fns(module, xi, propagate_fn=propagate_fn)
        metrics, _ = train_node_classifier(k, init_fn, apply_fn, xi, labels, tr, va, te,
                                           lr=lr, weight_decay=weight_decay, epochs=epochs,
                                           select=select)
        return metrics

    batched, common = _split_args(x, labels, masks, per_run)
    return _batch_program(train_one, "auto")(jax.random.split(key, num_runs), batched, common)


