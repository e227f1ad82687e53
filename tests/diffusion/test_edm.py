"""EDM preconditioning, loss, σ steps and the Heun sampler against closed forms."""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.test_util import check_grads

import jaxlab.diffusion.edm as edm
from jaxlab.diffusion import (
    edm_denoise,
    edm_heun_sample,
    edm_loss,
    edm_precondition,
    edm_sigma_steps,
)


def test_precondition_matches_table_1():
    sigma = np.array([0.002, 0.3, 1.0, 80.0])
    sd = 0.5
    c_skip, c_out, c_in, c_noise = edm_precondition(sigma, sd)
    np.testing.assert_allclose(c_skip, sd**2 / (sigma**2 + sd**2), rtol=1e-6)
    np.testing.assert_allclose(c_out, sigma * sd / np.sqrt(sigma**2 + sd**2), rtol=1e-6)
    np.testing.assert_allclose(c_in, 1 / np.sqrt(sigma**2 + sd**2), rtol=1e-6)
    np.testing.assert_allclose(c_noise, np.log(sigma) / 4, rtol=1e-6)
    # Unit-variance input and unit-variance training target (EDM App. B.6):
    # Var[(y − c_skip (y + σ n)) / c_out] = ((1 − c_skip)² σd² + c_skip² σ²) / c_out² = 1.
    np.testing.assert_allclose(c_in**2 * (sd**2 + sigma**2), 1.0, rtol=1e-5)
    target_var = ((1 - c_skip) ** 2 * sd**2 + c_skip**2 * sigma**2) / c_out**2
    np.testing.assert_allclose(target_var, 1.0, rtol=1e-4)


def test_sigma_steps_formula():
    n, smin, smax, rho = 18, 0.002, 80.0, 7.0
    i = np.arange(n)
    ref = (smax ** (1 / rho) + i / (n - 1) * (smin ** (1 / rho) - smax ** (1 / rho))) ** rho
    got = edm_sigma_steps(n, smin, smax, rho)
    np.testing.assert_allclose(got[:-1], ref, rtol=1e-5)
    assert got[-1] == 0 and np.all(np.diff(np.asarray(got)) < 0)


def test_heun_matches_gaussian_probability_flow():
    # Data N(μ, s² I): D(x; σ) = μ + s²/(s² + σ²)(x − μ); the ODE keeps x − μ ∝ √(s² + σ²).
    mu, s = 0.7, 0.5

    def denoise(x, sigma):
        return mu + (s**2 / (s**2 + sigma**2))[:, None] * (x - mu)

    noise = jax.random.normal(jax.random.key(0), (16, 3))
    x_min = mu + (noise * 80.0 - mu) * np.sqrt((s**2 + 0.002**2) / (s**2 + 80.0**2))
    expected = np.asarray(denoise(x_min, jnp.full((16,), 0.002)))
    errors = [
        np.abs(edm_heun_sample(denoise, noise, edm_sigma_steps(n, 0.002, 80.0)) - expected).max()
        for n in (40, 80)
    ]
    assert errors[1] < 5e-3
    # Second order: doubling the steps divides the error by about 4.
    assert errors[1] < 0.35 * errors[0]


def test_loss_matches_monte_carlo_and_is_zero_for_perfect_denoiser():
    y = jax.random.normal(jax.random.key(1), (8, 4))
    rng = jax.random.key(2)
    # For D ≡ 0: λ(σ)‖y‖²/d averaged; reproduce σ from the same rng split.
    k_sigma, _ = jax.random.split(rng)
    sigma = np.exp(-1.2 + 1.2 * np.asarray(jax.random.normal(k_sigma, (8,))))
    lam = (sigma**2 + 0.25) / (sigma * 0.5) ** 2
    ref = np.mean(lam * np.mean(np.asarray(y) ** 2, axis=1))
    np.testing.assert_allclose(edm_loss(lambda x, s: 0.0 * x, y, rng), ref, rtol=1e-5)
    assert float(edm_loss(lambda x, s: y, y, rng)) == 0.0


def test_denoise_grad_jit_vmap():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        w = jnp.array([[0.5, -0.2], [0.1, 0.3]])
        x = jnp.array([[1.0, 2.0], [0.5, -1.0]])
        sig = jnp.array([0.5, 2.0])

        def d(w):
            return jnp.sum(edm_denoise(lambda u, c: u @ w + c[:, None], x, sig) ** 2)

        check_grads(d, (w,), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)
        # vmap over a batch of parameter sets equals a loop; jit equals eager.
        ws = jnp.stack([w, 2 * w])
        np.testing.assert_allclose(jax.vmap(d)(ws), [d(w), d(2 * w)], rtol=1e-5)
        np.testing.assert_allclose(jax.jit(d)(w), d(w), rtol=1e-5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_steps"):
        edm_sigma_steps(1)
    with pytest.raises(ValueError, match="sigma_min"):
        edm_sigma_steps(5, sigma_min=0.0)
    with pytest.raises(ValueError, match="sigma"):
        edm_denoise(lambda u, c: u, jnp.ones((3, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="sigmas"):
        edm_heun_sample(lambda u, s: u, jnp.ones((3, 2)), jnp.ones(1))


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(edm, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
