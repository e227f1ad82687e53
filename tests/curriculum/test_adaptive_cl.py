"""Adaptive CL: pacing, difficulty adaptation and the distillation loss against numpy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import rel_entr, softmax

from jaxlab.curriculum import EpochInputs, StepContext, adaptive_cl, teacher_kl
from jaxlab.curriculum.adaptive_cl import adaptive_pace

RNG = np.random.default_rng(0)
LOGITS, TEACHER = RNG.normal(size=(2, 6, 4)).astype(np.float32)


def test_kl_matches_scipy():
    expected = rel_entr(softmax(TEACHER, 1), softmax(LOGITS, 1)).sum(1)
    np.testing.assert_allclose(jax.jit(teacher_kl)(LOGITS, TEACHER), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="teacher_logits"):
        teacher_kl(LOGITS, TEACHER[:, :3])


def test_pace():
    assert [adaptive_pace(e, 0.1, 2.5, 15) for e in (1, 14, 15, 29, 30, 44, 45)] == pytest.approx(
        [0.1, 0.1, 0.25, 0.25, 0.625, 0.625, 1.0]
    )
    with pytest.raises(ValueError, match="q"):
        adaptive_pace(1, 0.1, 0.5, 15)


def test_easiest_first_and_difficulty_adapts():
    n = 20
    teacher_losses = RNG.uniform(size=n).astype(np.float32)
    model_losses = RNG.uniform(size=n).astype(np.float32)
    c = adaptive_cl(
        pace_p=0.25,
        pace_q=2.0,
        pace_r=2,
        inv=2,
        alpha=0.5,
        gamma=0.3,
        gamma_decay=0.1,
        bottom_gamma=0.15,
    )
    state = c.data_prepare(n, 4, jax.random.key(0))
    inputs = EpochInputs(
        np.zeros(n, int), model_losses, None, teacher_losses, RNG.normal(size=(n, 4))
    )
    state = c.data_curriculum(state, 0, inputs)  # e = 1: a quarter, teacher order
    np.testing.assert_array_equal(
        np.flatnonzero(state.weights), np.sort(np.argsort(teacher_losses)[:5])
    )
    state = c.data_curriculum(state, 1, inputs)  # e = 2: half, then adapt (2 % inv == 0)
    np.testing.assert_array_equal(
        np.flatnonzero(state.weights), np.sort(np.argsort(teacher_losses)[:10])
    )
    mixed = 0.5 * teacher_losses + 0.5 * model_losses
    np.testing.assert_allclose(state.extra["difficulty"], mixed, rtol=1e-6)
    assert float(state.extra["gamma"]) == pytest.approx(0.2)
    state = c.data_curriculum(state, 2, inputs)  # e = 3: half, by the adapted difficulty
    np.testing.assert_array_equal(np.flatnonzero(state.weights), np.sort(np.argsort(mixed)[:10]))
    with pytest.raises(ValueError, match="teacher"):
        c.data_curriculum(state, 0, inputs._replace(teacher_logits=None))


def test_loss_hook_is_ce_plus_gamma_kl():
    n = 6
    c = adaptive_cl(gamma=0.4)
    state = c.data_prepare(n, 4, jax.random.key(0))
    state = c.data_curriculum(
        state, 0, EpochInputs(np.zeros(n, int), np.zeros(n), None, np.zeros(n), TEACHER)
    )
    idx, labels = np.array([3, 0, 5]), np.array([1, 0, 2])
    logits = LOGITS[:3]
    ce = -np.log(softmax(logits, 1)[np.arange(3), labels])
    valid = jnp.array([True, True, False])
    ctx = StepContext(None, None, None, None, valid, None, None, 1e-3, 0, None)
    loss, _ = c.loss_curriculum(jnp.asarray(ce), logits, labels, idx, state, ctx)
    kl = rel_entr(softmax(TEACHER[idx], 1), softmax(logits, 1)).sum(1)
    assert float(loss) == pytest.approx(np.mean((ce + 0.4 * kl)[:2]), rel=1e-5)


def test_kl_gradient_and_bad_arguments():
    from jax.test_util import check_grads

    with jax.enable_x64(True):
        check_grads(
            lambda z: teacher_kl(z, np.asarray(TEACHER, np.float64)),
            (np.asarray(LOGITS, np.float64),),
            order=1,
            modes=("rev",),
        )
    with pytest.raises(ValueError, match="inv"):
        adaptive_cl(inv=0)
    with pytest.raises(ValueError, match="alpha"):
        adaptive_cl(alpha=1.5)
