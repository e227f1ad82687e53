"""PPO building blocks: GAE, the clipped objective, an actor-critic and one PPO update.

Built from rlax (``truncated_generalized_advantage_estimation``,
``clipped_surrogate_pg_loss``), distrax (the policy distributions) and optax; only the glue
is written here. The rollout/update loop lives in the paper trainers (``jaxlab.trainers.rl``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
from flax.training.train_state import TrainState
from jax.typing import ArrayLike

from jaxlab._checks import (
    check_callable,
    check_integer,
    check_key,
    check_range,
    check_type,
    check_widths,
)
from jaxlab._optional import lazy_import

if TYPE_CHECKING:
    import distrax
else:
    distrax = lazy_import("distrax", extra="rl")
rlax = lazy_import("rlax", extra="rl")

__all__ = ["ActorCritic", "PPOBatch", "gae", "policy_distribution", "ppo_loss", "ppo_update"]


def gae(
    rewards: ArrayLike, discounts: ArrayLike, values: ArrayLike, lambda_: float = 0.95
) -> tuple[jax.Array, jax.Array]:
    """Generalized advantage estimation for one trajectory (rlax).

    ``δ_t = r_t + γ_t V(s_{t+1}) − V(s_t)``, ``A_t = δ_t + γ_t λ A_{t+1}`` (Schulman et al.
    2016, Eq. 16), with ``γ_t = γ · (1 − done_t)`` carried by ``discounts``.

    Args:
      rewards: ``r: [T]``.
      discounts: ``γ_t: [T]`` (0 where the episode ended at step t).
      values: ``V: [T + 1]`` (the last entry bootstraps).
      lambda_: ``λ``.

    Returns:
      ``(advantages [T], returns [T])`` with ``returns = advantages + V[:-1]``.

    Example:
      >>> from jaxlab.rl import gae
      >>> adv, ret = gae(jnp.ones(3), jnp.full(3, 0.9), jnp.zeros(4), 1.0)
      >>> [round(float(x), 3) for x in adv]
      [2.71, 1.9, 1.0]

    References:
      Schulman, Moritz, Levine, Jordan, Abbeel. High-Dimensional Continuous Control Using
      Generalized Advantage Estimation. ICLR 2016.
    """
    rewards, discounts, values = map(jnp.asarray, (rewards, discounts, values))
    if rewards.ndim != 1 or discounts.shape != rewards.shape:
        raise ValueError(
            f"rewards and discounts must be [T] of equal shape, got {rewards.shape}, "
            f"{discounts.shape}"
        )
    if values.shape != (rewards.shape[0] + 1,):
        raise ValueError(f"values must be [T + 1] = [{rewards.shape[0] + 1}], got {values.shape}")
    check_range("discounts", discounts, 0.0, 1.0)  # unchecked when traced
    check_range("lambda_", lambda_, 0.0, 1.0)
    adv = rlax.truncated_generalized_advantage_estimation(rewards, discounts, lambda_, values)
    return adv, adv + values[:-1]


class ActorCritic(nn.Module):
    """MLP actor-critic: ``obs [..., d] -> (policy parameters, value [...])``.

    Discrete (``num_actions >= 2``): logits ``[..., K]``. Continuous (``action_dim > 0``):
    the Gaussian mean ``[..., action_dim]`` and a state-independent log-std.
    """

    num_actions: int = 4
    action_dim: int = 0
    hidden: tuple[int, ...] = (64, 64)

    def __post_init__(self) -> None:
        check_integer("action_dim", self.action_dim, low=0)
        if not self.action_dim:
            check_integer("num_actions", self.num_actions, low=2)
        check_widths("hidden", self.hidden)
        super().__post_init__()

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[Any, jax.Array]:
        def trunk(x, name):
            for i, h in enumerate(self.hidden):
                x = nn.tanh(nn.Dense(h, name=f"{name}_{i}")(x))
            return x

        v = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0), name="value")(
            trunk(obs, "critic")
        )[..., 0]
        z = trunk(obs, "actor")
        init = nn.initializers.orthogonal(0.01)
        if self.action_dim:
            mean = nn.Dense(self.action_dim, kernel_init=init, name="mean")(z)
            log_std = self.param("log_std", nn.initializers.zeros, (self.action_dim,))
            return (mean, jnp.broadcast_to(log_std, mean.shape)), v
        return nn.Dense(self.num_actions, kernel_init=init, name="logits")(z), v


def policy_distribution(pi_params: Any) -> distrax.Distribution:
    """The distrax policy for :class:`ActorCritic` outputs (Categorical or diagonal Normal)."""
    if isinstance(pi_params, tuple):
        if len(pi_params) != 2:
            raise ValueError(
                f"pi_params must be logits or (mean, log_std), got a tuple of {len(pi_params)}"
            )
        mean, log_std = pi_params
        return distrax.MultivariateNormalDiag(mean, jnp.exp(log_std))
    return distrax.Categorical(logits=pi_params)


class PPOBatch(NamedTuple):
    """Flat transitions for one PPO update (leading axis ``[n]``).

    ``guide_probs [n, K]`` and ``guide_weight [n]`` carry an optional behaviour-cloning
    target (planner guidance); weight 0 switches it off.
    """

    obs: jax.Array
    actions: jax.Array
    log_probs: jax.Array
    advantages: jax.Array
    returns: jax.Array
    guide_probs: jax.Array
    guide_weight: jax.Array


def ppo_loss(
    params: Any,
    apply_fn: Callable,
    batch: PPOBatch,
    *,
    clip_eps: float = 0.2,
    vf_coef: float = 0.5,
    ent_coef: float = 0.01,
    guide_coef: float = 0.0,
    bc: tuple[jax.Array, jax.Array, jax.Array] | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Clipped PPO loss (Schulman et al. 2017, Eq. 7) plus value, entropy and guidance terms.

    ``L = −E[min(ρ A, clip(ρ, 1−ε, 1+ε) A)] + c_v E[(V − R)²] − c_e E[H(π)]
    + c_g E[w · CE(p_guide, π)]`` (discrete policies only) with ``ρ = π(a|s) / π_old(a|s)``
    (``batch.log_probs`` is ``log π_old``), advantages normalised per batch.

    Args:
      params: actor-critic parameters.
      apply_fn: ``apply_fn(params, obs) -> (policy params, value)``.
      batch: a :class:`PPOBatch` with ``n`` transitions.
      clip_eps, vf_coef, ent_coef, guide_coef: ``ε``, ``c_v``, ``c_e``, ``c_g``.
      bc: optional extra behaviour-cloning batch ``(obs [m, d], probs [m, K], weight [m])``
        (e.g. passive states labelled by an inverse model), added with ``c_g``.

    Returns:
      ``(loss, metrics)``.

    Example:
      >>> from jaxlab.rl import ActorCritic, PPOBatch, ppo_loss
      >>> net = ActorCritic(num_actions=3, hidden=(8,))
      >>> p = net.init(jax.random.key(0), jnp.zeros((1, 2)))
      >>> b = PPOBatch(jnp.zeros((4, 2)), jnp.zeros(4, jnp.int32), jnp.full(4, -1.1),
      ...              jnp.arange(4.0), jnp.ones(4), jnp.zeros((4, 3)), jnp.zeros(4))
      >>> loss, m = ppo_loss(p, net.apply, b)
      >>> loss.shape
      ()

    References:
      Schulman, Wolski, Dhariwal, Radford, Klimov. Proximal Policy Optimization Algorithms.
      arXiv:1707.06347, 2017.
    """
    check_callable("apply_fn", apply_fn)
    check_type("batch", batch, PPOBatch)
    _check_bc(bc)
    check_range("clip_eps", clip_eps, 0.0, low_open=True)
    for name, coef in (("vf_coef", vf_coef), ("ent_coef", ent_coef), ("guide_coef", guide_coef)):
        check_range(name, coef, 0.0)
    pi_params, value = apply_fn(params, batch.obs)
    dist = policy_distribution(pi_params)
    log_prob = dist.log_prob(batch.actions)
    adv = batch.advantages
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = jnp.exp(log_prob - batch.log_probs)
    # Eq. (7): rlax returns the negated clipped surrogate, averaged.
    pg_loss = rlax.clipped_surrogate_pg_loss(ratio, adv, clip_eps)
    v_loss = jnp.mean(jnp.square(value - batch.returns))
    entropy = jnp.mean(dist.entropy())
    loss = pg_loss + vf_coef * v_loss - ent_coef * entropy
    metrics = {"pg_loss": pg_loss, "v_loss": v_loss, "entropy": entropy}
    if guide_coef:
        if isinstance(pi_params, tuple):
            raise ValueError("guidance (guide_coef > 0) needs a discrete policy")
        guide = _weighted_ce(pi_params, batch.guide_probs, batch.guide_weight)
        if bc is not None:
            bc_logits, _ = apply_fn(params, bc[0])
            guide = guide + _weighted_ce(bc_logits, bc[1], bc[2])
        loss = loss + guide_coef * guide
        metrics["guide_loss"] = guide
    return loss, metrics


def _check_bc(bc: Any) -> None:
    if bc is not None and (not isinstance(bc, tuple) or len(bc) != 3):
        raise ValueError("bc must be None or a tuple (obs, probs, weight)")


def _weighted_ce(logits: jax.Array, probs: jax.Array, weight: jax.Array) -> jax.Array:
    """``Σ_i w_i CE(p_i, softmax(logits_i)) / max(Σ_i w_i, 1)``."""
    ce = -jnp.sum(probs * jax.nn.log_softmax(logits, axis=-1), axis=-1)
    return jnp.sum(weight * ce) / jnp.maximum(weight.sum(), 1.0)


def ppo_update(
    state: TrainState,
    batch: PPOBatch,
    key: ArrayLike,
    *,
    num_epochs: int = 4,
    num_minibatches: int = 4,
    bc: tuple[jax.Array, jax.Array, jax.Array] | None = None,
    **loss_kwargs: Any,
) -> tuple[TrainState, dict[str, jax.Array]]:
    """One PPO update: ``num_epochs`` passes over shuffled minibatches of ``batch``.

    Args:
      state: a flax ``TrainState`` (``apply_fn``, ``params``, optax ``tx``).
      batch: a :class:`PPOBatch` with ``n`` transitions, ``n`` divisible by
        ``num_minibatches``.
      key: PRNG key for the shuffles.
      num_epochs, num_minibatches: as in PPO.
      bc: optional behaviour-cloning batch, added to every minibatch's loss.
      **loss_kwargs: passed to :func:`ppo_loss`.

    Returns:
      ``(state, metrics)`` with the metrics of the last minibatch.
    """
    check_type("state", state, TrainState)
    check_type("batch", batch, PPOBatch)
    _check_bc(bc)
    unknown = set(loss_kwargs) - {"clip_eps", "vf_coef", "ent_coef", "guide_coef"}
    if unknown:
        raise ValueError(f"loss_kwargs must be ppo_loss's coefficients, got {sorted(unknown)}")
    check_integer("num_epochs", num_epochs, low=1)
    check_integer("num_minibatches", num_minibatches, low=1)
    key = check_key("key", key)
    n = batch.obs.shape[0]
    if n % num_minibatches:
        raise ValueError(f"batch size {n} is not divisible by num_minibatches={num_minibatches}")
    grad_fn = jax.value_and_grad(
        lambda p, mb: ppo_loss(p, state.apply_fn, mb, bc=bc, **loss_kwargs), has_aux=True
    )

    def minibatch_step(st, mb):
        (loss, metrics), grads = grad_fn(st.params, mb)
        return st.apply_gradients(grads=grads), dict(metrics, loss=loss)

    def epoch(st, k):
        perm = jax.random.permutation(k, n)
        mbs = jax.tree.map(
            lambda x: x[perm].reshape((num_minibatches, n // num_minibatches) + x.shape[1:]),
            batch,
        )
        return jax.lax.scan(minibatch_step, st, mbs)

    state, metrics = jax.lax.scan(epoch, state, jax.random.split(key, num_epochs))
    return state, jax.tree.map(lambda m: m[-1, -1], metrics)
