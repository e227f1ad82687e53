"""One node-classification training loop for every model, written to be ``vmap``-ed.

``train_node_classifier`` trains one model with Adam (L2 weight decay added to the
gradient, as ``torch.optim.Adam(weight_decay=...)``), full batch, and keeps the test
accuracy at the epoch of the best validation loss (or accuracy). It is a pure function of
a PRNG key and arrays, so ``jax.vmap`` over keys (and masks, features) trains a batch of
runs as one program — the reason the 10-run tables are cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp
import optax

InitFn = Callable[[jax.Array], Any]
ApplyFn = Callable[..., jax.Array]


def masked_cross_entropy(logits: jax.Array, labels: jax.Array, mask: jax.Array) -> jax.Array:
    """Mean softmax cross-entropy over the nodes where ``mask`` is true."""
    losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    mask = mask.astype(logits.dtype)
    return jnp.sum(losses * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def masked_accuracy(logits: jax.Array, labels: jax.Array, mask: jax.Array) -> jax.Array:
    """Accuracy over the nodes where ``mask`` is true."""
    correct = (jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32)
    mask = mask.astype(jnp.float32)
    return jnp.sum(correct * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def _rows(mask: jax.Array, size: int) -> tuple[jax.Array, jax.Array]:
    """``size`` node indices where ``mask`` is true (padded with node 0) and their validity."""
    idx = jnp.nonzero(mask, size=size, fill_value=0)[0]
    return idx, jnp.arange(size) < jnp.sum(mask)


def train_node_classifier(
    key: jax.Array,
    init_fn: InitFn,
    apply_fn: ApplyFn,
    x: jax.Array,
    labels: jax.Array,
    train_mask: jax.Array,
    val_mask: jax.Array,
    test_mask: jax.Array,
    *,
    lr: float,
    weight_decay: float,
    epochs: int,
    select: Literal["val_loss", "val_acc"] = "val_loss",
    row_wise_sizes: tuple[int, int, int] | None = None,
) -> tuple[dict[str, jax.Array], Any]:
    """Trains one model full-batch; returns metrics at the best validation epoch.

    Each epoch takes one Adam step on the training nodes (dropout on), then evaluates
    (dropout off); the epoch with the lowest validation loss (``select="val_loss"``, first
    one on ties) or the highest validation accuracy (``"val_acc"``) gives the reported
    numbers and parameters. Test labels are only read for the reported accuracy, computed
    once with the selected parameters.

    A model that maps each node's row on its own (an MLP on fixed, pre-diffused features)
    needs only the rows its losses read: with ``row_wise_sizes`` each epoch runs the model
    on the training rows and then on the validation rows alone — the same computation as
    running it on all ``n`` rows (identical numbers without dropout; with dropout the masks
    are drawn for those rows only, so the draws differ), at a fraction of the cost when the
    labelled sets are small (10 % + 10 % of the nodes in the Pro-GNN splits: ≈ 10× fewer
    FLOPs and random bits).

    Args:
      key: PRNG key of this run (initialisation and dropout).
      init_fn: ``key -> params``.
      apply_fn: ``apply_fn(params, x, train=bool, rng=key_or_None) -> [n, c]`` logits.
      x: ``[n, d]`` model input.
      labels: ``[n]`` integer labels.
      train_mask, val_mask, test_mask: ``[n]`` boolean masks.
      lr: Adam learning rate.
      weight_decay: L2 coefficient added to the gradient.
      epochs: number of full-batch steps.
      select: model-selection criterion.
      row_wise_sizes: static upper bounds on the number of train / validation / test
        nodes, for a row-wise ``apply_fn`` only (``None``: evaluate on all rows).

    Returns:
      ``({"val_acc", "test_acc", "val_loss", "best_epoch"}, best_params)``.
    """
    if select not in ("val_loss", "val_acc"):
        raise ValueError(f"select must be 'val_loss' or 'val_acc', got {select!r}")
    if row_wise_sizes is None:
        every = jnp.arange(x.shape[0])
        rows = {name: (every, mask) for name, mask in
                (("train", train_mask), ("val", val_mask), ("test", test_mask))}
    else:
        rows = {name: _rows(mask, size) for name, mask, size in
                zip(("train", "val", "test"), (train_mask, val_mask, test_mask),
                    row_wise_sizes, strict=True)}
    # (inputs, labels, weights) of each set: all rows with the mask as weights, or only
    # the set's own rows (row-wise models).
    sets = {name: (x if row_wise_sizes is None else x[idx], labels[idx], valid)
            for name, (idx, valid) in rows.items()}
    init_key, dropout_key = jax.random.split(key)
    params = init_fn(init_key)
    tx = optax.chain(optax.add_decayed_weights(weight_decay), optax.adam(lr))
    opt_state = tx.init(params)

    def loss_fn(p, rng):
        inputs, targets, valid = sets["train"]
        return masked_cross_entropy(apply_fn(p, inputs, train=True, rng=rng), targets, valid)

    def epoch(carry, step):
        params, opt_state, best = carry
        grads = jax.grad(loss_fn)(params, jax.random.fold_in(dropout_key, step))
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        inputs, targets, valid = sets["val"]
        logits = apply_fn(params, inputs, train=False, rng=None)
        val_loss = masked_cross_entropy(logits, targets, valid)
        val_acc = masked_accuracy(logits, targets, valid)
        improved = val_loss < best["val_loss"] if select == "val_loss" else (
            val_acc > best["val_acc"])
        now = {"val_loss": val_loss, "val_acc": val_acc,
               "best_epoch": step.astype(jnp.int32), "params": params}
        best = jax.tree.map(lambda new, old: jnp.where(improved, new, old), now, best)
        return (params, opt_state, best), val_loss

    best = {"val_loss": jnp.array(jnp.inf), "val_acc": jnp.array(0.0),
            "best_epoch": jnp.array(-1, jnp.int32), "params": params}
    (_, _, best), _ = jax.lax.scan(epoch, (params, opt_state, best), jnp.arange(epochs))
    best_params = best.pop("params")
    inputs, targets, valid = sets["test"]
    best["test_acc"] = masked_accuracy(apply_fn(best_params, inputs, train=False, rng=None),
                                       targets, valid)
    return best, best_params


def flax_fns(module, x_example: jax.Array, **call_kwargs) -> tuple[InitFn, ApplyFn]:
    """``(init_fn, apply_fn)`` for a flax module called as ``module(x, **kw, train=...)``."""

    def init_fn(key):
        return module.init(key, x_example, train=False, **call_kwargs)

    def apply_fn(params, x, *, train, rng):
        rngs = {"dropout": rng} if train else {}
        return module.apply(params, x, train=train, rngs=rngs, **call_kwargs)

    return init_fn, apply_fn
