"""SuperLoss: Lambert W against scipy; σ* is the closed-form minimiser."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import lambertw as scipy_lambertw

from jaxlab.curriculum import CurriculumState, StepContext, lambertw, superloss, superloss_sigma


def test_lambertw_matches_scipy():
    x = np.concatenate(
        [[-1 / np.e + 1e-9, -0.367, -0.3, -0.1], np.linspace(0, 5, 11), [50.0, 1e3, 1e5]]
    )
    np.testing.assert_allclose(lambertw(x), scipy_lambertw(x).real, rtol=2e-5, atol=2e-4)
    # The branch point and below (SuperLoss clips there): exactly −1, in float32 too.
    np.testing.assert_array_equal(lambertw(np.float32(-1 / np.e)), -1.0)
    np.testing.assert_array_equal(lambertw(jnp.array([-1.0, -1 / np.e])), [-1.0, -1.0])


def test_sigma_closed_form_and_minimiser():
    losses = np.array([0.01, 0.3, 1.0, 2.3, 5.0], np.float32)
    tau, lam = 1.0, 0.5
    beta = (losses - tau) / lam
    expected = np.exp(-scipy_lambertw(0.5 * np.maximum(beta, -2 / np.e)).real)
    got = np.asarray(superloss_sigma(losses, tau, lam))
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    # σ* minimises (ℓ − τ)σ + λ(log σ)² on a fine grid.
    grid = np.exp(np.linspace(-6, 1, 200001))
    for loss, s in zip(losses, got, strict=True):
        objective = (loss - tau) * grid + lam * np.log(grid) ** 2
        assert abs(np.log(grid[np.argmin(objective)]) - np.log(s)) < 1e-3


def test_loss_hook_tau_ema_and_weighting_jit():
    c = superloss(tau=0.0, lam=1.0, fac=0.9)
    state = c.data_prepare(4, 2, jax.random.key(0))
    losses = jnp.array([0.1, 0.5, 1.0, 3.0])
    ctx = StepContext(
        None, None, None, None, jnp.ones(4, bool), None, None, 1e-3, jnp.int32(0), jax.random.key(0)
    )

    @jax.jit
    def run(losses, state):
        return c.loss_curriculum(losses, None, None, jnp.arange(4), state, ctx)

    value, state1 = run(losses, state)
    tau = float(losses.mean())  # first batch: τ = its mean (EMA of equal terms)
    sigma = np.exp(-scipy_lambertw(0.5 * np.maximum(np.asarray(losses) - tau, -2 / np.e)).real)
    expected = np.mean((np.asarray(losses) - tau) * sigma + np.log(sigma) ** 2)
    np.testing.assert_allclose(value, expected, rtol=1e-4)
    assert float(state1.extra["tau"]) == pytest.approx(tau)
    _, state2 = run(losses + 1.0, state1)
    assert float(state2.extra["tau"]) == pytest.approx(0.9 * tau + 0.1 * (tau + 1.0))
    # Gradient with respect to the losses is σ*/b (σ* held fixed).
    g = jax.grad(lambda v: run(v, state)[0])(losses)
    np.testing.assert_allclose(g, sigma / 4, rtol=1e-4)


def test_bad_lam():
    with pytest.raises(ValueError, match="lam"):
        superloss_sigma(jnp.ones(2), 0.0, 0.0)
    with pytest.raises(ValueError, match="fac"):
        superloss(fac=1.0)


def test_state_type():
    assert isinstance(superloss().data_prepare(3, 2, jax.random.key(0)), CurriculumState)
