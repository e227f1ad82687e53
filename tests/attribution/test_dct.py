"""log_dct against scipy.fft.dctn; jit/vmap/grad; bad input."""

import doctest

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft
from jax.test_util import check_grads

import jaxlab.attribution.dct as dct_mod
from jaxlab.attribution import log_dct


def _reference(x, eps=1e-5):
    return np.log(np.abs(scipy.fft.dctn(x, type=2, axes=(-2, -1), norm="ortho")) + eps)


@pytest.mark.parametrize("shape", [(8, 8), (3, 8, 8), (2, 1, 6, 10)])
def test_matches_scipy_dctn(shape):
    x = np.random.default_rng(0).uniform(-1, 1, size=shape).astype(np.float32)
    np.testing.assert_allclose(log_dct(x), _reference(x.astype(np.float64)), atol=2e-3)
    # The orthonormal DCT-II preserves the Frobenius norm of each image.
    coeffs = np.exp(np.asarray(log_dct(x, eps=1e-30), np.float64))
    np.testing.assert_allclose(
        np.sum(coeffs**2, axis=(-2, -1)), np.sum(x**2, axis=(-2, -1)), rtol=1e-4
    )


def test_jit_vmap_grad():
    x = np.random.default_rng(1).uniform(-1, 1, size=(4, 8, 8)).astype(np.float32)
    # Compared as |DCT| + ε: float32 rounds the coefficients (sums of terms ~1) to ~1e-7
    # absolute, which the log magnifies where a coefficient is near 0.
    np.testing.assert_allclose(
        np.exp(jax.jit(jax.vmap(log_dct))(x)), np.exp(log_dct(x)), rtol=1e-6, atol=1e-6
    )
    check_grads(
        lambda v: jnp.sum(log_dct(v, eps=0.1)),
        (jnp.asarray(x[0]),),
        order=1,
        modes=("fwd", "rev"),
        atol=5e-2,
        rtol=5e-2,
    )


def test_bad_input():
    with pytest.raises(ValueError, match="ndim"):
        log_dct(jnp.zeros(8))
    with pytest.raises(ValueError, match="eps"):
        log_dct(jnp.zeros((4, 4)), eps=0.0)
    np.testing.assert_allclose(
        log_dct(jnp.ones((2, 2), jnp.int32))[0, 0], np.log(2 + 1e-5), rtol=1e-6
    )


def test_doctests():
    result = doctest.testmod(dct_mod, extraglobs={"jnp": jnp})
    assert result.failed == 0 and result.attempted > 0
