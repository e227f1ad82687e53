"""Worker momentum: the baseline gradient estimator of Byzantine-robust SGD."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

Params = Any


class WorkerMomentumState(NamedTuple):
    """State of :func:`worker_momentum`: the step count and the momentum m_t."""

    count: jax.Array  # type: ignore[assignment]  # shadows tuple.count, as optax states do
    momentum: Params


def worker_momentum(beta: float = 0.9) -> optax.GradientTransformationExtraArgs:
    r"""Exponential moving average of a worker's gradients (Karimireddy et al. 2021).

    .. math:: m_1 = g_1, \qquad m_t = \beta m_{t-1} + (1 - \beta) g_t

    ``update`` returns :math:`m_t`; each worker sends it to the server, which aggregates and
    takes a plain SGD step. Extra keyword arguments (e.g. ``grads_at_prev``) are ignored, so
    it is a drop-in alternative to :func:`jaxlab.optim.storm`.

    Args:
      beta: β in [0, 1).

    Returns:
      An ``optax.GradientTransformationExtraArgs``.

    Example:
      >>> opt = worker_momentum(0.9)
      >>> state = opt.init(jnp.zeros(2))
      >>> m, state = opt.update(jnp.ones(2), state)

    References:
      Karimireddy, He, Jaggi. "Learning from history for Byzantine robust optimization",
      ICML 2021. Farhadkhani et al. "Byzantine machine learning made easy by resilient
      averaging of momentums", ICML 2022.
    """
    if not 0.0 <= beta < 1.0:
        raise ValueError(f"beta must be in [0, 1), got {beta}")

    def init_fn(params: Params) -> WorkerMomentumState:
        return WorkerMomentumState(
            jnp.zeros([], jnp.int32), jax.tree_util.tree_map(jnp.zeros_like, params)
        )

    def update_fn(grads, state, params=None, **extra_args):
        del params, extra_args
        first = state.count == 0
        momentum = jax.tree_util.tree_map(
            lambda g, m: jnp.where(first, g, beta * m + (1.0 - beta) * g), grads, state.momentum
        )
        return momentum, WorkerMomentumState(state.count + 1, momentum)

    return optax.GradientTransformationExtraArgs(init_fn, update_fn)
