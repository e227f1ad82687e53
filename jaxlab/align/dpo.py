"""Direct Preference Optimization (DPO) and the one-token model of its learning dynamics.

``dpo_loss`` is the per-example DPO objective of Rafailov et al. (2023) on sequence
log-probabilities (no maintained JAX library ships it; TRL's is PyTorch). Im & Li (2024)
analyse DPO on a model whose prompt embeddings g(x) ∈ ℝ^d are frozen and only the
unembedding W ∈ ℝ^{V×d} is trained, with one-token answers:
π_W(y | x) = softmax(W g(x))_y. ``one_token_logps``, ``unembedding_dpo_loss`` and
``unembedding_sft_loss`` are that model; ``sample_behaviour_preferences`` draws the paper's
synthetic mixture of behaviours whose "Yes"- and "No"-preferred prompt embeddings differ
along a behaviour direction by a controlled amount (their distinguishability).

Bad input: mismatched shapes, a non-positive ``beta``, out-of-vocabulary tokens and empty
batches under ``reduction="mean"`` raise ``ValueError`` (``beta`` and token ranges only when
concrete); NaN log-probabilities or margins give NaN.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.typing import ArrayLike

from jaxlab._checks import (
    as_float,
    check_integer,
    check_key,
    check_labels,
    check_range,
    is_traced,
)

REDUCTIONS = ("mean", "none")


def _check_beta(beta: ArrayLike) -> jax.Array:
    b = jnp.asarray(beta)
    if b.ndim != 0:
        raise ValueError(f"beta must be a scalar, got shape {b.shape}")
    if not isinstance(b, jax.core.Tracer) and not float(b) > 0:
        raise ValueError(f"beta must be positive, got {float(b)}")
    return b


def _reduce(values: jax.Array, reduction: str, name: str) -> jax.Array:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if reduction == "mean" and values.size == 0:  # a mean of nothing would be NaN
        raise ValueError(f"{name} is empty (shape {values.shape}): nothing to average")
    return jnp.mean(values) if reduction == "mean" else values


def dpo_reward_margins(
    policy_chosen_logps: ArrayLike,
    policy_rejected_logps: ArrayLike,
    ref_chosen_logps: ArrayLike,
    ref_rejected_logps: ArrayLike,
    beta: ArrayLike,
) -> jax.Array:
    """The implicit reward margins β·[(log π_c − log π_ref,c) − (log π_r − log π_ref,r)].

    DPO's implicit reward of a response is r(x, y) = β log π_θ(y|x)/π_ref(y|x); the margin
    is r(x, y_w) − r(x, y_l), the argument of the sigmoid in the DPO loss.

    Args:
      policy_chosen_logps: ``[...]`` log π_θ(y_w | x).
      policy_rejected_logps: ``[...]`` log π_θ(y_l | x).
      ref_chosen_logps: ``[...]`` log π_ref(y_w | x).
      ref_rejected_logps: ``[...]`` log π_ref(y_l | x).
      beta: positive scalar β.

    Returns:
      ``[...]`` margins.

    Example:
      >>> from jaxlab.align import dpo_reward_margins
      >>> dpo_reward_margins(jnp.array([-1.0]), jnp.array([-3.0]), jnp.array([-2.0]),
      ...                    jnp.array([-2.0]), beta=0.5).tolist()
      [1.0]
    """
    b = _check_beta(beta)
    names = (
        "policy_chosen_logps",
        "policy_rejected_logps",
        "ref_chosen_logps",
        "ref_rejected_logps",
    )
    arrays = [
        as_float(n, a)
        for n, a in zip(
            names,
            (policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps),
            strict=True,
        )
    ]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(
            "policy_chosen_logps, policy_rejected_logps, ref_chosen_logps and "
            f"ref_rejected_logps must have one shape, got {[a.shape for a in arrays]}"
        )
    pc, pr, rc, rr = arrays
    return b * ((pc - rc) - (pr - rr))


def dpo_loss(
    policy_chosen_logps: ArrayLike,
    policy_rejected_logps: ArrayLike,
    ref_chosen_logps: ArrayLike,
    ref_rejected_logps: ArrayLike,
    beta: ArrayLike,
    reduction: str = "mean",
) -> jax.Array:
    """DPO loss −log σ(β·[(log π_c − log π_ref,c) − (log π_r − log π_ref,r)]).

    ``L(θ) = −E log σ(β log π_θ(y_w|x)/π_ref(y_w|x) − β log π_θ(y_l|x)/π_ref(y_l|x))``
    (Rafailov et al., 2023, Eq. (7)); the sequence log-probabilities are the arguments.
    Computed as ``−log_sigmoid(margin)``, so margins of ±1e4 give 0 and 1e4 exactly, and
    the gradient −β·σ(−margin) stays finite. A margin of +inf gives 0, −inf gives +inf,
    NaN inputs give NaN (not checked, so the kernel stays free under ``jit``).

    Args:
      policy_chosen_logps: ``[b]`` (any shape) log π_θ(y_w | x).
      policy_rejected_logps: same shape, log π_θ(y_l | x).
      ref_chosen_logps: same shape, log π_ref(y_w | x).
      ref_rejected_logps: same shape, log π_ref(y_l | x).
      beta: positive scalar β (the KL strength of the implied RLHF problem).
      reduction: ``"mean"`` (scalar) or ``"none"`` (per example).

    Returns:
      The mean loss, or the per-example losses of the inputs' shape.

    Example:
      >>> from jaxlab.align import dpo_loss
      >>> z = jnp.zeros(2)
      >>> round(float(dpo_loss(z, z, z, z, beta=0.1)), 4)  # log 2 at the reference
      0.6931

    References:
      Rafailov, Sharma, Mitchell, Ermon, Manning, Finn, "Direct Preference Optimization:
      Your Language Model is Secretly a Reward Model", NeurIPS 2023.
      Im, Li, "Understanding the Learning Dynamics of Alignment with Human Feedback",
      ICML 2024.
    """
    margins = dpo_reward_margins(
        policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta
    )
    return _reduce(-jax.nn.log_sigmoid(margins), reduction, "policy_chosen_logps")


def preference_accuracy(margins: ArrayLike, reduction: str = "mean") -> jax.Array:
    """Share of pairs whose implicit reward prefers the chosen answer (margin > 0; ties: 0).

    Args:
      margins: ``[...]`` from ``dpo_reward_margins``.
      reduction: ``"mean"`` (scalar share) or ``"none"`` (per-pair 0/1 floats).

    Returns:
      The share in [0, 1], or per-pair indicators.

    Example:
      >>> from jaxlab.align import preference_accuracy
      >>> float(preference_accuracy(jnp.array([1.0, -2.0, 0.5, 0.0])))
      0.5
    """
    m = as_float("margins", margins)
    wins = jnp.where(jnp.isnan(m), jnp.nan, (m > 0).astype(jnp.float32))  # NaN: no answer
    return _reduce(wins, reduction, "margins")


def _check_head(w: jax.Array, embeddings: jax.Array, name: str = "w") -> None:
    if w.ndim != 2:
        raise ValueError(f"{name} must be [vocab, d], got shape {w.shape}")
    if embeddings.ndim != 2 or embeddings.shape[1] != w.shape[1]:
        raise ValueError(
            f"embeddings must be [b, {w.shape[1]}] to match {name} {w.shape}, got "
            f"{embeddings.shape}"
        )


def one_token_logps(w: ArrayLike, embeddings: ArrayLike, tokens: ArrayLike) -> jax.Array:
    """log π_W(y | x) = log softmax(W g(x))_y for one-token answers.

    Args:
      w: ``[vocab, d]`` the unembedding W.
      embeddings: ``[b, d]`` frozen prompt embeddings g(x).
      tokens: int ``[b]`` the answer tokens y.

    Returns:
      ``[b]`` log-probabilities.

    Example:
      >>> from jaxlab.align import one_token_logps
      >>> one_token_logps(jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([1])).round(4)
      Array([-0.6931], dtype=float32)
    """
    w, g, y = as_float("w", w), as_float("embeddings", embeddings), jnp.asarray(tokens)
    _check_head(w, g)
    if y.shape != g.shape[:1] or not jnp.issubdtype(y.dtype, jnp.integer):
        raise ValueError(f"tokens must be int [{g.shape[0]}], got {y.dtype} {y.shape}")
    check_labels("tokens", y, w.shape[0])
    logps = jax.nn.log_softmax(g @ w.T, axis=-1)
    return jnp.take_along_axis(logps, y[:, None], axis=-1)[:, 0]


def unembedding_dpo_loss(
    w: ArrayLike,
    w_ref: ArrayLike,
    embeddings: ArrayLike,
    chosen: ArrayLike,
    rejected: ArrayLike,
    beta: ArrayLike,
    reduction: str = "mean",
) -> jax.Array:
    """DPO loss of the frozen-embedding, trainable-unembedding model (Im & Li, 2024).

    π_W(y|x) = softmax(W g(x))_y, π_ref = π_{W_ref}; for two tokens the margin is
    β·[(w_{y_w} − w_{y_l}) − (w_ref,y_w − w_ref,y_l)]ᵀ g(x).

    Args:
      w: ``[vocab, d]`` trained unembedding W.
      w_ref: ``[vocab, d]`` reference unembedding (frozen; no gradient flows into it).
      embeddings: ``[b, d]`` g(x).
      chosen: int ``[b]`` preferred tokens y_w.
      rejected: int ``[b]`` rejected tokens y_l.
      beta: positive scalar β.
      reduction: ``"mean"`` or ``"none"``.

    Returns:
      The loss (scalar or ``[b]``).

    Example:
      >>> from jaxlab.align import unembedding_dpo_loss
      >>> w = jnp.zeros((2, 3)); g = jnp.ones((4, 3)); y = jnp.zeros(4, int)
      >>> jax.grad(unembedding_dpo_loss)(w, w, g, y, 1 - y, 0.1).shape
      (2, 3)
    """
    if jnp.ndim(w) != 2:
        raise ValueError(f"w must be [vocab, d], got shape {jnp.shape(w)}")
    vocab = jnp.shape(w)[0]
    check_labels("chosen", chosen, vocab)
    check_labels("rejected", rejected, vocab)
    w_ref = jax.lax.stop_gradient(jnp.asarray(w_ref))
    if jnp.shape(w) != w_ref.shape:
        raise ValueError(f"w {jnp.shape(w)} and w_ref {w_ref.shape} must have one shape")
    return dpo_loss(
        one_token_logps(w, embeddings, chosen),
        one_token_logps(w, embeddings, rejected),
        one_token_logps(w_ref, embeddings, chosen),
        one_token_logps(w_ref, embeddings, rejected),
        beta,
        reduction,
    )


def unembedding_sft_loss(
    w: ArrayLike, embeddings: ArrayLike, chosen: ArrayLike, reduction: str = "mean"
) -> jax.Array:
    """Supervised fine-tuning baseline: cross-entropy −log π_W(y_w | x) on the preferred answer.

    Args:
      w: ``[vocab, d]``.
      embeddings: ``[b, d]``.
      chosen: int ``[b]``.
      reduction: ``"mean"`` or ``"none"``.

    Returns:
      The loss (scalar or ``[b]``).

    Example:
      >>> from jaxlab.align import unembedding_sft_loss
      >>> round(float(unembedding_sft_loss(jnp.zeros((2, 3)), jnp.ones((4, 3)),
      ...                                  jnp.zeros(4, int))), 4)
      0.6931
    """
    w, g, y = as_float("w", w), as_float("embeddings", embeddings), jnp.asarray(chosen)
    _check_head(w, g)
    if y.shape != g.shape[:1] or not jnp.issubdtype(y.dtype, jnp.integer):
        raise ValueError(f"chosen must be int [{g.shape[0]}], got {y.dtype} {y.shape}")
    check_labels("chosen", y, w.shape[0])
    losses = optax.softmax_cross_entropy_with_integer_labels(g @ w.T, y)
    return _reduce(losses, reduction, "embeddings")


class PreferenceBatch(NamedTuple):
    """One-token preference data of the behaviour-mixture model.

    Attributes:
      embeddings: ``[n, d]`` prompt embeddings g(x).
      chosen: int ``[n]`` preferred token (0 = "Yes", 1 = "No").
      rejected: int ``[n]`` the other token.
      behaviour: int ``[n]`` the behaviour each prompt belongs to.
    """

    embeddings: jax.Array
    chosen: jax.Array
    rejected: jax.Array
    behaviour: jax.Array


def sample_behaviour_preferences(
    key: jax.Array,
    num: int,
    directions: ArrayLike,
    deltas: ArrayLike,
    offset: ArrayLike,
    weights: ArrayLike,
    noise_scale: float,
) -> PreferenceBatch:
    """Draws prompts from a mixture of behaviours with controlled distinguishability.

    Behaviour k (drawn with probability ``weights[k]``) has "Yes"-preferred prompts with
    mean c + δ_k u_k and "No"-preferred prompts with mean c − δ_k u_k (each with
    probability ½), plus i.i.d. Laplace noise of scale b per coordinate (sub-exponential,
    as the paper's model assumes). The distinguishability of k grows with δ_k / b: the two
    means are 2δ_k apart along u_k against a per-coordinate standard deviation √2·b. (The
    paper's exact normalisation of distinguishability was not checked.)

    Args:
      key: a PRNG key.
      num: number of prompts n.
      directions: ``[K, d]`` behaviour directions u_k (orthonormal rows in the paper's setting).
      deltas: ``[K]`` half-distances δ_k.
      offset: ``[d]`` shared offset c.
      weights: ``[K]`` mixture weights (normalised here).
      noise_scale: Laplace scale b ≥ 0.

    Returns:
      A ``PreferenceBatch`` of ``num`` prompts.

    Example:
      >>> from jaxlab.align import sample_behaviour_preferences
      >>> batch = sample_behaviour_preferences(jax.random.key(0), 8, jnp.eye(2, 4),
      ...     jnp.array([1.0, 2.0]), jnp.zeros(4), jnp.array([0.5, 0.5]), 0.1)
      >>> batch.embeddings.shape, batch.chosen.shape
      ((8, 4), (8,))
    """
    u, delta = jnp.asarray(directions), jnp.asarray(deltas)
    c, p = jnp.asarray(offset), jnp.asarray(weights)
    if u.ndim != 2:
        raise ValueError(f"directions must be [K, d], got shape {u.shape}")
    if delta.shape != u.shape[:1] or p.shape != u.shape[:1]:
        raise ValueError(
            f"deltas {delta.shape} and weights {p.shape} must be [{u.shape[0]}] like directions"
        )
    if c.shape != u.shape[1:]:
        raise ValueError(f"offset must be [{u.shape[1]}], got {c.shape}")
    check_range("noise_scale", noise_scale, 0.0)
    check_integer("num", num, low=1)
    check_key("key", key)
    check_range("weights", p, 0.0)
    if not is_traced(p) and not 0 < float(np.sum(np.asarray(p))) < np.inf:
        raise ValueError(f"weights must have a positive finite sum, got {p}")
    k_beh, k_sign, k_noise = jax.random.split(key, 3)
    behaviour = jax.random.choice(k_beh, u.shape[0], (num,), p=p / jnp.sum(p))
    yes = jax.random.bernoulli(k_sign, 0.5, (num,))
    sign = jnp.where(yes, 1.0, -1.0)
    noise = noise_scale * jax.random.laplace(k_noise, (num, u.shape[1]))
    g = c[None, :] + (sign * delta[behaviour])[:, None] * u[behaviour] + noise
    chosen = jnp.where(yes, 0, 1).astype(jnp.int32)
    return PreferenceBatch(g, chosen, 1 - chosen, behaviour.astype(jnp.int32))
