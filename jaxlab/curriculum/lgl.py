"""Local-to-global learning (LGL): train on a few classes first, add classes in stages.

Vision-only, as in CurBench (the paper and the benchmark apply it to image classification).
Each stage trains on the samples whose label is among the selected classes, with the
softmax restricted to those classes; the class set grows every ``grow_interval`` epochs.
Shapes stay static: the class set is a mask ``[C]`` in the curriculum state, the samples of
other classes get weight 0.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_labels, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState, EpochInputs, masked_mean

STRATEGIES = ("random", "similar", "dissimilar")


def lgl_loss(logits: ArrayLike, labels: ArrayLike, class_mask: ArrayLike) -> jax.Array:
    """Cross-entropy with the softmax restricted to the selected classes.

    ``ℓ_i = log Σ_{c∈S} exp z_{ic} − z_{i y_i}`` for the class set ``S`` (``class_mask``):
    the reference's ``CE(outputs[:, S], remapped labels)`` without re-indexing.

    Args:
      logits: ``[b, C]``.
      labels: ``[b]`` integer labels (rows whose label is outside ``S`` are meaningless;
        the curriculum gives them weight 0).
      class_mask: ``[C]`` boolean, ``True`` for the classes in ``S`` (at least one).

    Returns:
      ``[b]`` per-sample losses.

    Example:
      >>> from jaxlab.curriculum import lgl_loss
      >>> z = jnp.array([[0.0, 0.0, 5.0]])
      >>> round(float(lgl_loss(z, jnp.array([0]), jnp.array([True, True, False]))[0]), 4)
      0.6931

    References:
      Cheng, Tao, Wang, Li, Local to Global Learning: Gradually Adding Classes for
      Training Deep Neural Networks, CVPR 2019.
    """
    if jnp.ndim(logits) != 2:
        raise ValueError(f"logits must be [b, C], got shape {jnp.shape(logits)}")
    check_labels("labels", labels, jnp.shape(logits)[-1])
    logits, labels = jnp.asarray(logits), jnp.asarray(labels)
    mask = jnp.asarray(class_mask, bool)
    if logits.ndim != 2 or labels.shape != logits.shape[:1] or mask.shape != logits.shape[1:]:
        raise ValueError(
            f"need logits [b, C], labels [b], class_mask [C]; got {logits.shape}, "
            f"{labels.shape}, {mask.shape}"
        )
    rows = jnp.broadcast_to(mask[None, :], logits.shape)
    log_norm = jax.nn.logsumexp(logits, axis=-1, where=rows)
    return log_norm - jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]


def class_rate(epoch: int, start_rate: float, grow_rate: float, grow_interval: int) -> float:
    """The fraction of classes used at ``epoch`` (from 0): ``min(1, ρ₀ + g·(⌊e/k⌋ + 1))``.

    Example:
      >>> from jaxlab.curriculum.lgl import class_rate
      >>> [round(class_rate(e, 0.1, 0.3, 2), 2) for e in range(6)]
      [0.4, 0.4, 0.7, 0.7, 1.0, 1.0]
    """
    return min(1.0, start_rate + grow_rate * (epoch // grow_interval + 1))


def class_entropies(
    logits: np.ndarray, labels: np.ndarray, class_mask: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """Mean entropy of the softmax over the selected classes, on each candidate class's
    samples (``[len(candidates)]``; LGL's similarity: a low entropy, a similar class)."""
    z = np.where(class_mask[None, :], logits, -np.inf)
    z = z - z.max(-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    ent = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
    return np.array(
        [ent[labels == c].mean() if np.any(labels == c) else np.inf for c in candidates]
    )


def lgl(
    start_rate: float = 0.1,
    grow_rate: float = 0.3,
    grow_interval: int = 20,
    strategy: str = "random",
) -> Curriculum:
    """LGL as a curriculum (vision-only; defaults: the reference's, for 200 epochs).

    At ``epoch`` the first ``⌈C · class_rate(epoch)⌉`` classes are in use: the first ones
    drawn at random, later ones at random (``"random"``), or those whose samples the
    current model (restricted to the classes in use) is most (``"similar"``) or least
    (``"dissimilar"``) confident about. The trainer trains only on samples of those
    classes with :func:`lgl_loss`. The reference also restarts the learning-rate schedule
    at each stage; with a constant learning rate there is nothing to restart.

    Example:
      >>> from jaxlab.curriculum import EpochInputs, lgl
      >>> c = lgl(start_rate=0.0, grow_rate=0.5, grow_interval=1)
      >>> s = c.data_prepare(4, 2, jax.random.key(0))
      >>> s = c.data_curriculum(s, 0, EpochInputs(np.array([0, 1, 1, 0])))
      >>> int(s.weights.sum()), int(s.extra["classes"].sum())
      (2, 1)
    """
    check_range("start_rate", start_rate, 0.0, 1.0)
    check_range("grow_rate", grow_rate, 0.0, low_open=True)
    check_integer("grow_interval", grow_interval, low=1)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")

    def data_prepare(num_samples, num_classes, key):
        seed = jax.random.randint(key, (), 0, 2**31 - 1)
        return CurriculumState(
            weights=np.ones(num_samples, np.float32),
            extra={"classes": np.zeros(num_classes, np.float32), "seed": seed},
        )

    def data_curriculum(state, epoch, inputs: EpochInputs):
        if inputs is None:
            raise ValueError("lgl needs the training labels (EpochInputs)")
        labels = np.asarray(inputs.labels)
        mask = np.asarray(state.extra["classes"]) > 0
        num_classes = len(mask)
        want = max(
            1,
            math.ceil(num_classes * class_rate(epoch, start_rate, grow_rate, grow_interval) - 1e-9),
        )
        have = int(mask.sum())
        if have < want:
            rng = np.random.default_rng([int(state.extra["seed"]), epoch])
            remain = np.flatnonzero(~mask)
            if have == 0 or strategy == "random":
                new = rng.choice(remain, want - have, replace=False)
            else:
                if inputs.logits is None:
                    raise ValueError(f"lgl strategy {strategy!r} needs the model's logits")
                ent = class_entropies(np.asarray(inputs.logits), labels, mask, remain)
                order = np.argsort(ent, kind="stable")
                new = remain[
                    order[: want - have]
                    if strategy == "similar"
                    else order[len(order) - (want - have) :]
                ]
            mask = mask.copy()
            mask[new] = True
        weights = mask[labels].astype(np.float32)
        if not weights.any():  # the chosen classes have no samples (imbalance): use all
            mask = np.ones_like(mask)
            weights = np.ones_like(weights)
        return state._replace(
            weights=weights, extra={**state.extra, "classes": mask.astype(np.float32)}
        )

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del losses
        w = jnp.take(jnp.asarray(state.weights), indices)
        per_sample = lgl_loss(logits, labels, state.extra["classes"] > 0)
        return masked_mean(w * per_sample, ctx.valid), state

    return Curriculum(
        name="lgl",
        data_prepare=data_prepare,
        data_curriculum=data_curriculum,
        loss_curriculum=loss_curriculum,
        needs_losses=strategy != "random",
        epoch_inputs=True,
        vision_only=True,
    )
