"""LGL: the class-restricted loss against the reference's subset-and-remap, the stages."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.curriculum import EpochInputs, lgl, lgl_loss

LOGITS = np.array([[1.0, 2.0, -1.0, 0.5], [0.3, -0.2, 2.5, 1.0], [-1.0, 0.0, 0.0, 3.0]], np.float32)


def reference_loss(logits, labels, classes):
    """CE(outputs[:, classes], label remapped to its position in ``classes``)."""
    out = []
    for z, y in zip(logits, labels, strict=True):
        sub = z[classes].astype(np.float64)
        pos = list(classes).index(y)
        out.append(np.log(np.exp(sub).sum()) - sub[pos])
    return np.array(out)


@pytest.mark.parametrize("classes", [[0, 1, 2, 3], [3, 1], [2, 0, 3]])
def test_loss_matches_subset_and_remap(classes):
    mask = np.isin(np.arange(4), classes)
    labels = np.array([c for c in [1, 2, 3, 0] if c in classes][:1] * 3)
    got = jax.jit(lgl_loss)(LOGITS, labels, mask)
    np.testing.assert_allclose(got, reference_loss(LOGITS, labels, classes), rtol=1e-5)


def test_gradient_ignores_classes_outside_the_set():
    mask = jnp.array([True, False, True, False])
    g = jax.grad(lambda z: lgl_loss(z, jnp.array([0, 2, 0]), mask).sum())(jnp.asarray(LOGITS))
    assert np.all(np.isfinite(g)) and np.all(np.asarray(g)[:, [1, 3]] == 0)
    with pytest.raises(ValueError, match="class_mask"):
        lgl_loss(LOGITS, np.zeros(3, int), np.ones(3, bool))


def test_stages_add_classes_and_select_their_samples():
    labels = np.repeat(np.arange(10), 5)
    c = lgl(start_rate=0.1, grow_rate=0.3, grow_interval=2)
    state = c.data_prepare(50, 10, jax.random.key(0))
    prev, counts = np.zeros(10, bool), []
    for e in range(6):
        state = c.data_curriculum(state, e, EpochInputs(labels))
        mask = np.asarray(state.extra["classes"]) > 0
        assert np.all(mask[prev])  # classes are only ever added
        np.testing.assert_array_equal(state.weights, mask[labels])
        prev = mask
        counts.append(int(mask.sum()))
    assert counts == [4, 4, 7, 7, 10, 10]
    assert c.vision_only and not c.needs_losses


@pytest.mark.parametrize("strategy,expected", [("similar", 2), ("dissimilar", 3)])
def test_similarity_strategies_use_entropy(strategy, expected):
    # Class 0 is in use; the model is sure about class-2 samples (low entropy over the
    # classes in use, here just {0, 1}), unsure about class-3 samples.
    labels = np.array([0, 1, 2, 2, 3, 3])
    logits = np.zeros((6, 4))
    logits[2:4, 0] = 8.0
    c = lgl(start_rate=0.25, grow_rate=0.25, grow_interval=1, strategy=strategy)
    state = c.data_prepare(6, 4, jax.random.key(0))
    state = state._replace(extra={**state.extra, "classes": np.array([1, 1, 0, 0], np.float32)})
    state = c.data_curriculum(state, 1, EpochInputs(labels, np.zeros(6), logits))
    assert np.flatnonzero(state.extra["classes"]).tolist() == sorted([0, 1, expected])


def test_bad_arguments():
    with pytest.raises(ValueError, match="strategy"):
        lgl(strategy="greedy")
    with pytest.raises(ValueError, match="grow_rate"):
        lgl(grow_rate=0.0)


def test_vmap_over_class_sets():
    masks = np.array([[1, 1, 1, 1], [1, 0, 1, 0], [0, 1, 1, 1]], bool)
    labels = np.array([2, 2, 2])
    got = jax.vmap(lgl_loss, in_axes=(None, None, 0))(LOGITS, labels, masks)
    for m, row in zip(masks, np.asarray(got), strict=True):
        np.testing.assert_allclose(
            row, reference_loss(LOGITS, labels, np.flatnonzero(m)), rtol=1e-5
        )
