"""Full-batch GCN training with patience, as Mujkanovic et al.'s ``gb`` ``fit`` does.

One run: Adam with L2 weight decay (``torch.optim.Adam(weight_decay=...)``), at most
``max_epochs`` epochs, stopped ``patience`` epochs after the last improvement of the
validation loss, returning the parameters of the best validation loss. As in ``gb``, each
epoch runs the model ONCE in training mode (dropout on): that forward pass gives both the
training loss (whose gradient takes the step) and the validation loss used for selection,
and the selected parameters are those that produced it (before the step). The loop is a
``lax.while_loop``: it costs the epochs it runs, not ``max_epochs``.

Used by the ``gadc_adaptive`` experiment for the models of GADC's Table 2 (the reference
scripts train with ``gb``'s defaults: 3000 epochs, patience 50).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxlab.graph.aux_attack import GCNParams, gcn_logits, init_gcn
from jaxlab.graph.losses import masked_cross_entropy


def fit_gcn(
    key: jax.Array,
    adj: jax.Array,
    x: jax.Array,
    labels: jax.Array,
    train_mask: jax.Array,
    val_mask: jax.Array,
    *,
    hidden: int,
    num_classes: int,
    activation: str = "none",
    dropout_rate: float = 0.5,
    lr: float = 1e-2,
    weight_decay: float = 5e-4,
    max_epochs: int = 3000,
    patience: int = 50,
) -> tuple[GCNParams, jax.Array]:
    """Trains :func:`jaxlab.graph.aux_attack.gcn_logits` on a dense ``[n, n]`` graph.

    Args:
      key: PRNG key (initialization and dropout).
      adj: ``[n, n]`` dense adjacency the model propagates over (0/1, or GADC's ``T``).
      x: ``[n, d]`` features.
      labels: ``[n]`` integer labels.
      train_mask, val_mask: ``[n]`` boolean masks.
      hidden, num_classes: layer widths.
      activation: ``"none"`` (the GADC adaptive scripts) or ``"relu"``.
      dropout_rate: hidden-layer dropout.
      lr, weight_decay: Adam step size and L2 coefficient.
      max_epochs, patience: stopping rule (``gb``: stop when the validation loss has not
        improved for ``patience`` epochs).

    Returns:
      ``(params, epochs_run)``: the parameters of the lowest validation loss.

    Example:
      >>> from jaxlab.train.early_stopping import fit_gcn
      >>> adj = jnp.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0],
      ...                  [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
      >>> x, y = jnp.eye(4), jnp.array([0, 0, 1, 1])
      >>> train, val = jnp.array([1, 0, 1, 0], bool), jnp.array([0, 1, 0, 1], bool)
      >>> params, epochs = fit_gcn(jax.random.key(0), adj, x, y, train, val, hidden=4,
      ...                          num_classes=2, max_epochs=30, patience=5)
      >>> params.w0.shape, 0 < int(epochs) <= 30
      ((4, 4), True)
    """
    if max_epochs < 1 or patience < 1:
        raise ValueError(f"max_epochs and patience must be >= 1, got {max_epochs}, {patience}")
    init_key, dropout_key = jax.random.split(key)
    params = init_gcn(init_key, x.shape[1], hidden, num_classes)
    tx = optax.chain(optax.add_decayed_weights(weight_decay), optax.adam(lr))

    def losses(p, rng):
        logits = gcn_logits(p, adj, x, activation=activation, dropout_rate=dropout_rate,
                            key=rng)
        return (masked_cross_entropy(logits, labels, train_mask),
                masked_cross_entropy(logits, labels, val_mask))

    def cond(c):
        epoch, _, _, _, best_loss, best_epoch = c
        del best_loss
        return (epoch < max_epochs) & (epoch < best_epoch + patience + 1)

    def body(c):
        epoch, p, opt_state, best_p, best_loss, best_epoch = c
        (_, val_loss), grads = jax.value_and_grad(losses, has_aux=True)(
            p, jax.random.fold_in(dropout_key, epoch))
        improved = val_loss < best_loss
        best_p = jax.tree.map(lambda new, old: jnp.where(improved, new, old), p, best_p)
        best_loss = jnp.where(improved, val_loss, best_loss)
        best_epoch = jnp.where(improved, epoch, best_epoch)
        updates, opt_state = tx.update(grads, opt_state, p)
        return epoch + 1, optax.apply_updates(p, updates), opt_state, best_p, best_loss, best_epoch

    init = (jnp.array(0), params, tx.init(params), params, jnp.array(jnp.inf),
            jnp.array(0))
    epochs, _, _, best_p, _, _ = jax.lax.while_loop(cond, body, init)
    return best_p, epochs
