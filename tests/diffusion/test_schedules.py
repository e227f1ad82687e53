"""Schedules against their closed forms (independent numpy)."""

import math

import numpy as np
import pytest

from jaxlab.diffusion import cosine_beta_schedule, linear_beta_schedule, schedule_from_betas


def _cosine_alpha_bar(t, T, s=0.008):
    return math.cos((t / T + s) / (1 + s) * math.pi / 2) ** 2


def test_cosine_matches_closed_form():
    T = 1000
    sched = cosine_beta_schedule(T)
    f0 = _cosine_alpha_bar(0, T)
    alpha_bar = np.array([_cosine_alpha_bar(t + 1, T) / f0 for t in range(T)])
    betas = np.array(
        [min(1 - _cosine_alpha_bar(t + 1, T) / _cosine_alpha_bar(t, T), 0.999) for t in range(T)]
    )
    np.testing.assert_allclose(sched.betas, betas, rtol=1e-5, atol=1e-7)
    # Before the clip bites, ᾱ_t is the closed form itself.
    np.testing.assert_allclose(sched.alphas_cumprod[:-1], alpha_bar[:-1], rtol=1e-4, atol=1e-7)
    assert float(sched.betas[-1]) == pytest.approx(0.999)
    assert np.all(np.diff(np.asarray(sched.alphas_cumprod)) < 0)


def test_derived_posterior_coefficients():
    betas = np.linspace(1e-4, 0.02, 50)
    s = schedule_from_betas(betas)
    ab = np.cumprod(1 - betas)
    ab_prev = np.concatenate([[1.0], ab[:-1]])
    t = 17
    # Posterior of a Gaussian: precision-weighted combination (independent derivation).
    var = 1.0 / (1.0 / (1 - ab_prev[t]) + (1 - betas[t]) / betas[t])
    coef_x0 = var * np.sqrt(ab_prev[t]) / (1 - ab_prev[t])
    coef_xt = var * np.sqrt(1 - betas[t]) / betas[t]
    np.testing.assert_allclose(s.posterior_variance[t], var, rtol=1e-5)
    np.testing.assert_allclose(s.posterior_mean_coef1[t], coef_x0, rtol=1e-5)
    np.testing.assert_allclose(s.posterior_mean_coef2[t], coef_xt, rtol=1e-5)
    np.testing.assert_allclose(s.alphas_cumprod_prev[t], ab_prev[t], rtol=1e-6)


def test_linear_schedule():
    s = linear_beta_schedule(10, 0.1, 0.2)
    np.testing.assert_allclose(s.betas, np.linspace(0.1, 0.2, 10), rtol=1e-6)
    assert s.num_steps == 10


@pytest.mark.parametrize(
    "call",
    [
        lambda: cosine_beta_schedule(1),
        lambda: cosine_beta_schedule(10, max_beta=0.0),
        lambda: linear_beta_schedule(10, 0.3, 0.2),
        lambda: schedule_from_betas([0.1, 1.5]),
        lambda: schedule_from_betas([[0.1, 0.2]]),
    ],
)
def test_bad_inputs(call):
    with pytest.raises(ValueError):
        call()
