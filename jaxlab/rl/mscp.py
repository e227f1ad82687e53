"""MSCP-style multiscale state-centric planners (online RL with action-free offline data).

A reconstruction from the abstract of Wu et al. (ICML 2024); the paper's own equations were
not available, so every piece here is "MSCP-style" and kept separable so that the paper's
versions can replace each one:

* fast planner — a next-state proposal model ``ŝ' = s + f(s, g_sub)`` fitted on consecutive
  passive states with hindsight sub-goals (:func:`proposal_loss`, :func:`propose`);
* slow planner — a goal-conditioned state value ``V(s, g)`` learned by TD on state-only
  transitions with hindsight goals; the expectile loss makes it optimistic over the
  behaviour's actions (ICVF/HIQL-style; :func:`goal_value_loss`), and it picks the sub-goal
  (:func:`select_subgoal`);
* online inverse dynamics model ensemble ``I_e(a | s, s')`` (:func:`idm_loss`);
* pessimism — the ensemble's disagreement ``u(s, ŝ')`` on a proposal outside the online
  support down-weights its guidance (:func:`ensemble_disagreement`,
  :func:`pessimism_weight`);
* guidance — a behaviour-cloning term toward ``Ī(· | s, ŝ')`` in the online learner's loss
  (the ``guide_probs``/``guide_weight`` of :class:`jaxlab.rl.PPOBatch`).

All kernels act on one example (or one minibatch for the losses) and are batched with
``vmap``; nothing here loops over training steps.

References:
  Wu, Hu, Yang, Zhang, Zhang. Planning, Fast and Slow: Online Reinforcement Learning with
  Action-Free Offline Data via Multiscale Planners. ICML 2024.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_callable, check_range

__all__ = [
    "ensemble_disagreement",
    "expectile_loss",
    "goal_value_loss",
    "idm_loss",
    "pessimism_weight",
    "proposal_loss",
    "propose",
    "select_subgoal",
]


def _check_pairs(apply_fn: Callable, scale: float, s: jax.Array, **others: jax.Array) -> None:
    """``apply_fn`` callable, ``scale > 0`` and every array in ``others`` shaped like ``s``."""
    check_callable("apply_fn", apply_fn)
    check_range("scale", scale, 0.0, low_open=True)
    for name, x in others.items():
        if x.shape != s.shape:
            raise ValueError(f"{name} must have the shape of s {s.shape}, got {x.shape}")


def expectile_loss(diff: ArrayLike, tau: float = 0.9) -> jax.Array:
    """``|τ − 1[diff < 0]| · diff²`` elementwise (the IQL expectile loss, Eq. 5 there).

    Example:
      >>> from jaxlab.rl.mscp import expectile_loss
      >>> [round(float(x), 4) for x in expectile_loss(jnp.array([2.0, -2.0]), 0.9)]
      [3.6, 0.4]
    """
    diff = as_float("diff", diff)
    check_range("tau", tau, 0.0, 1.0)
    return jnp.abs(tau - (diff < 0).astype(diff.dtype)) * jnp.square(diff)


def goal_value_loss(
    params: Any,
    target_params: Any,
    apply_fn: Callable,
    s: ArrayLike,
    s_next: ArrayLike,
    g: ArrayLike,
    *,
    gamma: float = 0.95,
    reach_radius: float = 0.1,
    tau: float = 0.9,
) -> jax.Array:
    """Slow planner: TD loss of a goal-conditioned state value on state-only transitions.

    ``y = 0`` if ``‖s' − g‖ < r`` else ``−1 + γ V̄(s', g)``; loss ``= E[L_τ(y − V(s, g))]``
    with ``L_τ`` the expectile loss (``τ > 0.5`` approximates the best action's value
    without knowing the actions) and ``V̄`` a target network. ``V ∈ [−1/(1−γ), 0]`` is a
    discounted negative step count to ``g``.

    Args:
      params, target_params: value-network parameters ``V`` and ``V̄``.
      apply_fn: ``apply_fn(params, concat([s, g])) -> [..., 1]``.
      s, s_next, g: ``[n, d]`` states, next states and (hindsight) goals.
      gamma, reach_radius, tau: ``γ``, ``r`` and ``τ``.

    Returns:
      The scalar loss.
    """
    s, s_next, g = map(jnp.asarray, (s, s_next, g))
    if not (s.shape == s_next.shape == g.shape) or s.ndim != 2:
        raise ValueError(
            f"s, s_next, g must be [n, d] of one shape, got {s.shape}, {s_next.shape}, {g.shape}"
        )
    check_callable("apply_fn", apply_fn)
    check_range("gamma", gamma, 0.0, 1.0, high_open=True)
    check_range("reach_radius", reach_radius, 0.0)
    check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    v = apply_fn(params, jnp.concatenate([s, g], -1))[..., 0]
    v_next = apply_fn(target_params, jnp.concatenate([s_next, g], -1))[..., 0]
    reached = jnp.linalg.norm(s_next - g, axis=-1) < reach_radius
    y = jnp.where(reached, 0.0, -1.0 + gamma * jax.lax.stop_gradient(v_next))
    return jnp.mean(expectile_loss(y - v, tau))


def proposal_loss(
    params: Any,
    apply_fn: Callable,
    s: ArrayLike,
    s_next: ArrayLike,
    g_sub: ArrayLike,
    scale: float = 10.0,
) -> jax.Array:
    """Fast planner: ``E‖f(s, g_sub) − scale·(s' − s)‖²`` on consecutive passive states.

    ``g_sub`` is a hindsight sub-goal (a later state of the same trajectory); ``scale``
    brings one-step displacements to unit order.
    """
    s, s_next, g_sub = map(jnp.asarray, (s, s_next, g_sub))
    _check_pairs(apply_fn, scale, s, s_next=s_next, g_sub=g_sub)
    pred = apply_fn(params, jnp.concatenate([s, g_sub], -1))
    return jnp.mean(jnp.sum(jnp.square(pred - scale * (s_next - s)), -1))


def propose(
    params: Any, apply_fn: Callable, s: ArrayLike, g_sub: ArrayLike, scale: float = 10.0
) -> jax.Array:
    """Fast planner's proposal ``ŝ' = s + f(s, g_sub) / scale`` (``[..., d]``)."""
    s, g_sub = jnp.asarray(s), jnp.asarray(g_sub)
    _check_pairs(apply_fn, scale, s, g_sub=g_sub)
    return s + apply_fn(params, jnp.concatenate([s, g_sub], -1)) / scale


def select_subgoal(
    v_sc: ArrayLike,
    v_cg: ArrayLike,
    v_sg: ArrayLike,
    candidates: ArrayLike,
    goal: ArrayLike,
    min_value: float,
) -> jax.Array:
    """Slow planner: the candidate nearest the goal among those reachable soon.

    ``g_sub = argmax_c V(c, g)`` over candidates with ``V(s, c) ≥ v_min`` (reachable in about
    ``H`` steps: ``v_min = −(1 − γ^H)/(1 − γ)``); ``g`` itself when ``V(s, g) ≥ v_min``;
    ``argmax_c V(s, c) + V(c, g)`` when no candidate is reachable. One example.

    Args:
      v_sc: ``[M]`` values ``V(s, c)``.
      v_cg: ``[M]`` values ``V(c, g)``.
      v_sg: scalar ``V(s, g)``.
      candidates: ``[M, d]`` candidate states.
      goal: ``[d]``.
      min_value: ``v_min``.

    Returns:
      ``g_sub: [d]``.

    Example:
      >>> from jaxlab.rl.mscp import select_subgoal
      >>> c = jnp.array([[0.0], [1.0], [2.0]])
      >>> select_subgoal(jnp.array([-1., -2., -5.]), jnp.array([-5., -3., -1.]), -9.,
      ...                c, jnp.array([3.0]), -2.5).tolist()
      [1.0]
    """
    v_sc, v_cg, candidates, goal = map(jnp.asarray, (v_sc, v_cg, candidates, goal))
    if v_sc.shape != v_cg.shape or candidates.shape[:1] != v_sc.shape:
        raise ValueError(
            f"v_sc {v_sc.shape}, v_cg {v_cg.shape} and candidates "
            f"{candidates.shape} must agree on M"
        )
    if candidates.ndim != 2 or goal.shape != candidates.shape[1:]:
        raise ValueError(f"goal must be [d] = {candidates.shape[1:]}, got {goal.shape}")
    if jnp.ndim(v_sg) != 0:
        raise ValueError(f"v_sg must be a scalar, got shape {jnp.shape(v_sg)}")
    check_range("min_value", min_value)  # NaN refused
    reachable = v_sc >= min_value
    near = jnp.argmax(jnp.where(reachable, v_cg, -jnp.inf))
    through = jnp.argmax(v_sc + v_cg)
    idx = jnp.where(reachable.any(), near, through)
    return jnp.where(jnp.asarray(v_sg) >= min_value, goal, candidates[idx])


def idm_loss(
    params: Any,
    apply_fn: Callable,
    s: ArrayLike,
    s_next: ArrayLike,
    actions: ArrayLike,
    scale: float = 10.0,
) -> jax.Array:
    """Inverse dynamics: cross-entropy of ``I(a | s, s')`` on the agent's transitions.

    ``apply_fn(params, concat([s, scale·(s' − s)])) -> logits [n, K]``; ``actions: [n]``.
    For an ensemble, ``vmap`` over stacked parameters and sum.
    """
    s, s_next, actions = jnp.asarray(s), jnp.asarray(s_next), jnp.asarray(actions)
    _check_pairs(apply_fn, scale, s, s_next=s_next)
    if actions.shape != s.shape[:1] or not jnp.issubdtype(actions.dtype, jnp.integer):
        raise ValueError(f"actions must be int [{s.shape[0]}], got {actions.dtype} {actions.shape}")
    logits = apply_fn(params, jnp.concatenate([s, scale * (s_next - s)], -1))
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, jnp.asarray(actions)[:, None], -1))


def ensemble_disagreement(logits: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """Mean prediction and disagreement of an ensemble of categorical models.

    ``p̄ = (1/E) Σ_e p_e``, ``u = (1/E) Σ_e KL(p_e ‖ p̄)`` (the generalized Jensen–Shannon
    divergence: 0 iff all members agree).

    Args:
      logits: ``[E, K]`` (one example).

    Returns:
      ``(p̄ [K], u [])``.

    Example:
      >>> from jaxlab.rl.mscp import ensemble_disagreement
      >>> p, u = ensemble_disagreement(jnp.log(jnp.array([[0.5, 0.5], [0.5, 0.5]])))
      >>> float(u)
      0.0
    """
    logits = jnp.asarray(logits)
    if logits.ndim != 2:
        raise ValueError(f"logits must be [E, K], got {logits.shape}")
    logp = jax.nn.log_softmax(logits, -1)
    p = jnp.exp(logp)
    p_bar = p.mean(0)
    u = jnp.mean(jnp.sum(p * (logp - jnp.log(p_bar + 1e-12)[None]), -1))
    return p_bar, u


def pessimism_weight(u: ArrayLike, beta: ArrayLike) -> jax.Array:
    """Guidance weight ``exp(−β u)``: trust a proposal less where the IDMs disagree.

    ``beta >= 0`` is checked when concrete; a NaN disagreement ``u`` gives a NaN weight.
    """
    check_range("beta", beta, 0.0)
    return jnp.exp(-jnp.asarray(beta) * jnp.asarray(u))
