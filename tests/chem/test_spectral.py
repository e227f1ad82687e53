"""Eigenfunctions against an independent scipy generalised eigensolver."""

import jax
import numpy as np
import pytest
import scipy.linalg

from jaxlab.chem import featurize, laplacian_eigenfunctions


@pytest.mark.parametrize("smiles", ["CCO", "c1ccccc1", "CC(C)(C)O", "O=C1CC1"])
def test_generalized_eigenproblem(smiles):
    a = featurize(smiles).adjacency.astype(np.float64)
    n = a.shape[0]
    d = np.diag(a.sum(1))
    lap = d - a
    v = np.asarray(laplacian_eigenfunctions(a, k=32), np.float64)
    assert v.shape == (n, 32)
    w_ref = scipy.linalg.eigh(lap, d, eigvals_only=True)[1:]
    vv = v[:, : n - 1] / np.sqrt(n)
    # L v = λ D v, with λ the scipy eigenvalues in ascending order.
    np.testing.assert_allclose(lap @ vv, (d @ vv) * w_ref[None, :], atol=2e-4)
    # D-orthonormal: Vᵀ D V = I.
    np.testing.assert_allclose(vv.T @ d @ vv, np.eye(n - 1), atol=2e-4)
    # Zero padding beyond N − 1 columns, and orthogonal to the trivial (constant) one.
    np.testing.assert_array_equal(v[:, n - 1 :], 0)
    np.testing.assert_allclose(np.ones(n) @ d @ vv, 0, atol=2e-4)
    # Sign convention: the largest-magnitude entry of each column is positive.
    pivots = vv[np.argmax(np.abs(vv), axis=0), np.arange(n - 1)]
    assert np.all(pivots > 0)


def test_truncation_and_jit_vmap():
    a = featurize("CCCCCCCCCC").adjacency  # 32 atoms → 31 non-trivial
    v = laplacian_eigenfunctions(a, k=8)
    assert v.shape == (32, 8)
    np.testing.assert_allclose(
        jax.jit(laplacian_eigenfunctions, static_argnums=1)(a, 8), v, atol=1e-5
    )
    stacked = np.stack([a, a])
    np.testing.assert_allclose(
        jax.vmap(lambda m: laplacian_eigenfunctions(m, 8))(stacked)[1], v, atol=1e-5
    )


def test_padding_mask_matches_unpadded():
    a = featurize("OCC(N)C=O").adjacency
    n = a.shape[0]
    padded = np.zeros((29, 29), np.float32)
    padded[:n, :n] = a
    mask = np.arange(29) < n
    got = np.asarray(laplacian_eigenfunctions(padded, k=32, mask=mask))
    ref = np.asarray(laplacian_eigenfunctions(a, k=32))
    np.testing.assert_array_equal(got[n:], 0)
    np.testing.assert_array_equal(got[:, n - 1 :], 0)
    # Compare eigenspaces: repeated eigenvalues have no unique basis, their projectors do.
    d = np.diag(a.sum(1))
    lam = np.round(scipy.linalg.eigh(d - a, d, eigvals_only=True)[1:], 4)
    for value in np.unique(lam):
        cols = np.flatnonzero(lam == value)
        p_got = got[:n, cols] @ got[:n, cols].T
        p_ref = ref[:, cols] @ ref[:, cols].T
        np.testing.assert_allclose(p_got, p_ref, atol=1e-3)
        if len(cols) == 1:  # simple eigenvalue: same vector, same sign convention
            np.testing.assert_allclose(got[:n, cols], ref[:, cols], atol=1e-4)


def test_bad_inputs():
    with pytest.raises(ValueError, match="square"):
        laplacian_eigenfunctions(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="k"):
        laplacian_eigenfunctions(np.zeros((3, 3)), k=0)
    with pytest.raises(ValueError, match="mask"):
        laplacian_eigenfunctions(np.zeros((3, 3)), mask=np.ones(2))
