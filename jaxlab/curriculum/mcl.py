"""Minimax curriculum learning (MCL): a growing, hard and diverse subset, diversity annealed.

Zhou & Bilmes pose curriculum learning as ``min_w max_{A ⊆ V, |A| ≤ k} Σ_{i∈A} ℓ_i(w) + λ F(A)``
(Eq. (1) of the paper): the teacher picks a hard (large loss) and diverse (large
submodular ``F``) subset, the size ``k`` grows and the diversity weight ``λ`` decays as
training proceeds. CurBench, whose protocol we follow, relaxes the inner maximisation to
sampling ``k`` samples without replacement with probability ``∝ ℓ_i + λ c_i``, where
``c_i`` is a modular "centrality" of the sample's (warped) features — the sum of its
feature inner products with the whole set. The selection runs on the host between
epochs; the loss is the plain mean. Applies to every domain (CurBench runs it on images,
text and graphs).
"""

from __future__ import annotations

import math

import jax
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_range, has_nan, numpy_seed
from jaxlab.curriculum.base import Curriculum, CurriculumState, EpochInputs, check_weights


def mcl_centrality(
    features: ArrayLike, alpha: float = 2.0, beta: float = 0.75, gamma: float = 0.9
) -> np.ndarray:
    """Centrality ``c_i ∝ Σ_j ⟨f̃_i, f̃_j⟩`` of warped non-negative features (sums to 1).

    Each column of ``features`` is scaled to ``[0, 1]`` by its maximum ``m``, warped by
    ``s(f) = 1 / (1 + (f^{1/log₂β} − 1)^α)`` (an S-curve through ``s(1) = 1``; ``s(0) = 0``)
    and raised to ``γ``, and scaled back by ``m``: ``f̃ = m · s(f/m)^γ``. The centrality of
    sample ``i`` is its row sum of the Gram matrix, ``f̃_i · Σ_j f̃_j``, normalised to sum 1
    (the reference's ``fe_central_op`` with its default ``fe_alpha``/``fe_beta``/``fe_gamma``).
    Features are clipped to ``[1e-10, 1e10]`` first. Host-side numpy (a per-epoch score).

    Args:
      features: ``[N, d]`` non-negative features (we use the model's softmax outputs).
      alpha, beta, gamma: the warp's ``α > 0``, ``β ∈ (0, 1)`` and the exponent ``γ > 0``.

    Returns:
      ``[N]`` float64 centralities, non-negative, summing to 1.

    Example:
      >>> from jaxlab.curriculum import mcl_centrality
      >>> np.round(mcl_centrality(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])), 3).tolist()
      [0.4, 0.4, 0.2]

    References:
      Zhou, Bilmes, Minimax Curriculum Learning: Machine Teaching with Desirable
      Difficulties and Scheduled Diversity, ICLR 2018.
    """
    f = np.asarray(features, np.float64)
    if f.ndim != 2 or f.shape[0] == 0:
        raise ValueError(f"features must be [N, d] with N >= 1, got shape {f.shape}")
    if alpha <= 0 or not 0 < beta < 1 or gamma <= 0:
        raise ValueError(f"need alpha > 0, beta in (0, 1), gamma > 0; got {alpha}, {beta}, {gamma}")
    f = np.clip(f, 1e-10, 1e10)
    top = f.max(axis=0)
    f = f / top
    warped = np.zeros_like(f)
    pos = f > 1e-30
    warped[pos] = 1.0 / (1.0 + (f[pos] ** (1.0 / math.log2(beta)) - 1.0) ** alpha)
    f = warped**gamma * top
    c = f @ f.sum(axis=0)  # row sums of the Gram matrix f fᵀ, without forming it
    return c / c.sum()


def mcl_schedule(
    epoch: int,
    num_samples: int,
    num_epochs: int,
    schedule_epochs: int,
    lam: float,
    min_lam: float,
    gamma: float,
    initial_size: float,
) -> tuple[int, float]:
    """``(k_e, λ_e)``: the subset size and diversity weight at ``epoch`` (from 0).

    Every ``schedule_epochs`` epochs (an "episode") the size grows by
    ``δ = ⌊(N − k₀)/⌊E/s⌋⌋`` and ``λ`` decays by ``(1 − γ)``, floored at ``λ_min``:
    ``k_e = min(k₀ + δ·⌊e/s⌋, N)``, ``λ_e = max(λ₀ (1 − γ)^{⌊e/s⌋}, λ_min)`` with
    ``k₀ = ⌊initial_size · N⌋``.

    Example:
      >>> from jaxlab.curriculum.mcl import mcl_schedule
      >>> mcl_schedule(25, 1000, 200, 20, 1.0, 0.2, 0.1, 0.1)
      (190, 0.9)
    """
    episodes = max(1, num_epochs // schedule_epochs)
    k0 = int(initial_size * num_samples)
    delta = int((num_samples - k0) / episodes)
    done = epoch // schedule_epochs
    size = min(k0 + delta * done, num_samples)
    return max(1, size), max(lam * (1.0 - gamma) ** done, min_lam)


def mcl_sample(
    losses: ArrayLike, centrality: ArrayLike, size: int, lam: float, key: jax.Array
) -> np.ndarray:
    """``size`` distinct indices drawn with probability ``∝ ℓ_i + λ c_i`` (host-side).

    ``key`` seeds a numpy generator (:func:`jaxlab._checks.numpy_seed`).

    Example:
      >>> from jaxlab.curriculum.mcl import mcl_sample
      >>> mcl_sample(np.array([0.0, 5.0, 0.0]), np.zeros(3), 1, 1.0,
      ...            jax.random.key(0)).tolist()
      [1]
    """
    check_range("lam", lam, 0.0)
    if has_nan(losses) or has_nan(centrality):
        raise ValueError("losses and centrality must not hold NaN (no sampling weight)")
    score = np.maximum(np.asarray(losses, np.float64), 0.0) + lam * np.asarray(centrality)
    n = len(score)
    if not 1 <= size <= n:
        raise ValueError(f"size must be in [1, {n}], got {size}")
    positive = np.count_nonzero(score > 0)
    if positive < size:  # too few positive scores for a draw without replacement
        score = score + 1e-12
    rng = np.random.default_rng(numpy_seed("key", key))
    return rng.choice(n, size, replace=False, p=score / score.sum())


def mcl(
    schedule_epochs: int = 20,
    warm_epochs: int = 5,
    lam: float = 1.0,
    min_lam: float = 0.2,
    gamma: float = 0.1,
    initial_size: float = 0.1,
    alpha: float = 2.0,
    beta: float = 0.75,
    feature_gamma: float = 0.9,
) -> Curriculum:
    """MCL as a curriculum (CurBench's relaxation; defaults: the reference's, 200 epochs).

    ``data_curriculum`` gets the current model's losses and logits (``epoch_inputs``).
    At the start of every episode (``epoch % schedule_epochs == 0``) it recomputes the
    centralities :func:`mcl_centrality` of the model's softmax outputs; during the first
    ``warm_epochs`` epochs it trains on the whole set, afterwards on
    :func:`mcl_sample` of ``k_e`` samples (:func:`mcl_schedule`). Differences from the
    reference: the features are the model's softmax outputs (the reference takes the
    penultimate layer for images, the logits for text), the losses are the current
    model's on every sample (the reference keeps each sample's loss from when it was last
    trained on), and there is no extra "pre-training" epoch at each episode's start.

    Example:
      >>> from jaxlab.curriculum import EpochInputs, mcl
      >>> c = mcl(schedule_epochs=2, warm_epochs=1, initial_size=0.5)
      >>> s = c.model_prepare(c.data_prepare(4, 2, jax.random.key(0)), None, 4)
      >>> inputs = EpochInputs(np.zeros(4, int), np.array([0.1, 3.0, 0.2, 2.0]),
      ...                      np.zeros((4, 2)))
      >>> int(c.data_curriculum(s, 1, inputs).weights.sum())
      2
    """
    check_range("feature_gamma", feature_gamma, 0.0, low_open=True)
    check_range("alpha", alpha, 0.0, low_open=True)
    check_range("beta", beta, 0.0, 1.0, low_open=True, high_open=True)
    if schedule_epochs < 1 or warm_epochs < 0:
        raise ValueError(
            f"need schedule_epochs >= 1 and warm_epochs >= 0, got {schedule_epochs}, {warm_epochs}"
        )
    if not 0 < initial_size <= 1 or not 0 <= gamma < 1 or lam < 0 or min_lam < 0:
        raise ValueError("need initial_size in (0, 1], gamma in [0, 1), lam, min_lam >= 0")
    mcl_centrality(np.ones((1, 1)), alpha, beta, feature_gamma)  # validates the warp

    def data_prepare(num_samples, num_classes, key):
        del num_classes
        seed = jax.random.randint(key, (), 0, 2**31 - 1)
        return CurriculumState(
            weights=np.ones(num_samples, np.float32),
            extra={
                "centrality": np.zeros(num_samples, np.float32),
                "seed": seed,
                "epochs": np.int32(0),
            },
        )

    def model_prepare(state, params, num_epochs):
        del params
        return state._replace(extra={**state.extra, "epochs": np.int32(num_epochs)})

    def data_curriculum(state, epoch, inputs: EpochInputs):
        if inputs is None or inputs.losses is None or inputs.logits is None:
            raise ValueError("mcl needs the model's losses and logits (EpochInputs)")
        n = len(inputs.losses)
        centrality = np.asarray(state.extra["centrality"])
        if epoch % schedule_epochs == 0:
            z = inputs.logits - inputs.logits.max(-1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
            centrality = mcl_centrality(probs, alpha, beta, feature_gamma).astype(np.float32)
        extra = {**state.extra, "centrality": centrality}
        if epoch < warm_epochs:
            return state._replace(weights=np.ones(n, np.float32), extra=extra)
        size, lam_e = mcl_schedule(
            epoch, n, int(state.extra["epochs"]), schedule_epochs, lam, min_lam, gamma, initial_size
        )
        key = jax.random.fold_in(jax.random.key(int(state.extra["seed"])), epoch)
        weights = np.zeros(n, np.float32)
        weights[mcl_sample(inputs.losses, centrality, size, lam_e, key)] = 1.0
        return state._replace(weights=check_weights(weights, n, "mcl weights"), extra=extra)

    return Curriculum(
        name="mcl",
        data_prepare=data_prepare,
        model_prepare=model_prepare,
        data_curriculum=data_curriculum,
        needs_losses=True,
        epoch_inputs=True,
    )
