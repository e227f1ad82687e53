"""AUROC / FPR95 against scikit-learn on random and tied scores."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from jaxlab.ood import auroc, fpr_at_tpr


def _sk_fpr(s_id, s_ood, tpr):
    labels = np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    fpr, tprs, _ = roc_curve(labels, np.r_[s_id, s_ood])
    return fpr[np.argmax(tprs >= tpr - 1e-12)]  # first ROC point reaching the TPR


def _cases():
    rng = np.random.default_rng(0)
    yield rng.normal(1, 1, 300), rng.normal(0, 1, 200)
    yield rng.integers(0, 5, 100).astype(float), rng.integers(0, 4, 77).astype(float)  # ties
    yield rng.normal(0, 1, 50), rng.normal(0, 1, 1000)


@pytest.mark.parametrize("case", list(range(3)))
def test_against_sklearn(case):
    s_id, s_ood = list(_cases())[case]
    labels = np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    np.testing.assert_allclose(
        auroc(s_id, s_ood), roc_auc_score(labels, np.r_[s_id, s_ood]), rtol=1e-5
    )
    for tpr in (0.95, 0.8, 0.5):
        np.testing.assert_allclose(
            fpr_at_tpr(s_id, s_ood, tpr), _sk_fpr(s_id, s_ood, tpr), atol=1e-6
        )


@pytest.mark.parametrize("case", list(range(3)))
def test_fpr_at_95_tpr_lies_on_sklearns_roc_segment(case):
    """Ours is the first ROC point with TPR >= 0.95; the ood-metrics package (not a
    dependency) interpolates linearly between ROC points instead (``np.interp`` over
    scikit-learn's curve, which takes the last point of a flat run). Both lie on the ROC
    segment around TPR = 0.95 of scikit-learn's ``roc_curve``."""
    s_id, s_ood = list(_cases())[case]
    preds, labels = np.r_[s_id, s_ood], np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    fpr, tprs, _ = roc_curve(labels, preds)
    interpolated = float(np.interp(0.95, tprs, fpr))
    ours = float(fpr_at_tpr(s_id, s_ood))
    i = int(np.argmax(tprs >= 0.95))
    lo, hi = fpr[max(i - 1, 0)], fpr[np.flatnonzero(tprs <= tprs[i])[-1]]
    assert lo - 1e-6 <= interpolated <= hi + 1e-6
    assert lo - 1e-6 <= ours <= hi + 1e-6
    np.testing.assert_allclose(ours, fpr[i], atol=1e-6)


def test_all_equal_and_separated_scores():
    assert float(auroc(jnp.ones(5), jnp.ones(7))) == 0.5
    assert float(fpr_at_tpr(jnp.ones(5), jnp.ones(7))) == 1.0
    assert float(auroc(jnp.array([2.0, 3.0]), jnp.array([0.0, 1.0]))) == 1.0
    assert float(fpr_at_tpr(jnp.array([2.0, 3.0]), jnp.array([0.0, 1.0]))) == 0.0


def test_jit_and_vmap():
    s = jax.random.normal(jax.random.key(0), (4, 100))
    o = jax.random.normal(jax.random.key(1), (4, 60)) - 1.0
    batched = jax.jit(jax.vmap(auroc))(s, o)
    np.testing.assert_allclose(batched, [auroc(s[i], o[i]) for i in range(4)], rtol=1e-6)
    batched = jax.jit(jax.vmap(fpr_at_tpr))(s, o)
    np.testing.assert_allclose(batched, [fpr_at_tpr(s[i], o[i]) for i in range(4)])


@pytest.mark.parametrize("fn", [auroc, fpr_at_tpr])
def test_bad_inputs(fn):
    with pytest.raises(ValueError, match="empty"):
        fn(jnp.zeros(0), jnp.ones(3))
    with pytest.raises(ValueError, match="shape"):
        fn(jnp.zeros((2, 3)), jnp.ones(3))


def test_bad_tpr():
    with pytest.raises(ValueError, match="tpr"):
        fpr_at_tpr(jnp.ones(3), jnp.ones(3), tpr=0.0)


def test_large_inputs_do_not_overflow():
    # n_id · n_ood = 10¹⁰ exceeds int32: the AUROC must stay exact to float32 precision.
    rng = np.random.default_rng(5)
    s_id, s_ood = rng.normal(0.5, 1, 100_000), rng.normal(0, 1, 100_000)
    labels = np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    np.testing.assert_allclose(
        auroc(s_id, s_ood), roc_auc_score(labels, np.r_[s_id, s_ood]), atol=1e-5
    )
