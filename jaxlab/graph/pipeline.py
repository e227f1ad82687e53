"""Batched node-classification runs shared by the GADC experiments and benchmarks.

``decoupled_runs`` trains ``num_runs`` MLP/linear heads on pre-diffused features as one
``vmap``-ed program; ``graph_model_runs`` does the same for GCN/APPNP, which propagate in
every forward pass. Both accept per-run masks and features (leading run axis) or shared
ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jraph
import numpy as np

from jaxlab.graph.diffusion import gcn_normalize
from jaxlab.graph.graphs import propagate
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


def _runs(train_one: Callable, key: jax.Array, num_runs: int, per_run: dict[str, Any],
          shared: dict[str, Any], batching: str = "auto"):
    """Runs ``train_one`` for ``num_runs`` keys as ONE compiled program.

    ``batching="vmap"`` trains the runs side by side (accelerators); ``"map"`` loops over
    them inside the program with ``lax.map`` (CPU, where XLA's batched matmuls with a
    broadcast input ran 2.5× slower than the per-run 2-D matmuls); ``"auto"`` picks by
    backend.
    """
    if batching == "auto":
        batching = "map" if jax.default_backend() == "cpu" else "vmap"
    if batching not in ("vmap", "map"):
        raise ValueError(f"batching must be 'auto', 'vmap' or 'map', got {batching!r}")
    keys = jax.random.split(key, num_runs)
    args = {**shared, **per_run}
    names = ("x", "train", "val", "test")

    def one(k, batched):
        full = {n: batched[n] if n in per_run else args[n] for n in names}
        return train_one(k, *(full[n] for n in names))

    batched = {n: args[n] for n in names if n in per_run}
    if batching == "vmap":
        fn = jax.vmap(one)
    else:
        fn = lambda ks, b: jax.lax.map(lambda kb: one(*kb), (ks, b))
    return jax.jit(fn)(keys, batched)


def decoupled_runs(
    key: jax.Array, x: jax.Array, labels: jax.Array, masks: tuple, *, num_runs: int,
    hidden: tuple[int, ...], dropout: float, lr: float, weight_decay: float, epochs: int,
    select: str, init: str = "default", per_run: tuple[str, ...] = (),
    batching: str = "auto",
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` MLPs on fixed (diffused) features as one ``vmap``-ed batch.

    Args:
      key: PRNG key; run ``i`` uses ``split(key, num_runs)[i]``.
      x: ``[n, d]`` (or ``[R, n, d]`` if ``"x"`` in ``per_run``) model input.
      labels: ``[n]``.
      masks: ``(train, val, test)``, each ``[n]`` or ``[R, n]`` (``"masks"`` in ``per_run``).
      per_run: which of ``"x"``, ``"masks"`` carry a leading run axis.
      batching: ``"vmap"``, ``"map"`` or ``"auto"`` (see ``_runs``).

    Returns:
      ``{"val_acc", "test_acc", "val_loss", "best_epoch"}``, each ``[R]``.
    """
    num_classes = int(jnp.max(labels)) + 1
    module = MLP(hidden, num_classes, dropout, init)
    x_example = x[0] if "x" in per_run else x

    def train_one(k, xi, tr, va, te):
        init_fn, apply_fn = flax_fns(module, x_example)
        metrics, _ = train_node_classifier(k, init_fn, apply_fn, xi, labels, tr, va, te,
                                           lr=lr, weight_decay=weight_decay, epochs=epochs,
                                           select=select)
        return metrics

    return _runs(train_one, key, num_runs, _per_run(x, masks, per_run),
                 {"x": x, "train": masks[0], "val": masks[1], "test": masks[2]}, batching)


def _per_run(x, masks, per_run):
    out = {}
    if "x" in per_run:
        out["x"] = x
    if "masks" in per_run:
        out.update(train=masks[0], val=masks[1], test=masks[2])
    return out


def graph_model_runs(
    key: jax.Array, module, graph: jraph.GraphsTuple, x: jax.Array, labels: jax.Array,
    masks: tuple, *, num_runs: int, lr: float, weight_decay: float, epochs: int,
    select: str, per_run: tuple[str, ...] = (),
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` GCN/APPNP-style models (``module(x, propagate_fn, train=)``)."""
    x_example = x[0] if "x" in per_run else x
    a_hat = gcn_normalize(graph, x_example.shape[0])
    propagate_fn = lambda v: propagate(a_hat.senders, a_hat.receivers, a_hat.edges, v)

    def train_one(k, xi, tr, va, te):
        init_fn, apply_fn = flax_fns(module, x_example, propagate_fn=propagate_fn)
        metrics, _ = train_node_classifier(k, init_fn, apply_fn, xi, labels, tr, va, te,
                                           lr=lr, weight_decay=weight_decay, epochs=epochs,
                                           select=select)
        return metrics

    return _runs(train_one, key, num_runs, _per_run(x, masks, per_run),
                 {"x": x, "train": masks[0], "val": masks[1], "test": masks[2]})
