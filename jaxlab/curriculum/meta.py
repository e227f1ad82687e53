"""The look-ahead step shared by the meta-gradient curricula (LRE, MW-Net, DDS).

Each of them asks: if the model took one SGD step on the training batch weighted by
``w``, how would the loss on a clean meta batch change? In PyTorch the reference copies
the model and re-binds its parameters; here the look-ahead is a function of the
weighting and ``jax.grad`` differentiates through the inner update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_range

LossFn = Callable[[Any, jax.Array, jax.Array], jax.Array]


def check_meta(
    loss_fn: LossFn, lr: float, labels: ArrayLike, **per_sample: ArrayLike | None
) -> None:
    """The meta-gradient kernels' shared checks: a callable ``loss_fn``, ``lr ≥ 0`` (when
    concrete; 0 is a look-ahead that does not move) and per-sample arrays (``weights``,
    ``valid``) of the batch's length."""
    if not callable(loss_fn):
        raise ValueError(
            f"loss_fn must be callable (params, inputs, labels) -> [b], got "
            f"{type(loss_fn).__name__}"
        )
    check_range("lr", lr, 0.0)
    b = jnp.shape(labels)[:1]
    for name, value in per_sample.items():
        if value is not None and jnp.shape(value) != b:
            raise ValueError(
                f"{name} must be [{b[0] if b else '?'}] like labels, got shape {jnp.shape(value)}"
            )


def lookahead_params(
    params: Any,
    loss_fn: LossFn,
    inputs: ArrayLike,
    labels: ArrayLike,
    weights: ArrayLike,
    lr: float,
) -> Any:
    """One SGD step on the weighted training loss: ``θ' = θ − α ∇_θ Σ_i w_i ℓ_i(θ)``.

    Args:
      params: the model parameters ``θ`` (pytree).
      loss_fn: ``(params, inputs, labels) -> [b]`` per-sample losses ``ℓ_i``.
      inputs, labels: the training batch.
      weights: ``[b]`` per-sample weights ``w`` (differentiable).
      lr: the step size ``α``.

    Returns:
      ``θ'``, a pytree like ``params``.

    Example:
      >>> from jaxlab.curriculum.meta import lookahead_params
      >>> f = lambda p, x, y: (p * x - y) ** 2
      >>> round(float(lookahead_params(1.0, f, jnp.ones(2), jnp.zeros(2), jnp.ones(2), 0.1)), 4)
      0.6
    """
    check_meta(loss_fn, lr, labels, weights=weights)
    inputs, labels = jnp.asarray(inputs), jnp.asarray(labels)
    grads = jax.grad(lambda p: jnp.sum(weights * loss_fn(p, inputs, labels)))(params)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def lookahead_meta_loss(
    weights: ArrayLike,
    params: Any,
    loss_fn: LossFn,
    inputs: ArrayLike,
    labels: ArrayLike,
    meta_inputs: ArrayLike,
    meta_labels: ArrayLike,
    lr: float,
) -> jax.Array:
    """Mean meta-batch loss after the look-ahead step: ``mean_j ℓ^meta_j(θ'(w))``.

    Its gradient with respect to ``weights`` at ``w = 0`` is LRE's signal (Ren et al.,
    Eq. (4)-(6)); composed with a weighting network it is MW-Net's meta-objective.

    Example:
      >>> from jaxlab.curriculum.meta import lookahead_meta_loss
      >>> f = lambda p, x, y: (p * x - y) ** 2
      >>> g = jax.grad(lookahead_meta_loss)(jnp.zeros(2), 1.0, f, jnp.ones(2),
      ...                                   jnp.zeros(2), jnp.ones(1), jnp.zeros(1), 0.1)
      >>> g.shape
      (2,)
    """
    check_meta(loss_fn, lr, labels, weights=weights)
    new = lookahead_params(params, loss_fn, inputs, labels, weights, lr)
    return jnp.mean(loss_fn(new, jnp.asarray(meta_inputs), jnp.asarray(meta_labels)))
