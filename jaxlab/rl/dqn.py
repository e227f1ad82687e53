"""DQN building blocks: a Q-network, ε-greedy actions, the (double) DQN loss and one update.

Built from rlax (``double_q_learning`` / ``q_learning`` for the TD error, ``huber_loss``),
distrax (``EpsilonGreedy``, which supersedes ``rlax.epsilon_greedy``) and optax (the optimiser,
``incremental_update`` for the target network, ``linear_schedule`` for ε); only the glue is
written here. The acting/learning loop lives in the paper trainers (``jaxlab.trainers.rl``).

The learning target of a transition ``(s, a, r, γ_t, s')`` with ``γ_t = γ (1 − terminal)`` is

    DQN (Mnih et al. 2015):          y = r + γ_t max_a' Q(s', a'; θ⁻)
    double DQN (van Hasselt 2016):   y = r + γ_t Q(s', argmax_a' Q(s', a'; θ); θ⁻)

with online parameters ``θ`` and target parameters ``θ⁻``; the loss is the Huber loss of the
TD error ``y − Q(s, a; θ)`` averaged over the batch, with no gradient through ``y``.
Truncated (time-limit) episodes are not terminal: they keep ``γ_t = γ`` and bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from flax.training.train_state import TrainState
from jax.typing import ArrayLike

from jaxlab._checks import check_callable, check_integer, check_key, check_type, check_widths
from jaxlab._optional import lazy_import

if TYPE_CHECKING:
    import distrax
else:
    distrax = lazy_import("distrax", extra="rl")
rlax = lazy_import("rlax", extra="rl")

__all__ = [
    "DQNBatch",
    "DQNState",
    "QNetwork",
    "dqn_loss",
    "dqn_update",
    "epsilon_greedy",
    "epsilon_schedule",
    "target_update",
]


def _concrete(x: Any) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _check_unit(name: str, value: Any) -> None:
    """``ValueError`` naming ``name`` when a concrete ``value`` leaves ``[0, 1]``."""
    if _concrete(value):
        v = np.asarray(value, dtype=np.float64)
        if not np.all((v >= 0.0) & (v <= 1.0)):
            raise ValueError(f"{name} must be in [0, 1], got {value}")


class QNetwork(nn.Module):
    """MLP Q-network: ``obs [..., d] -> Q(s, ·) [..., num_actions]`` (ReLU hidden layers)."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)

    def __post_init__(self) -> None:
        check_integer("num_actions", self.num_actions, low=1)
        check_widths("hidden", self.hidden)
        super().__post_init__()

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        x = obs
        for h in self.hidden:
            x = nn.relu(nn.Dense(h)(x))
        return nn.Dense(self.num_actions)(x)


class DQNBatch(NamedTuple):
    """Transitions ``(s, a, r, terminal, s')``, leading axis ``[B]``.

    ``obs, next_obs: [B, d]``; ``actions: [B]`` int; ``rewards: [B]``; ``terminals: [B]``
    (1 where ``s'`` is terminal — not where the episode was only truncated).
    """

    obs: jax.Array
    actions: jax.Array
    rewards: jax.Array
    terminals: jax.Array
    next_obs: jax.Array


class DQNState(TrainState):
    """A flax ``TrainState`` (online ``params``, optax ``tx``) plus ``target_params`` θ⁻."""

    target_params: Any = struct.field(pytree_node=True, default=None)


def epsilon_greedy(
    q_values: ArrayLike, key: ArrayLike, epsilon: ArrayLike
) -> tuple[jax.Array, distrax.EpsilonGreedy]:
    """Sample ε-greedy actions: ``π(a|s) = ε/K + (1 − ε) 1[a = argmax Q(s, ·)]``.

    ``distrax.EpsilonGreedy`` (ties in the argmax share the greedy mass; rlax's
    ``epsilon_greedy`` is deprecated in its favour); the distribution is returned too, for
    probabilities and log-probabilities.

    Args:
      q_values: ``Q(s, ·): [..., K]``.
      key: PRNG key.
      epsilon: exploration rate in ``[0, 1]`` (scalar; may be traced, e.g. a schedule).

    Returns:
      ``(actions [...] int32, distrax.EpsilonGreedy with probs [..., K])``.

    Example:
      >>> from jaxlab.rl import epsilon_greedy
      >>> a, pi = epsilon_greedy(jnp.array([[0.0, 2.0, 1.0]]), jax.random.key(0), 0.0)
      >>> int(a[0]), [float(p) for p in pi.probs[0]]
      (1, [0.0, 1.0, 0.0])
    """
    q_values = jnp.asarray(q_values)
    if q_values.ndim < 1 or q_values.shape[-1] < 2:
        raise ValueError(f"q_values must be [..., K] with K >= 2, got {q_values.shape}")
    if jnp.ndim(epsilon) != 0:
        raise ValueError(f"epsilon must be a scalar, got shape {jnp.shape(epsilon)}")
    _check_unit("epsilon", epsilon)
    key = check_key("key", key)
    dist = distrax.EpsilonGreedy(q_values, epsilon, dtype=jnp.int32)
    return dist.sample(seed=key), dist


def epsilon_schedule(start: float = 1.0, end: float = 0.05, steps: int = 10_000) -> Callable:
    """``ε(t) = start + (end − start) · min(t / steps, 1)`` (``optax.linear_schedule``).

    Example:
      >>> from jaxlab.rl import epsilon_schedule
      >>> float(epsilon_schedule(1.0, 0.1, 10)(5))
      0.55
    """
    _check_unit("start", start)
    _check_unit("end", end)
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    return optax.linear_schedule(start, end, steps)


def _check_batch(batch: DQNBatch) -> None:
    obs, nxt = jnp.shape(batch.obs), jnp.shape(batch.next_obs)
    if len(obs) != 2 or nxt != obs:
        raise ValueError(f"batch.obs and batch.next_obs must both be [B, d], got {obs}, {nxt}")
    for name in ("actions", "rewards", "terminals"):
        shape = jnp.shape(getattr(batch, name))
        if shape != obs[:1]:
            raise ValueError(f"batch.{name} must be [B] = [{obs[0]}], got {shape}")
    if not jnp.issubdtype(jnp.asarray(batch.actions).dtype, jnp.integer):
        raise ValueError(f"batch.actions must be integers, got {jnp.asarray(batch.actions).dtype}")


def dqn_loss(
    params: Any,
    target_params: Any,
    apply_fn: Callable,
    batch: DQNBatch,
    *,
    discount: float = 0.99,
    double: bool = True,
    huber_delta: float = 1.0,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """(Double) DQN loss ``E_B[Huber(y − Q(s, a; θ))]`` (module docstring for ``y``).

    Args:
      params: online parameters ``θ``.
      target_params: target-network parameters ``θ⁻``.
      apply_fn: ``apply_fn(params, obs [B, d]) -> Q [B, K]``.
      batch: a :class:`DQNBatch` of ``B`` transitions.
      discount: ``γ`` in ``[0, 1]``; the per-transition ``γ_t = γ (1 − terminal)``.
      double: double DQN (``rlax.double_q_learning``: argmax by ``θ``, value by ``θ⁻``)
        or DQN (``rlax.q_learning``: max over ``Q(s', ·; θ⁻)``).
      huber_delta: the Huber loss's quadratic-to-linear threshold (``rlax.huber_loss``).

    Returns:
      ``(loss, metrics)`` with ``metrics`` ``td_abs`` (mean ``|y − Q|``) and ``q_mean``.

    Example:
      >>> from jaxlab.rl import DQNBatch, QNetwork, dqn_loss
      >>> net = QNetwork(num_actions=3, hidden=(8,))
      >>> p = net.init(jax.random.key(0), jnp.zeros((1, 2)))
      >>> b = DQNBatch(jnp.zeros((4, 2)), jnp.zeros(4, jnp.int32), jnp.ones(4), jnp.zeros(4),
      ...              jnp.ones((4, 2)))
      >>> loss, m = dqn_loss(p, p, net.apply, b)
      >>> loss.shape
      ()

    References:
      Mnih et al. Human-level control through deep reinforcement learning. Nature 2015.
      van Hasselt, Guez, Silver. Deep Reinforcement Learning with Double Q-learning. AAAI 2016.
    """
    check_callable("apply_fn", apply_fn)
    _check_batch(batch)
    _check_unit("discount", discount)
    if not huber_delta > 0:
        raise ValueError(f"huber_delta must be > 0, got {huber_delta}")
    q_tm1 = apply_fn(params, batch.obs)  # Q(s, ·; θ): [B, K]
    q_t_target = apply_fn(target_params, batch.next_obs)  # Q(s', ·; θ⁻): [B, K]
    # γ_t = γ (1 − terminal): no bootstrap past a terminal state.
    discount_t = discount * (1.0 - jnp.asarray(batch.terminals, q_tm1.dtype))
    rewards = jnp.asarray(batch.rewards, q_tm1.dtype)
    if double:
        q_t_selector = apply_fn(params, batch.next_obs)  # Q(s', ·; θ) picks a'
        # y = r + γ_t Q(s', argmax_a' Q(s', a'; θ); θ⁻)   (van Hasselt et al. 2016, Double DQN)
        td = jax.vmap(rlax.double_q_learning)(
            q_tm1, batch.actions, rewards, discount_t, q_t_target, q_t_selector
        )
    else:
        # y = r + γ_t max_a' Q(s', a'; θ⁻)   (Mnih et al. 2015, Eq. 2)
        td = jax.vmap(rlax.q_learning)(q_tm1, batch.actions, rewards, discount_t, q_t_target)
    loss = jnp.mean(rlax.huber_loss(td, huber_delta))
    return loss, {"td_abs": jnp.mean(jnp.abs(td)), "q_mean": jnp.mean(q_tm1)}


def target_update(
    params: Any, target_params: Any, step: ArrayLike, *, tau: float = 1.0, period: int = 1
) -> Any:
    """``θ⁻ ← τ θ + (1 − τ) θ⁻`` when ``step % period == 0``, else ``θ⁻`` unchanged.

    ``τ = 1`` is DQN's periodic hard copy (Mnih et al. 2015); ``period = 1`` with ``τ < 1`` is
    Polyak averaging. Uses ``optax.incremental_update``.
    """
    _check_unit("tau", tau)
    if jax.tree.structure(params) != jax.tree.structure(target_params):  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError("target_params must have the structure of params")
    if not jnp.issubdtype(jnp.asarray(step).dtype, jnp.integer):
        raise ValueError(f"step must be an integer step count, got {step!r}")
    if period < 1:
        raise ValueError(f"period must be >= 1, got {period}")
    mixed = optax.incremental_update(params, target_params, tau)
    do = jnp.asarray(step) % period == 0
    return jax.tree.map(lambda m, t: jnp.where(do, m, t), mixed, target_params)


def dqn_update(
    state: DQNState,
    batch: DQNBatch,
    *,
    discount: float = 0.99,
    double: bool = True,
    huber_delta: float = 1.0,
    tau: float = 1.0,
    target_period: int = 100,
) -> tuple[DQNState, dict[str, jax.Array]]:
    """One gradient step on :func:`dqn_loss` from a replay batch, then the target update.

    Args:
      state: a :class:`DQNState` (``state.step`` counts gradient steps).
      batch: a :class:`DQNBatch` of ``B`` transitions.
      discount, double, huber_delta: as in :func:`dqn_loss`.
      tau, target_period: :func:`target_update` after the step, with the new step count.

    Returns:
      ``(state, metrics)`` with ``loss`` and the loss's metrics.

    Example:
      >>> import optax
      >>> from jaxlab.rl import DQNBatch, DQNState, QNetwork, dqn_update
      >>> net = QNetwork(num_actions=2, hidden=(8,))
      >>> p = net.init(jax.random.key(0), jnp.zeros((1, 3)))
      >>> st = DQNState.create(apply_fn=net.apply, params=p, tx=optax.adam(1e-3),
      ...                      target_params=p)
      >>> b = DQNBatch(jnp.ones((5, 3)), jnp.ones(5, jnp.int32), jnp.ones(5), jnp.zeros(5),
      ...              jnp.ones((5, 3)))
      >>> st, m = jax.jit(lambda s: dqn_update(s, b, target_period=1))(st)
      >>> int(st.step), sorted(m)
      (1, ['loss', 'q_mean', 'td_abs'])
    """
    check_type("state", state, DQNState)
    if target_period < 1:
        raise ValueError(f"target_period must be >= 1, got {target_period}")
    grad_fn = jax.value_and_grad(
        lambda p: dqn_loss(
            p,
            state.target_params,
            state.apply_fn,
            batch,
            discount=discount,
            double=double,
            huber_delta=huber_delta,
        ),
        has_aux=True,
    )
    (loss, metrics), grads = grad_fn(state.params)
    state = state.apply_gradients(grads=grads)
    target = target_update(
        state.params, state.target_params, state.step, tau=tau, period=target_period
    )
    return state.replace(target_params=target), dict(metrics, loss=loss)
