"""q_sample statistics, masked loss against numpy, jit/vmap/grad."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.diffusion import cosine_beta_schedule, ddpm_loss, masked_mse, q_sample

SCHED = cosine_beta_schedule(100)


def test_q_sample_statistics():
    n = 20000
    x0 = jnp.full((n, 2), 1.5)
    t = jnp.full((n,), 40, jnp.int32)
    noise = jax.random.normal(jax.random.key(0), (n, 2))
    xt = np.asarray(q_sample(SCHED, x0, t, noise))
    ab = float(SCHED.alphas_cumprod[40])
    np.testing.assert_allclose(xt.mean(0), np.sqrt(ab) * 1.5, atol=0.03)
    np.testing.assert_allclose(xt.std(0), np.sqrt(1 - ab), atol=0.02)


def test_q_sample_pytree_and_scalar_t():
    tree = {"a": jnp.ones((3,)), "b": jnp.zeros((3, 2))}
    noise = jax.tree.map(jnp.ones_like, tree)
    out = q_sample(SCHED, tree, jnp.int32(5), noise)
    a, b = float(SCHED.sqrt_alphas_cumprod[5]), float(SCHED.sqrt_one_minus_alphas_cumprod[5])
    np.testing.assert_allclose(out["a"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out["b"], b, rtol=1e-6)


def test_q_sample_bad_inputs():
    with pytest.raises(ValueError, match="integer"):
        q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0.5, 1.0]), jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="prefix"):
        q_sample(SCHED, jnp.ones((2, 3)), jnp.array([0, 1, 2]), jnp.ones((2, 3)))


def test_masked_mse_matches_numpy():
    rng = np.random.default_rng(0)
    pred, target = rng.normal(size=(4, 5, 3)), rng.normal(size=(4, 5, 3))
    mask = np.array([[1, 1, 1, 0, 0], [1] * 5, [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
    ref = np.mean([np.mean((pred[b][mask[b] > 0] - target[b][mask[b] > 0]) ** 2) for b in range(4)])
    got = masked_mse(jnp.asarray(pred), jnp.asarray(target), jnp.asarray(mask))
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_ddpm_loss_oracle_zero_and_grad():
    x0 = jax.random.normal(jax.random.key(1), (6, 4, 3))
    mask = jnp.array([[1, 1, 1, 0]] * 6)
    x0 = x0 * mask[..., None]

    def oracle(xt, t):  # the true ε, recovered from x_t and the known x₀
        a = SCHED.sqrt_alphas_cumprod[t][:, None, None]
        b = SCHED.sqrt_one_minus_alphas_cumprod[t][:, None, None]
        return (xt - a * x0) / b

    loss = jax.jit(lambda k: ddpm_loss(oracle, SCHED, x0, k, mask))(jax.random.key(2))
    assert float(loss) < 1e-8

    def loss_of(w):
        return ddpm_loss(lambda xt, t: w * xt, SCHED, x0, jax.random.key(3), mask)

    check_grads(loss_of, (jnp.float32(0.3),), order=1, modes=["rev"], eps=1e-2)
    per = jax.vmap(lambda k: ddpm_loss(lambda xt, t: 0 * xt, SCHED, x0, k, mask))(
        jax.random.split(jax.random.key(4), 3)
    )
    chex.assert_shape(per, (3,))
