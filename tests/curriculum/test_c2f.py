"""C2F: the coarse loss, the confusion distances and the clustering against numpy loops."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.curriculum import (
    EpochInputs,
    affinity_clustering,
    c2f,
    coarse_cross_entropy,
    confusion_distances,
)
from jaxlab.curriculum.c2f import c2f_stage

LOGITS = np.array([[1.0, 2.0, -1.0, 0.5], [0.3, -0.2, 2.5, 1.0], [-1.0, 0.0, 0.0, 3.0]], np.float32)


def test_coarse_loss_matches_summed_probabilities():
    clusters, labels = np.array([0, 1, 0, 1]), np.array([2, 1, 0])
    p = np.exp(LOGITS) / np.exp(LOGITS).sum(1, keepdims=True)
    expected = [
        -np.log(sum(p[i, c] for c in range(4) if clusters[c] == clusters[y]))
        for i, y in enumerate(labels)
    ]
    got = jax.jit(coarse_cross_entropy)(LOGITS, labels, clusters)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # The identity map is the ordinary cross-entropy; gradients stay finite.
    np.testing.assert_allclose(
        coarse_cross_entropy(LOGITS, labels, np.arange(4)),
        optax.softmax_cross_entropy_with_integer_labels(LOGITS, labels),
        rtol=1e-5,
    )
    g = jax.grad(lambda z: coarse_cross_entropy(z, labels, clusters).sum())(jnp.asarray(LOGITS))
    assert np.all(np.isfinite(g))
    with pytest.raises(ValueError, match="clusters"):
        coarse_cross_entropy(LOGITS, labels, np.arange(3))


def test_confusion_distances_match_counting_loop():
    rng = np.random.default_rng(0)
    labels, preds = rng.integers(0, 4, 200), rng.integers(0, 4, 200)
    labels[labels == 3] = 2  # class 3 has no samples: its row stays at distance 1
    d = confusion_distances(labels, preds, 4)
    for a, b in itertools.product(range(4), range(4)):
        errors = sum(1 for y, q in zip(labels, preds, strict=True) if y == a and q != a)
        hits = sum(1 for y, q in zip(labels, preds, strict=True) if y == a and q == b)
        expected = 1.0 if a == b or errors == 0 else 1.0 - hits / errors
        assert d[a, b] == pytest.approx(expected)


def reference_clustering(dist, k):
    """Set-based rounds: each cluster links to the nearest outside class (last minimum
    in row-major order), linked clusters merge, ids follow the smallest class."""
    c = len(dist)
    clusters = [{i} for i in range(c)]
    levels = [list(range(c))]
    while len(clusters) > k:
        links = []
        for members in clusters:
            best, pair = np.inf, None
            for a in sorted(members):
                for b in range(c):
                    if b not in members and dist[a][b] <= best:
                        best, pair = dist[a][b], b
            links.append(pair)
        merged = [set(m) for m in clusters]
        for i, b in enumerate(links):  # union the linked clusters, to a fixed point
            j = next(t for t, m in enumerate(clusters) if b in m)
            merged[i] |= clusters[j]
            merged[j] |= clusters[i]
        changed = True
        while changed:
            changed = False
            for x, y in itertools.combinations(range(len(merged)), 2):
                if merged[x] & merged[y] and merged[x] != merged[y]:
                    merged[x] = merged[y] = merged[x] | merged[y]
                    changed = True
        unique = []
        for m in merged:
            if m not in unique:
                unique.append(m)
        clusters = sorted(unique, key=min)
        levels.append([next(t for t, m in enumerate(clusters) if i in m) for i in range(c)])
    return np.array(levels)


@pytest.mark.parametrize("seed,k", [(0, 3), (1, 2), (2, 4), (3, 1)])
def test_clustering_matches_set_based_reference(seed, k):
    dist = np.random.default_rng(seed).uniform(size=(10, 10))
    got = affinity_clustering(dist, k)
    np.testing.assert_array_equal(got, reference_clustering(dist, k))
    assert got[-1].max() + 1 <= k and np.all(np.diff(got.max(axis=1)) < 0)


def test_stages_walk_from_coarse_to_fine():
    assert [c2f_stage(e, 18, [10, 5, 3]) for e in range(18)] == [2] * 3 + [1] * 5 + [0] * 10
    assert [c2f_stage(e, 4, [10, 4, 2]) for e in range(4)] == [2, 1, 0, 0]  # ≥ 1 epoch each
    assert [c2f_stage(e, 2, [10, 4, 2]) for e in range(2)] == [1, 0]  # the fine level last
    labels = np.repeat(np.arange(4), 10)
    teacher = np.eye(4)[np.array([0, 1, 2, 3])[labels]] * 5.0
    for a, b in ((0, 1), (1, 0), (2, 3), (3, 2)):  # 0↔1 and 2↔3 confused
        teacher[labels == a, b] = 6.0
    c = c2f(max_clusters=2)
    state = c.model_prepare(c.data_prepare(40, 4, jax.random.key(0)), None, 6)
    maps = [
        c.data_curriculum(state, e, EpochInputs(labels, teacher_logits=teacher))
        .extra["clusters"]
        .tolist()
        for e in range(6)
    ]
    assert maps[0] == [0, 0, 1, 1] and maps[-1] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="teacher"):
        c.data_curriculum(state, 0, EpochInputs(labels))
    with pytest.raises(ValueError, match="max_clusters"):
        c2f(max_clusters=0)


def test_vmap_and_gradient_of_the_coarse_loss():
    from jax.test_util import check_grads

    maps = np.array([[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 0, 0]])
    labels = np.array([2, 1, 0])
    got = jax.vmap(coarse_cross_entropy, in_axes=(None, None, 0))(LOGITS, labels, maps)
    for m, row in zip(maps, np.asarray(got), strict=True):
        np.testing.assert_allclose(row, coarse_cross_entropy(LOGITS, labels, m), atol=1e-6)
    np.testing.assert_allclose(got[2], 0.0, atol=1e-6)  # one cluster: nothing to learn
    with jax.enable_x64(True):
        check_grads(
            lambda z: coarse_cross_entropy(z, labels, maps[1]),
            (np.asarray(LOGITS, np.float64),),
            order=1,
            modes=("rev",),
        )
