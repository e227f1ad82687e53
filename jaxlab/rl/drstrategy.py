"""Dr. Strategy pieces: landmark VQ-VAE on latents, highway/explorer/achiever rewards,
per-landmark curiosity, the temporal-distance predictor's targets, focused sampling.

    Landmarks:  z_e = E(h),  l = argmin_k ‖z_e − e_k‖,  ĥ_l = D(e_l)
                L_lm = ‖D(z_q) − h‖² + β‖z_e − sg(e_l)‖²        (codebook by EMA, landmarks.py)
    Highway:    r_hw(h, l) = −‖ĥ_l − h‖  (+ α r_knn(h))       reach landmark l
    kNN:        r_knn(h_i) = log(1 + mean_{j ∈ kNN(i)} ‖h_i − h_j‖)   (APT particle entropy)
    Explorer:   r_exp(h, a) = mean_z Var_e[f_e(h, a)]         ensemble disagreement
    Curiosity:  c_l = mean λ-return of explorer rollouts starting at ĥ_l,
                p(l) ∝ c_l − min_k c_k + ε                    landmark sampling distribution
    TDP:        d̂(h_i, h_j) ≈ (j − i) / H for i ≤ j in one imagined trajectory,
                1 for pairs from different trajectories       (achiever reward −d̂(h, g))
    Focused sampling: the achiever's imagination starts at ĥ_{l*} (or the visited state
                nearest to it), l* = argmin_l ‖ĥ_l − h_g‖.

The agent that composes them (world model, landmarks, behaviours, TDP, acting) is
:mod:`jaxlab.rl.drstrategy_agent`. Hand-written (no library has them); hyper-parameters
from the reference code (``agent/drstrategy.yaml``): 64 landmarks of dimension 16, k = 30,
256 positive TDP pairs with negative-sampling factor 0.1, reach thresholds 0.07 (explore) /
0.05 (achieve) in MSE.
The explorer reward is latent disagreement (Plan2Explore) rather than the paper's latent
Bayesian surprise (a head predicting the RSSM's posterior-to-prior KL; not implemented).

References:
  Hamed, Kim, Kim, Yoon, Ahn. Dr. Strategy: Model-Based Generalist Agents with Strategic
  Dreaming. ICML 2024.
  Mendonca, Rybkin, Daniilidis, Hafner, Pathak. Discovering and Achieving Goals via World
  Models (LEXA). NeurIPS 2021.
  Liu, Abbeel. Behavior From the Void: Unsupervised Active Pre-Training (APT). NeurIPS 2021.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import (
    check_integer,
    check_key,
    check_labels,
    check_range,
    check_type,
    check_widths,
)
from jaxlab.nn.mlp import MLP
from jaxlab.rl.landmarks import quantize

__all__ = [
    "LandmarkVQ",
    "disagreement_reward",
    "focused_starts",
    "highway_reward",
    "knn_particle_reward",
    "landmark_curiosity",
    "landmark_loss",
    "nearest_landmark",
    "temporal_distance_pairs",
]


class LandmarkVQ(nn.Module):
    """Encoder ``h [..., Z] -> z_e [..., code_dim]`` and decoder ``z_q -> ĥ [..., Z]``."""

    latent: int
    code_dim: int = 16
    hidden: Sequence[int] = (128,)

    def __post_init__(self) -> None:
        check_integer("latent", self.latent, low=1)
        check_integer("code_dim", self.code_dim, low=1)
        check_widths("hidden", self.hidden)
        super().__post_init__()

    def setup(self):
        self.enc = MLP(self.code_dim, self.hidden, activation=nn.elu)
        self.dec = MLP(self.latent, self.hidden, activation=nn.elu)

    def encode(self, h: jax.Array) -> jax.Array:
        return self.enc(h)

    def decode(self, z: jax.Array) -> jax.Array:
        return jnp.tanh(self.dec(z))

    def __call__(self, h: jax.Array) -> jax.Array:
        return self.decode(self.encode(h))


def landmark_loss(
    params, model: LandmarkVQ, codebook: ArrayLike, h: ArrayLike, beta: float = 1e-4
) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    """``‖D(z_q) − h‖² + β‖z_e − sg(e)‖²`` with the straight-through ``z_q``.

    Args:
      params: :class:`LandmarkVQ` parameters.
      model: the module.
      codebook: ``e: [K, code_dim]`` (EMA-updated outside the gradient).
      h: ``[n, Z]`` world-model latents (stop-gradient is applied).
      beta: commitment weight (1e-4 in the reference).

    Returns:
      ``(loss, (z_e [n, code_dim], codes [n]))``; feed them to
      :func:`jaxlab.rl.ema_update`.
    """
    check_type("model", model, LandmarkVQ)
    check_range("beta", beta, 0.0)
    codebook = jnp.asarray(codebook)
    if codebook.ndim != 2 or codebook.shape[1] != model.code_dim:
        raise ValueError(f"codebook must be [K, {model.code_dim}], got {codebook.shape}")
    h = jax.lax.stop_gradient(jnp.asarray(h))
    if h.ndim != 2 or h.shape[1] != model.latent:
        raise ValueError(f"h must be [n, {model.latent}], got {h.shape}")
    # Module.apply's annotation includes the (output, variables) pair of a mutable apply.
    z_e = cast(jax.Array, model.apply(params, h, method=model.encode))
    z_q, codes, commit = quantize(z_e, codebook, beta)
    decoded = cast(jax.Array, model.apply(params, z_q, method=model.decode))
    recon = jnp.mean(jnp.sum(jnp.square(decoded - h), -1))
    return recon + commit, (z_e, codes)


def _pairwise(x: jax.Array, y: jax.Array) -> jax.Array:
    d2 = jnp.sum(x**2, -1)[:, None] - 2 * x @ y.T + jnp.sum(y**2, -1)[None]
    return jnp.sqrt(jnp.maximum(d2, 0.0))


def nearest_landmark(h: ArrayLike, landmarks: ArrayLike) -> jax.Array:
    """Index ``[n]`` of the landmark ``ĥ_l: [K, Z]`` nearest (Euclidean) to each ``h: [n, Z]``.

    Example:
      >>> from jaxlab.rl.drstrategy import nearest_landmark
      >>> nearest_landmark(jnp.array([[0.9, 0.0], [0.1, 1.2]]), jnp.eye(2)).tolist()
      [0, 1]
    """
    h, lm = jnp.asarray(h), jnp.asarray(landmarks)
    if h.ndim != 2 or lm.ndim != 2 or h.shape[1] != lm.shape[1]:
        raise ValueError(f"h must be [n, Z] and landmarks [K, Z], got {h.shape}, {lm.shape}")
    return jnp.argmin(_pairwise(h, lm), axis=1)


def highway_reward(h: ArrayLike, target: ArrayLike) -> jax.Array:
    """``r_hw = −‖ĥ_l − h‖`` over the last axis (``h``, ``target``: ``[..., Z]``)."""
    h, target = jnp.asarray(h), jnp.asarray(target)
    if h.ndim < 1:
        raise ValueError("h must be [..., Z], got a scalar")
    if h.shape != target.shape:
        raise ValueError(f"h and target must have the same shape, got {h.shape}, {target.shape}")
    return -jnp.sqrt(jnp.sum(jnp.square(h - target), -1) + 1e-12)


def knn_particle_reward(h: ArrayLike, k: int = 30) -> jax.Array:
    """APT particle-entropy reward ``log(1 + mean kNN distance)`` within a batch ``[n, Z]``.

    The point itself is excluded from its neighbours; ``k`` is clipped to ``n − 1``.

    Returns:
      ``[n]``.
    """
    h = jnp.asarray(h)
    if h.ndim != 2 or h.shape[0] < 2:
        raise ValueError(f"h must be [n >= 2, Z], got {h.shape}")
    check_integer("k", k, low=1)
    k = min(k, h.shape[0] - 1)
    d = _pairwise(h, h) + jnp.diag(jnp.full(h.shape[0], jnp.inf))
    knn = -jax.lax.top_k(-d, k)[0]  # [n, k] smallest distances
    return jnp.log1p(jnp.mean(knn, -1))


def disagreement_reward(predictions: ArrayLike) -> jax.Array:
    """Ensemble disagreement ``mean_z Var_e[f_e]`` of predictions ``[E, ..., Z]`` → ``[...]``."""
    p = jnp.asarray(predictions)
    if p.ndim < 2 or p.shape[0] < 2:
        raise ValueError(f"predictions must be [E >= 2, ..., Z], got {p.shape}")
    return jnp.mean(jnp.var(p, axis=0), -1)


def landmark_curiosity(
    returns: ArrayLike, starts: ArrayLike, num_landmarks: int, eps: float = 1e-3
) -> tuple[jax.Array, jax.Array]:
    """Per-landmark curiosity and the landmark sampling distribution.

    Args:
      returns: ``[n]`` explorer λ-returns of imagined rollouts.
      starts: ``[n]`` int, the landmark each rollout started from.
      num_landmarks: ``K``.
      eps: floor of the shifted curiosity (every landmark keeps some probability).

    Returns:
      ``(c [K], p [K])``: the mean return per landmark (landmarks without a rollout get the
      minimum) and ``p ∝ c − min c + ε``.

    Example:
      >>> from jaxlab.rl.drstrategy import landmark_curiosity
      >>> c, p = landmark_curiosity(jnp.array([1.0, 3.0, 2.0]), jnp.array([0, 1, 1]), 2, 1.0)
      >>> c.tolist(), p.tolist()
      ([1.0, 2.5], [0.286, 0.714])
    """
    r, s = jnp.asarray(returns), jnp.asarray(starts)
    if r.ndim != 1 or s.shape != r.shape:
        raise ValueError(f"returns and starts must be [n] of equal shape, got {r.shape}, {s.shape}")
    check_integer("num_landmarks", num_landmarks, low=1)
    s = check_labels("starts", s, num_landmarks)
    check_range("eps", eps, 0.0, low_open=True)
    onehot = jax.nn.one_hot(s, num_landmarks, dtype=r.dtype)
    count = onehot.sum(0)
    mean = (onehot.T @ r) / jnp.maximum(count, 1.0)
    lo = jnp.min(jnp.where(count > 0, mean, jnp.inf))
    c = jnp.where(count > 0, mean, lo)
    w = c - lo + eps
    return c, w / jnp.sum(w)


def temporal_distance_pairs(
    trajectories: ArrayLike, key: ArrayLike, num_positives: int = 256, neg_factor: float = 0.1
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Training pairs for the temporal-distance predictor from imagined trajectories.

    Positives: ``(h_i, h_j)`` from one trajectory with ``i ≤ j`` uniformly, target
    ``(j − i) / (H − 1)``; negatives (``⌈neg_factor · num_positives⌉`` of them): the two
    states come from different trajectories, target 1 (the maximum distance), as in LEXA
    and the reference code.

    Args:
      trajectories: ``[T, B, Z]`` (time-major, as :func:`jaxlab.rl.imagination.imagine`).
      key: PRNG key.
      num_positives: number of positive pairs.
      neg_factor: negatives per positive.

    Returns:
      ``(x [M, Z], y [M, Z], target [M])``, ``M = positives + negatives``.
    """
    tr = jnp.asarray(trajectories)
    if tr.ndim != 3 or tr.shape[0] < 2 or tr.shape[1] < 2:
        raise ValueError(f"trajectories must be [T >= 2, B >= 2, Z], got {tr.shape}")
    check_integer("num_positives", num_positives, low=1)
    check_range("neg_factor", neg_factor, 0.0)
    key = check_key("key", key)
    t_len, b, _ = tr.shape
    n_neg = int(-(-neg_factor * num_positives // 1))
    k1, k2, k3, k4, k5 = jax.random.split(key, 5)
    bi = jax.random.randint(k1, (num_positives,), 0, b)
    ti = jax.random.randint(k2, (num_positives,), 0, t_len)
    tj = jax.random.randint(k3, (num_positives,), 0, t_len)
    i, j = jnp.minimum(ti, tj), jnp.maximum(ti, tj)
    pos_t = (j - i).astype(tr.dtype) / (t_len - 1)
    b1 = jax.random.randint(k4, (n_neg,), 0, b)
    b2 = (b1 + jax.random.randint(k5, (n_neg,), 1, b)) % b  # a different trajectory
    tn = jax.random.randint(jax.random.fold_in(k5, 1), (2, n_neg), 0, t_len)
    x = jnp.concatenate([tr[i, bi], tr[tn[0], b1]], 0)
    y = jnp.concatenate([tr[j, bi], tr[tn[1], b2]], 0)
    target = jnp.concatenate([pos_t, jnp.ones(n_neg, tr.dtype)], 0)
    return x, y, target


def focused_starts(
    goals: ArrayLike,
    landmarks: ArrayLike,
    candidates: ArrayLike | None = None,
    key: ArrayLike | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Focused sampling: imagination starts at the landmark nearest to each goal latent.

    Args:
      goals: ``h_g: [n, Z]``.
      landmarks: ``ĥ_l: [K, Z]``.
      candidates: optional ``[m, Z]`` real latents (e.g. a replay batch). Without ``key``,
        each start is the candidate nearest to the chosen landmark ``ĥ_{l*}`` (a visited
        state rather than the decoded code, which may lie off the latent manifold); with
        ``key``, a uniformly drawn candidate whose own nearest landmark is ``l*`` (a state
        "of that landmark"), or the nearest candidate when the batch has none.
      key: optional PRNG key (see ``candidates``).

    Returns:
      ``(starts [n, Z], landmark index [n])``.

    Example:
      >>> from jaxlab.rl.drstrategy import focused_starts
      >>> s, i = focused_starts(jnp.array([[0.0, 2.0]]), jnp.eye(2), jnp.array([[0.0, 0.8]]))
      >>> s.tolist(), i.tolist()
      ([[0.0, 0.8]], [1])
    """
    lm, goals = jnp.asarray(landmarks), jnp.asarray(goals)
    if lm.ndim != 2:
        raise ValueError(f"landmarks must be [K, Z], got {lm.shape}")
    if goals.ndim != 2 or goals.shape[1] != lm.shape[1]:
        raise ValueError(f"goals must be [n, {lm.shape[1]}], got {goals.shape}")
    idx = nearest_landmark(goals, lm)
    if candidates is None:
        return lm[idx], idx
    cand = jnp.asarray(candidates)
    if cand.ndim != 2 or cand.shape[1] != lm.shape[1]:
        raise ValueError(f"candidates must be [m, {lm.shape[1]}], got {cand.shape}")
    if key is not None:
        key = check_key("key", key)
    near = nearest_landmark(lm[idx], cand)  # for each chosen landmark, the nearest candidate
    if key is None:
        return cand[near], idx
    match = nearest_landmark(cand, lm)[None, :] == idx[:, None]  # [n, m]
    pick = jax.random.categorical(key, jnp.where(match, 0.0, -jnp.inf), axis=1)
    return cand[jnp.where(match.any(1), pick, near)], idx
