"""Imagination rollouts, λ-returns and a Dreamer-style actor-critic loss in latent space.

    G^λ_t = r_t + γ_t ((1 − λ) v(ĥ_{t+1}) + λ G^λ_{t+1}),   G^λ_H = v(ĥ_H)
    L_critic = ½ mean (v(ĥ_t) − sg(G^λ_t))²
    L_actor  = −mean log π(a_t | ĥ_t) · sg((G^λ_t − v(ĥ_t)) / S) − η mean H[π(· | ĥ_t)]

(Hafner et al. 2020, Eq. 6-8; discrete actions use the REINFORCE gradient as DreamerV2
does, with ``S = max(1, P95(G) − P5(G))`` the return scale of DreamerV3.) λ-returns come
from rlax.

References:
  Hafner, Lillicrap, Ba, Norouzi. Dream to Control. ICLR 2020.
  Hafner, Pasukonis, Ba, Lillicrap. Mastering Diverse Domains through World Models. 2023.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_callable, check_key, check_range
from jaxlab._optional import lazy_import

rlax = lazy_import("rlax", extra="rl")

__all__ = ["actor_critic_loss", "imagine", "lambda_returns", "return_scale"]


def lambda_returns(
    rewards: ArrayLike, discounts: ArrayLike, next_values: ArrayLike, lambda_: float = 0.95
) -> jax.Array:
    """TD(λ) returns ``G^λ_t`` (module docstring) along the leading time axis (rlax).

    Args:
      rewards: ``r: [T, ...]`` (reward of the step from ``t`` to ``t + 1``).
      discounts: ``γ_t: [T, ...]``.
      next_values: ``v(ĥ_{t+1}): [T, ...]`` (the last one bootstraps).
      lambda_: ``λ`` in ``[0, 1]``.

    Returns:
      ``G^λ: [T, ...]``.

    Example:
      >>> from jaxlab.rl.imagination import lambda_returns
      >>> g = lambda_returns(jnp.ones(3), jnp.full(3, 0.5), jnp.zeros(3), 1.0)
      >>> g.tolist()
      [1.75, 1.5, 1.0]
    """
    r, d, v = map(jnp.asarray, (rewards, discounts, next_values))
    if r.ndim < 1 or d.shape != r.shape or v.shape != r.shape:
        raise ValueError(
            f"rewards, discounts, next_values must share a shape [T, ...], got {r.shape}, "
            f"{d.shape}, {v.shape}"
        )
    check_range("lambda_", lambda_, 0.0, 1.0)  # unchecked when traced
    flat = lambda x: x.reshape(x.shape[0], -1)  # noqa: E731
    fn = jax.vmap(lambda a, b, c: rlax.lambda_returns(a, b, c, lambda_), in_axes=1, out_axes=1)
    return fn(flat(r), flat(d), flat(v)).reshape(r.shape)


def imagine(
    transition: Callable[..., jax.Array],
    policy: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array, jax.Array]],
    h0: ArrayLike,
    key: ArrayLike,
    horizon: int,
    stochastic: bool = False,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Roll a policy out in the latent model for ``horizon`` steps (one ``lax.scan``).

    Args:
      transition: ``(h [B, Z], a [B]) -> h' [B, Z]`` (the world model's ``f``), or with
        ``stochastic``, ``(h, a, key) -> h'`` (a sample of the prior, e.g.
        :meth:`jaxlab.rl.rssm.RSSM.transition`).
      policy: ``(h [B, Z], key) -> (a [B], log π(a|h) [B], entropy [B])``; goal or landmark
        conditioning is closed over.
      h0: ``[B, Z]`` start latents.
      key: PRNG key.
      horizon: ``H``.
      stochastic: whether ``transition`` takes a PRNG key (its own, split from ``key``).

    Returns:
      ``(h [H + 1, B, Z], actions [H, B], log_probs [H, B], entropies [H, B])``; the
      latents are stop-gradient (the actor learns by REINFORCE), the log-probabilities are
      differentiable in the policy's parameters.
    """
    check_callable("transition", transition)
    check_callable("policy", policy)
    key = check_key("key", key)
    h0 = jnp.asarray(h0)
    if h0.ndim != 2:
        raise ValueError(f"h0 must be [B, Z], got {h0.shape}")
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")

    def step(h, k):
        k_pi, k_tr = jax.random.split(k)
        a, logp, ent = policy(h, k_pi if stochastic else k)
        h_next = transition(h, a, k_tr) if stochastic else transition(h, a)
        h_next = jax.lax.stop_gradient(h_next)
        return h_next, (h_next, a, logp, ent)

    _, (hs, acts, logps, ents) = jax.lax.scan(
        step, jax.lax.stop_gradient(h0), jax.random.split(key, horizon)
    )
    hs = jnp.concatenate([jax.lax.stop_gradient(h0)[None], hs], 0)
    return hs, acts, logps, ents


def return_scale(returns: ArrayLike) -> jax.Array:
    """DreamerV3's return scale ``S = max(1, P95 − P5)`` of a batch of returns (a scalar)."""
    g = jax.lax.stop_gradient(jnp.asarray(returns))
    if g.size == 0:
        raise ValueError(f"returns must not be empty, got shape {g.shape}")
    return jnp.maximum(1.0, jnp.percentile(g, 95) - jnp.percentile(g, 5))


def actor_critic_loss(
    rewards: ArrayLike,
    values: ArrayLike,
    log_probs: ArrayLike,
    entropies: ArrayLike,
    *,
    discount: float = 0.99,
    lambda_: float = 0.95,
    ent_coef: float = 1e-3,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Dreamer actor and critic losses on an imagined batch (module docstring).

    Args:
      rewards: ``r: [H, B]``, reward of the step ``ĥ_t → ĥ_{t+1}``.
      values: ``v(ĥ_t): [H + 1, B]`` (differentiable in the critic's parameters).
      log_probs: ``log π(a_t | ĥ_t): [H, B]`` (differentiable in the actor's parameters).
      entropies: ``[H, B]``.
      discount: ``γ``.
      lambda_: ``λ``.
      ent_coef: ``η``.

    Returns:
      ``(actor_loss + critic_loss, metrics)``.
    """
    r, v, lp, ent = map(jnp.asarray, (rewards, values, log_probs, entropies))
    if r.ndim != 2 or v.shape != (r.shape[0] + 1, r.shape[1]):
        raise ValueError(f"rewards must be [H, B] and values [H + 1, B], got {r.shape}, {v.shape}")
    if lp.shape != r.shape or ent.shape != r.shape:
        raise ValueError(f"log_probs and entropies must be {r.shape}, got {lp.shape}, {ent.shape}")
    check_range("discount", discount, 0.0, 1.0)
    check_range("ent_coef", ent_coef, 0.0)
    v_sg = jax.lax.stop_gradient(v)
    targets = lambda_returns(r, jnp.full_like(r, discount), v_sg[1:], lambda_)
    scale = return_scale(targets)
    adv = jax.lax.stop_gradient((targets - v_sg[:-1]) / scale)
    actor = -jnp.mean(lp * adv) - ent_coef * jnp.mean(ent)
    critic = 0.5 * jnp.mean(jnp.square(v[:-1] - jax.lax.stop_gradient(targets)))
    return actor + critic, {
        "actor_loss": actor,
        "critic_loss": critic,
        "return": jnp.mean(targets[0]),
        "entropy": jnp.mean(ent),
    }
