"""DPO loss, margins and the one-token unembedding model."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.align import (
    dpo_loss,
    dpo_reward_margins,
    one_token_logps,
    preference_accuracy,
    sample_behaviour_preferences,
    unembedding_dpo_loss,
    unembedding_sft_loss,
)

RNG = np.random.default_rng(0)
LOGPS = [RNG.normal(size=6) * 3 - 5 for _ in range(4)]


def np_dpo(pc, pr, rc, rr, beta):
    m = beta * ((pc - rc) - (pr - rr))
    return np.logaddexp(0.0, -m), m  # −log σ(m), stable in float64


@pytest.mark.parametrize("beta", [0.1, 2.0])
def test_loss_and_margins_match_numpy(beta):
    want, m = np_dpo(*LOGPS, beta)
    args = [jnp.asarray(a, jnp.float32) for a in LOGPS]
    np.testing.assert_allclose(dpo_loss(*args, beta, reduction="none"), want, rtol=1e-5)
    np.testing.assert_allclose(dpo_loss(*args, beta), want.mean(), rtol=1e-5)
    np.testing.assert_allclose(dpo_reward_margins(*args, beta), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(preference_accuracy(m), (m > 0).mean())


def test_extreme_margins_are_finite_and_exact():
    z = jnp.zeros(3)
    pc = jnp.array([1e4, -1e4, 0.0])
    loss = dpo_loss(pc, z, z, z, 1.0, reduction="none")
    np.testing.assert_allclose(loss, [0.0, 1e4, np.log(2.0)], rtol=1e-6)
    g = jax.grad(lambda x: dpo_loss(x, z, z, z, 1.0))(pc)
    np.testing.assert_allclose(g, [0.0, -1 / 3, -1 / 6], rtol=1e-6, atol=1e-8)


def test_gradients_finite_differences():
    args = tuple(jnp.asarray(a, jnp.float32) for a in LOGPS)
    check_grads(lambda *a: dpo_loss(*a, 0.7), args, order=2, modes=("rev",), eps=1e-2, rtol=2e-2)


def test_jit_and_vmap():
    args = [jnp.asarray(np.stack([a, a[::-1]]), jnp.float32) for a in LOGPS]
    per_row = jax.vmap(lambda *a: dpo_loss(*a, 0.3))(*args)
    for i in range(2):
        np.testing.assert_allclose(
            per_row[i], np_dpo(*[a[i] for a in args], 0.3)[0].mean(), rtol=1e-5
        )
    jitted = jax.jit(dpo_loss, static_argnames="reduction")
    np.testing.assert_allclose(jitted(*args, 0.3), dpo_loss(*args, 0.3), rtol=1e-6)


def test_bad_inputs():
    z = jnp.zeros(3)
    with pytest.raises(ValueError, match="beta"):
        dpo_loss(z, z, z, z, 0.0)
    with pytest.raises(ValueError, match="beta"):
        dpo_loss(z, z, z, z, -1.0)
    with pytest.raises(ValueError, match="ref_rejected_logps"):
        dpo_loss(z, z, z, jnp.zeros(2), 0.1)
    with pytest.raises(ValueError, match="reduction"):
        dpo_loss(z, z, z, z, 0.1, reduction="sum")
    with pytest.raises(ValueError, match="embeddings"):
        one_token_logps(jnp.zeros((2, 3)), jnp.zeros((4, 5)), jnp.zeros(4, int))
    with pytest.raises(ValueError, match="tokens"):
        one_token_logps(jnp.zeros((2, 3)), jnp.zeros((4, 3)), jnp.zeros(4))
    with pytest.raises(ValueError, match="noise_scale"):
        sample_behaviour_preferences(
            jax.random.key(0), 4, jnp.eye(2, 3), jnp.ones(2), jnp.zeros(3), jnp.ones(2), -1.0
        )


def test_unembedding_model_against_numpy_and_closed_form_gradient():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        d, b, beta = 5, 7, 0.4
        w = RNG.normal(size=(2, d))
        w_ref = RNG.normal(size=(2, d))
        g = RNG.normal(size=(b, d))
        yw = RNG.integers(0, 2, size=b)
        yl = 1 - yw

        def np_logp(w_, y):
            z = g @ w_.T
            z = z - np.log(np.exp(z).sum(-1, keepdims=True))
            return z[np.arange(b), y]

        want, m = np_dpo(
            np_logp(w, yw), np_logp(w, yl), np_logp(w_ref, yw), np_logp(w_ref, yl), beta
        )
        args = [jnp.asarray(a, jnp.float32) for a in (w, w_ref, g)]
        yw_j, yl_j = jnp.asarray(yw), jnp.asarray(yl)
        got = unembedding_dpo_loss(*args, yw_j, yl_j, beta)
        np.testing.assert_allclose(got, want.mean(), rtol=1e-5)
        # Closed form: ∂L/∂w_y = −β/b Σ σ(−m) (1[y=y_w] − 1[y=y_l]) g.
        s = 1.0 / (1.0 + np.exp(m))
        grad_want = np.zeros((2, d))
        for i in range(b):
            grad_want[yw[i]] -= beta * s[i] * g[i] / b
            grad_want[yl[i]] += beta * s[i] * g[i] / b
        grad = jax.grad(unembedding_dpo_loss)(*args, yw_j, yl_j, beta)
        np.testing.assert_allclose(grad, grad_want, rtol=1e-4, atol=1e-6)
        assert float(jnp.abs(jax.grad(unembedding_dpo_loss, 1)(*args, yw_j, yl_j, beta)).max()) == 0
        sft = unembedding_sft_loss(args[0], args[2], yw_j, reduction="none")
        np.testing.assert_allclose(sft, -np_logp(w, yw), rtol=1e-5)


def test_behaviour_sampler_statistics():
    u = jnp.eye(3, 6)
    batch = sample_behaviour_preferences(
        jax.random.key(1),
        20000,
        u,
        jnp.array([0.5, 1.0, 2.0]),
        jnp.full(6, 0.3),
        jnp.array([0.2, 0.3, 0.5]),
        0.5,
    )
    beh, sign = np.asarray(batch.behaviour), 1 - 2 * np.asarray(batch.chosen)
    g = np.asarray(batch.embeddings)
    np.testing.assert_allclose(np.bincount(beh) / len(beh), [0.2, 0.3, 0.5], atol=0.015)
    np.testing.assert_array_equal(batch.rejected, 1 - batch.chosen)
    for k, delta in enumerate([0.5, 1.0, 2.0]):
        proj = (sign[:, None] * (g - 0.3))[beh == k] @ np.eye(6)[k]
        np.testing.assert_allclose(proj.mean(), delta, atol=0.05)
    resid = g[:, 3:] - 0.3  # Laplace(0.5): variance 2·0.25
    np.testing.assert_allclose(resid.var(), 0.5, rtol=0.05)
