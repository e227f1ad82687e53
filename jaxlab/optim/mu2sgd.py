r"""μ²-SGD: STORM corrected momentum + AnyTime averaging, as optax-style transformations.

μ²-SGD (Levy 2023; used for Byzantine robustness by Dahan & Levy 2024) keeps three points:
the SGD iterate :math:`w_t`, the query point :math:`x_t` (a weighted average of the iterates,
where gradients are taken — these are the model ``params``) and the STORM estimate
:math:`d_t`. One step with minibatch :math:`z_t`:

.. math::
   d_t = \nabla f(x_t; z_t) + (1 - \beta_t)\big(d_{t-1} - \nabla f(x_{t-1}; z_t)\big)
   \quad (d_1 = \nabla f(x_1; z_1),\ \beta_t = \max(1/t, \beta_{\min}))

   w_{t+1} = w_t - \eta\, [\alpha_t]\, \hat g_t, \qquad \hat g_t = d_t
   \text{ (or a robust aggregate of the workers' } d_t\text{)}

   x_{t+1} = (1 - \gamma_t) x_t + \gamma_t w_{t+1}, \qquad
   \gamma_t = \max\Big(\frac{\alpha_{t+1}}{\alpha_{1:t+1}}, \gamma_{\min}\Big) = \max\Big(
   \frac{2}{t + 2}, \gamma_{\min}\Big)

with :math:`\alpha_t = t`. STORM needs the gradient of the *same* minibatch at the new and
the previous query point: the train step evaluates both inside one jitted function (at
``params`` and at ``state.prev_query``) and passes the second as the extra argument
``grads_at_prev``.

**Which w-update.** The paper's algorithm scales the step by :math:`\alpha_t`
(``w_{t+1} = w_t − η α_t ĝ_t``, with a correspondingly small η); the reference code omits
:math:`\alpha_t` and uses a constant η = 0.1. Both are available through ``scale_by_alpha``;
the default ``False`` is the reference's practical variant, and it is what the experiments
run. The reference also floors γ_t at 0.01 and β_t at 0.01 (after rounding to 3 decimals;
we do not round).

The pieces are exported separately because in distributed training the STORM estimate is
computed per worker and aggregated before the server's AnyTime step: :func:`storm` (worker
side) and :func:`anytime_averaging` (server side); :func:`mu2sgd` chains them for one
machine.

References:
  Levy. "μ²-SGD: stable stochastic optimization via a double momentum mechanism", 2023.
  Dahan, Levy. "Fault tolerant ML: efficient meta-aggregation and synchronous training",
  ICML 2024 (Algorithm 2). Cutkosky, Orabona. "Momentum-based variance reduction in
  non-convex SGD" (STORM), NeurIPS 2019.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxlab._checks import check_range

Params = Any


class StormState(NamedTuple):
    """State of :func:`storm`: the number of estimates made and the running estimate d_t."""

    count: jax.Array  # type: ignore[assignment]  # shadows tuple.count, as optax states do
    estimate: Params


class AnyTimeState(NamedTuple):
    """State of :func:`anytime_averaging`: the step count t and the SGD iterate w_t."""

    count: jax.Array  # type: ignore[assignment]  # shadows tuple.count, as optax states do
    iterate: Params


class Mu2SGDState(NamedTuple):
    """State of :func:`mu2sgd`: STORM and AnyTime states and the previous query point."""

    storm: StormState
    anytime: AnyTimeState
    prev_query: Params


def _check_learning_rate(learning_rate: optax.ScalarOrSchedule) -> None:
    """A schedule (callable) passes; a number must be > 0 (when concrete)."""
    if not callable(learning_rate):
        check_range("learning_rate", learning_rate, 0.0, low_open=True)


def _check_floor(value: float, name: str) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)


def storm(beta_floor: float = 0.01) -> optax.GradientTransformationExtraArgs:
    r"""STORM corrected momentum with :math:`\beta_t = \max(1/t, \beta_{\min})`.

    .. math::
       d_t = \nabla f(x_t; z_t) + (1 - \beta_t)\big(d_{t-1} - \nabla f(x_{t-1}; z_t)\big)

    ``update(grads, state, params=None, *, grads_at_prev)`` returns :math:`d_t` as the
    "updates". ``grads`` is :math:`\nabla f(x_t; z_t)`, ``grads_at_prev`` is
    :math:`\nabla f(x_{t-1}; z_t)` (same minibatch, previous query point; ignored at t = 1).

    Args:
      beta_floor: :math:`\beta_{\min}` in [0, 1] (reference: 0.01).

    Returns:
      An ``optax.GradientTransformationExtraArgs``.

    Example:
      >>> opt = storm()
      >>> state = opt.init({"w": jnp.zeros(2)})
      >>> d, state = opt.update({"w": jnp.ones(2)}, state, grads_at_prev={"w": jnp.ones(2)})

    References:
      Cutkosky, Orabona, NeurIPS 2019.
    """
    beta_floor = _check_floor(beta_floor, "beta_floor")

    def init_fn(params: Params) -> StormState:
        return StormState(jnp.zeros([], jnp.int32), jax.tree_util.tree_map(jnp.zeros_like, params))

    def update_fn(grads, state, params=None, *, grads_at_prev=None, **extra_args):
        del params, extra_args
        if grads_at_prev is None:
            raise ValueError("storm.update needs grads_at_prev (the gradient at x_{t-1})")
        t = state.count + 1
        beta = jnp.maximum(1.0 / t, beta_floor)
        first = state.count == 0

        def leaf(g, g_prev, d):
            corrected = g + (1.0 - beta).astype(g.dtype) * (d - g_prev)  # STORM, Eq. (d_t)
            return jnp.where(first, g, corrected)  # d_1 = ∇f(x_1; z_1)

        estimate = jax.tree_util.tree_map(leaf, grads, grads_at_prev, state.estimate)
        return estimate, StormState(t, estimate)

    return optax.GradientTransformationExtraArgs(init_fn, update_fn)


def anytime_averaging(
    learning_rate: optax.ScalarOrSchedule,
    scale_by_alpha: bool = False,
    gamma_floor: float = 0.0,
) -> optax.GradientTransformation:
    r"""AnyTime-SGD server step: SGD on the iterate w, the params are the averaged query x.

    .. math::
       w_{t+1} = w_t - \eta\,[\alpha_t]\,\hat g_t, \qquad
       x_{t+1} = (1 - \gamma_t) x_t + \gamma_t w_{t+1}, \qquad
       \gamma_t = \max(2 / (t + 2), \gamma_{\min}), \quad \alpha_t = t

    The returned updates are :math:`x_{t+1} - x_t`, so ``optax.apply_updates(params,
    updates)`` gives the new query point. ``w_1 = x_1`` (the initial params).

    Args:
      learning_rate: η, a float or an optax schedule of the step count (0-based).
      scale_by_alpha: if True, the paper's step :math:`\eta \alpha_t`; if False (reference
        code), :math:`\eta`.
      gamma_floor: :math:`\gamma_{\min}` in [0, 1] (reference: 0.01; 0 = exact averaging).

    Returns:
      An ``optax.GradientTransformation`` whose ``update`` requires ``params`` (= x_t).

    Example:
      >>> opt = anytime_averaging(0.1)
      >>> params = jnp.zeros(2)
      >>> state = opt.init(params)
      >>> updates, state = opt.update(jnp.ones(2), state, params)

    References:
      Cutkosky, "Anytime online-to-batch, optimism and acceleration", ICML 2019.
      Dahan & Levy, ICML 2024.
    """
    _check_learning_rate(learning_rate)
    gamma_floor = _check_floor(gamma_floor, "gamma_floor")

    def init_fn(params: Params) -> AnyTimeState:
        return AnyTimeState(jnp.zeros([], jnp.int32), jax.tree_util.tree_map(jnp.asarray, params))

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError("anytime_averaging.update needs params (the query point x_t)")
        t = (state.count + 1).astype(jnp.float32)
        eta = learning_rate(state.count) if callable(learning_rate) else learning_rate
        step = eta * t if scale_by_alpha else eta * jnp.ones_like(t)  # η α_t or η
        gamma = jnp.maximum(2.0 / (t + 2.0), gamma_floor)  # γ_t = α_{t+1} / α_{1:t+1}
        iterate = jax.tree_util.tree_map(
            lambda w, g: w - step.astype(w.dtype) * g, state.iterate, updates
        )  # w_{t+1} = w_t − η α_t ĝ_t
        new_updates = jax.tree_util.tree_map(
            lambda x, w: gamma.astype(x.dtype) * (w - x), params, iterate
        )  # x_{t+1} − x_t = γ_t (w_{t+1} − x_t)
        return new_updates, AnyTimeState(state.count + 1, iterate)

    return optax.GradientTransformation(init_fn, update_fn)


def mu2sgd(
    learning_rate: optax.ScalarOrSchedule,
    *,
    beta_floor: float = 0.01,
    gamma_floor: float = 0.0,
    scale_by_alpha: bool = False,
    clip_global_norm: float | None = None,
) -> optax.GradientTransformationExtraArgs:
    r"""μ²-SGD on one machine: :func:`storm` → optional clipping → :func:`anytime_averaging`.

    The state carries the STORM estimate, the SGD iterate w and the previous query point;
    the params are the current query point. A train step computes the two gradients of the
    same minibatch in one jitted call::

      @jax.jit
      def train_step(params, state, batch):
          grads = jax.grad(loss)(params, batch)  # ∇f(x_t; z_t)
          grads_at_prev = jax.grad(loss)(state.prev_query, batch)  # ∇f(x_{t−1}; z_t)
          updates, state = opt.update(grads, state, params, grads_at_prev=grads_at_prev)
          return optax.apply_updates(params, updates), state

    Args:
      learning_rate: η.
      beta_floor: floor of the STORM weight β_t = 1/t.
      gamma_floor: floor of the averaging weight γ_t = 2/(t + 2).
      scale_by_alpha: use the paper's step η α_t (True) or the reference's η (False).
      clip_global_norm: if set, clip the estimate to this global norm before the step
        (reference: 2).

    Returns:
      An ``optax.GradientTransformationExtraArgs``; ``update`` needs ``params`` and the
      keyword ``grads_at_prev``.

    References:
      Levy 2023; Dahan & Levy, ICML 2024.
    """
    _check_learning_rate(learning_rate)
    if clip_global_norm is not None:
        check_range("clip_global_norm", clip_global_norm, 0.0, low_open=True)
    estimator = storm(beta_floor)
    server = anytime_averaging(learning_rate, scale_by_alpha, gamma_floor)
    clip = (
        optax.clip_by_global_norm(clip_global_norm)
        if clip_global_norm is not None
        else optax.identity()
    )

    def init_fn(params: Params) -> Mu2SGDState:
        return Mu2SGDState(
            estimator.init(params),
            server.init(params),
            jax.tree_util.tree_map(jnp.asarray, params),
        )

    def update_fn(grads, state, params=None, *, grads_at_prev=None, **extra_args):
        del extra_args
        if params is None:
            raise ValueError("mu2sgd.update needs params (the query point x_t)")
        estimate, storm_state = estimator.update(grads, state.storm, grads_at_prev=grads_at_prev)
        estimate, _ = clip.update(estimate, clip.init(params))
        updates, anytime_state = server.update(estimate, state.anytime, params)
        return updates, Mu2SGDState(storm_state, anytime_state, params)

    return optax.GradientTransformationExtraArgs(init_fn, update_fn)
