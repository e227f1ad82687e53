"""Coarse-to-fine curriculum (C2F): learn clusters of confusable classes, then split them.

Vision-only, as in CurBench. A teacher's confusion matrix on the training set defines a
distance between classes; affinity (Borůvka-style single-linkage) clustering merges
classes level by level until at most ``K`` clusters remain; training walks the hierarchy
from the coarsest level to the original classes. The coarse tasks use the model's own
``C``-way head: the probability of a cluster is the sum of its classes' softmax
probabilities (the reference instead re-initialises a smaller linear head at each
stage), so every stage has the same shapes and the knowledge of a stage carries over.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_labels
from jaxlab.curriculum.base import Curriculum, CurriculumState, EpochInputs, masked_mean


def coarse_cross_entropy(logits: ArrayLike, labels: ArrayLike, clusters: ArrayLike) -> jax.Array:
    """Cross-entropy of the cluster of each label: ``−log Σ_{c: k(c) = k(y_i)} softmax(z_i)_c``.

    Args:
      logits: ``[b, C]`` fine-class logits.
      labels: ``[b]`` fine labels.
      clusters: ``[C]`` integer cluster id ``k(c)`` of each class (the identity map gives
        the ordinary cross-entropy).

    Returns:
      ``[b]`` per-sample losses.

    Example:
      >>> from jaxlab.curriculum import coarse_cross_entropy
      >>> z = jnp.zeros((1, 4))
      >>> round(float(coarse_cross_entropy(z, jnp.array([0]), jnp.array([0, 0, 1, 1]))[0]), 4)
      0.6931

    References:
      Stretcu, Platanios, Mitchell, Póczos, Coarse-to-Fine Curriculum Learning,
      arXiv:2106.04072, 2021.
    """
    if jnp.ndim(logits) != 2:
        raise ValueError(f"logits must be [b, C], got shape {jnp.shape(logits)}")
    check_labels("labels", labels, jnp.shape(logits)[-1])
    logits, labels, clusters = jnp.asarray(logits), jnp.asarray(labels), jnp.asarray(clusters)
    if logits.ndim != 2 or labels.shape != logits.shape[:1] or clusters.shape != logits.shape[1:]:
        raise ValueError(
            f"need logits [b, C], labels [b], clusters [C]; got {logits.shape}, "
            f"{labels.shape}, {clusters.shape}"
        )
    same = clusters[None, :] == jnp.take(clusters, labels)[:, None]  # [b, C]
    return jax.nn.logsumexp(logits, axis=-1) - jax.nn.logsumexp(logits, axis=-1, where=same)


def confusion_distances(labels: ArrayLike, predictions: ArrayLike, num_classes: int) -> np.ndarray:
    """``D = 1 − P``: ``P[a, b]`` the fraction of class-``a`` samples predicted as ``b ≠ a``
    among all of class ``a``'s errors (diagonal 0; rows without errors stay 0).

    Example:
      >>> from jaxlab.curriculum.c2f import confusion_distances
      >>> confusion_distances(np.array([0, 0, 1]), np.array([1, 1, 1]), 2).tolist()
      [[1.0, 0.0], [1.0, 1.0]]
    """
    check_labels("labels", labels, num_classes)
    check_labels("predictions", predictions, num_classes)
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.shape != predictions.shape or labels.ndim != 1:
        raise ValueError(
            f"labels and predictions must be [N], got {labels.shape}, {predictions.shape}"
        )
    conf = np.zeros((num_classes, num_classes))
    np.add.at(conf, (labels, predictions), 1.0)
    np.fill_diagonal(conf, 0.0)
    total = conf.sum(axis=1, keepdims=True)
    conf = np.divide(conf, total, out=np.zeros_like(conf), where=total > 0)
    return 1.0 - conf


def affinity_clustering(distances: ArrayLike, max_clusters: int) -> np.ndarray:
    """Levels of an affinity clustering of ``C`` classes, finest first: ``[L, C]`` ids.

    Level 0 is the identity. Each round links every cluster to the class outside it that
    is nearest to one of its members (``min_{a∈A, b∉A} D[a, b]``; ties: the last pair in
    row-major order, as the reference), merges all linked clusters (union-find), and
    numbers the new clusters in order of their smallest class; rounds continue until at
    most ``max_clusters`` clusters remain.

    Example:
      >>> from jaxlab.curriculum.c2f import affinity_clustering
      >>> d = 1.0 - np.array([[0, .9, .1, 0], [.9, 0, 0, .1], [.1, 0, 0, .9], [0, .1, .9, 0]])
      >>> affinity_clustering(d, 2).tolist()
      [[0, 1, 2, 3], [0, 0, 1, 1]]
    """
    dist = np.asarray(distances, np.float64)
    c = dist.shape[0]
    if dist.shape != (c, c) or c < 1:
        raise ValueError(f"distances must be [C, C], got shape {dist.shape}")
    if max_clusters < 1:
        raise ValueError(f"max_clusters must be >= 1, got {max_clusters}")
    levels = [np.arange(c)]
    while levels[-1].max() + 1 > max_clusters:
        ids = levels[-1]
        parent = np.arange(c)

        def find(a, parent=parent):
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        outside = ids[:, None] != ids[None, :]
        masked = np.where(outside, dist, np.inf)
        for k in range(ids.max() + 1):
            rows = masked[ids == k]  # members' distances to other clusters
            members = np.flatnonzero(ids == k)
            flat = rows.ravel()
            last = len(flat) - 1 - np.argmin(flat[::-1])  # the last minimum, row-major
            a, b = members[last // c], last % c
            parent[find(a)] = find(b)
        roots = np.array([find(a) for a in range(c)])
        _, new_ids = np.unique(roots, return_inverse=True)
        # number clusters by their smallest class
        first: dict[int, int] = {}
        for a in range(c):
            first.setdefault(new_ids[a], len(first))
        levels.append(np.array([first[new_ids[a]] for a in range(c)]))
    return np.stack(levels)


def c2f_stage(epoch: int, num_epochs: int, level_sizes: ArrayLike) -> int:
    """The hierarchy level trained at ``epoch`` (from 0): coarsest first, each level for a
    share of the epochs proportional to its number of clusters (rounded; at least one
    epoch per level while ``num_epochs`` allows).

    Example:
      >>> from jaxlab.curriculum.c2f import c2f_stage
      >>> [c2f_stage(e, 18, [10, 5, 3]) for e in (0, 2, 3, 7, 8, 17)]
      [2, 2, 1, 1, 0, 0]
    """
    sizes = np.asarray(level_sizes, np.float64)[::-1]  # coarsest first
    last = len(sizes) - 1
    ends = np.round(np.cumsum(sizes) * num_epochs / sizes.sum())
    ends = np.clip(ends, np.arange(1, len(sizes) + 1), num_epochs - (last - np.arange(last + 1)))
    stage = int(np.searchsorted(ends, epoch, side="right"))
    return len(sizes) - 1 - min(stage, len(sizes) - 1)


def c2f(max_clusters: int = 3) -> Curriculum:
    """C2F as a curriculum (vision-only; default ``K = 3``: the reference's).

    Needs a teacher's logits on the training set (the task's ``teacher_logits``; the
    reference loads a baseline model trained on the same data). ``data_curriculum``
    builds :func:`confusion_distances` from the teacher's predictions and this run's
    labels, the levels of :func:`affinity_clustering`, and sets this epoch's class →
    cluster map (:func:`c2f_stage`); the loss hook is :func:`coarse_cross_entropy`.
    Stage lengths are cumulative shares proportional to each level's cluster count, at
    least one epoch each (the reference's boundaries are ``⌊n_level · E / Σ n⌋``, not
    cumulative, so a short run may skip its coarse stages).

    Example:
      >>> from jaxlab.curriculum import c2f
      >>> c2f().vision_only
      True
    """
    if max_clusters < 1:
        raise ValueError(f"max_clusters must be >= 1, got {max_clusters}")

    def data_prepare(num_samples, num_classes, key):
        del key
        return CurriculumState(
            weights=np.ones(num_samples, np.float32),
            extra={"clusters": np.arange(num_classes, dtype=np.int32), "epochs": np.int32(0)},
        )

    def model_prepare(state, params, num_epochs):
        del params
        return state._replace(extra={**state.extra, "epochs": np.int32(num_epochs)})

    def data_curriculum(state, epoch, inputs: EpochInputs):
        if inputs is None or inputs.teacher_logits is None:
            raise ValueError("c2f needs the teacher's logits (the task's teacher_logits)")
        num_classes = len(state.extra["clusters"])
        if max_clusters > num_classes:
            raise ValueError(f"max_clusters {max_clusters} exceeds the {num_classes} classes")
        dist = confusion_distances(inputs.labels, np.argmax(inputs.teacher_logits, -1), num_classes)
        levels = affinity_clustering(dist, max_clusters)
        level = c2f_stage(epoch, int(state.extra["epochs"]), levels.max(axis=1) + 1)
        return state._replace(extra={**state.extra, "clusters": levels[level].astype(np.int32)})

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del losses, indices
        per_sample = coarse_cross_entropy(logits, labels, state.extra["clusters"])
        return masked_mean(per_sample, ctx.valid), state

    return Curriculum(
        name="c2f",
        data_prepare=data_prepare,
        model_prepare=model_prepare,
        data_curriculum=data_curriculum,
        loss_curriculum=loss_curriculum,
        uses_teacher=True,
        epoch_inputs=True,
        vision_only=True,
    )
