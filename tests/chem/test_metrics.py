"""COV/MAT against a loop-based numpy reference."""

import numpy as np
import pytest

from jaxlab.chem import coverage_matching


def _reference(r, delta):
    k, m = r.shape
    cov_r = sum(any(r[j, i] <= delta for i in range(m)) for j in range(k)) / k
    mat_r = sum(min(r[j, i] for i in range(m)) for j in range(k)) / k
    cov_p = sum(any(r[j, i] <= delta for j in range(k)) for i in range(m)) / m
    mat_p = sum(min(r[j, i] for j in range(k)) for i in range(m)) / m
    return cov_r, mat_r, cov_p, mat_p


@pytest.mark.parametrize("shape", [(1, 2), (3, 6), (5, 4)])
def test_against_reference(shape):
    r = np.random.default_rng(sum(shape)).uniform(0, 1.2, size=shape)
    got = coverage_matching(r, 0.5)
    ref = _reference(r, 0.5)
    np.testing.assert_allclose([got["cov_r"], got["mat_r"], got["cov_p"], got["mat_p"]], ref)


def test_threshold_is_inclusive():
    assert coverage_matching(np.array([[0.5]]), 0.5)["cov_r"] == 1.0


@pytest.mark.parametrize(
    "bad", [np.zeros((0, 3)), np.zeros(3), np.array([[np.nan]]), np.array([[-1.0]])]
)
def test_bad_inputs(bad):
    with pytest.raises(ValueError):
        coverage_matching(bad, 0.5)
    with pytest.raises(ValueError):
        coverage_matching(np.ones((1, 1)), 0.0)
