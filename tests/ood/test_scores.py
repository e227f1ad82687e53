"""OOD scores against scikit-learn / numpy references."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import logsumexp, softmax
from sklearn.neighbors import NearestNeighbors

from jaxlab.ood import (
    energy_score,
    ensemble_score,
    fit_class_gaussians,
    knn_score,
    mahalanobis_score,
    msp_score,
    standardize_scores,
)
from tests.precision import assert_takes_precision


def test_logit_scores_match_scipy():
    logits = np.random.default_rng(0).normal(size=(20, 5)) * 3
    np.testing.assert_allclose(msp_score(logits), softmax(logits, -1).max(-1), rtol=1e-5)
    np.testing.assert_allclose(
        energy_score(logits, 2.0), 2.0 * logsumexp(logits / 2.0, -1), rtol=1e-5
    )


@pytest.mark.parametrize("k", [1, 5])
def test_knn_matches_sklearn(k):
    rng = np.random.default_rng(1)
    bank, queries = rng.normal(size=(300, 16)), rng.normal(size=(77, 16))
    norm = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    dist, _ = NearestNeighbors(n_neighbors=k).fit(norm(bank)).kneighbors(norm(queries))
    # Compared at float32 precision: a GPU's default TF32 moves these distances by ~1e-3.
    score = knn_score(queries, bank, k, block_size=32, precision="highest")
    np.testing.assert_allclose(score, -dist[:, -1], atol=1e-4)


def test_knn_multiplies_at_the_precision_it_is_given():
    assert_takes_precision(knn_score, jnp.ones((3, 4)), jnp.ones((5, 4)), count=1)


def test_mahalanobis_matches_numpy():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 3, 200)
    feats = rng.normal(size=(200, 4)) + labels[:, None] * 2.0
    g = fit_class_gaussians(feats, labels, 3, ridge=0.0)
    means = np.stack([feats[labels == c].mean(0) for c in range(3)])
    centered = feats - means[labels]
    prec = np.linalg.inv(centered.T @ centered / 200)
    q = rng.normal(size=(10, 4))
    ref = -np.min([np.einsum("nd,de,ne->n", q - m, prec, q - m) for m in means], axis=0)
    np.testing.assert_allclose(mahalanobis_score(q, g), ref, rtol=1e-3)


def test_ensemble_score_standardizes_each_member():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(3, 50)) * np.array([[1.0], [10.0], [0.1]]) + 5
    s = rng.normal(size=(3, 8))
    expected = ((s - ref.mean(1, keepdims=True)) / ref.std(1, keepdims=True)).mean(0)
    np.testing.assert_allclose(ensemble_score(s, ref), expected, rtol=1e-5)
    # Constant reference scores stay finite.
    assert np.all(np.isfinite(standardize_scores(jnp.ones(3), jnp.ones(4))))


def test_jit_and_grad():
    bank = jax.random.normal(jax.random.key(0), (30, 4))
    q = jax.random.normal(jax.random.key(1), (5, 4))
    np.testing.assert_allclose(
        jax.jit(knn_score, static_argnums=2)(q, bank, 2), knn_score(q, bank, 2), rtol=1e-5
    )
    g = jax.grad(lambda z: energy_score(z).sum())(jnp.ones((2, 3)))
    np.testing.assert_allclose(g, np.full((2, 3), 1 / 3), rtol=1e-5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        knn_score(jnp.array([[np.nan, 1.0]]), jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="k must be"):
        knn_score(jnp.ones((2, 2)), jnp.ones((3, 2)), k=4)
    with pytest.raises(ValueError, match="differ in d"):
        knn_score(jnp.ones((2, 2)), jnp.ones((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        msp_score(jnp.ones(3))
    with pytest.raises(ValueError, match="member count"):
        ensemble_score(jnp.ones((2, 3)), jnp.ones((3, 3)))
