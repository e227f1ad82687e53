"""DDIM/ancestral samplers on Gaussian toy problems with exact ε-oracles."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.diffusion import ancestral_sample, cosine_beta_schedule, ddim_sample

SCHED = cosine_beta_schedule(200)
MU, STD = 0.7, 0.3


def gaussian_oracle(x, t):
    """E[ε | x_t] for data x₀ ~ N(MU, STD²): closed form for a Gaussian prior."""
    ab = SCHED.alphas_cumprod[t][:, None]
    var = ab * STD**2 + 1.0 - ab
    return jnp.sqrt(1.0 - ab) * (x - jnp.sqrt(ab) * MU) / var


def test_ddim_eta0_deterministic_and_recovers_x0():
    x0 = jnp.array([[0.3, -0.2, 0.9]])

    def point_oracle(x, t):  # data is the single point x0: ε = (x_t − √ᾱ x₀)/√(1−ᾱ)
        ab = SCHED.alphas_cumprod[t][:, None]
        return (x - jnp.sqrt(ab) * x0) / jnp.sqrt(1 - ab)

    x_T = jax.random.normal(jax.random.key(0), (1, 3))
    run = jax.jit(lambda k: ddim_sample(point_oracle, SCHED, x_T, k, num_steps=20, eta=0.0))
    a, b = run(jax.random.key(1)), run(jax.random.key(2))
    np.testing.assert_array_equal(a, b)  # η = 0: the key does not matter
    np.testing.assert_allclose(a, x0, atol=1e-4)


@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_ddim_gaussian_distribution(eta):
    n = 4000
    x_T = jax.random.normal(jax.random.key(3), (n, 1))
    out = ddim_sample(gaussian_oracle, SCHED, x_T, jax.random.key(4), num_steps=50, eta=eta)
    assert abs(float(out.mean()) - MU) < 0.03
    assert abs(float(out.std()) - STD) < 0.03


def test_ancestral_gaussian_distribution_and_determinism():
    n = 4000
    x_T = jax.random.normal(jax.random.key(5), (n, 1))
    sample = jax.jit(lambda k: ancestral_sample(gaussian_oracle, SCHED, x_T, k))
    out = sample(jax.random.key(6))
    assert abs(float(out.mean()) - MU) < 0.03
    assert abs(float(out.std()) - STD) < 0.03
    np.testing.assert_array_equal(out, sample(jax.random.key(6)))
    assert not np.allclose(out, sample(jax.random.key(7)))


def test_mask_projection_and_clip():
    x_T = jax.random.normal(jax.random.key(8), (3, 5, 2))
    mask = jnp.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])

    def centre(x):
        m = mask[..., None].astype(x.dtype)
        com = jnp.sum(x * m, axis=1, keepdims=True) / jnp.sum(m, axis=1, keepdims=True)
        return x - com

    def model(x, t):
        return 3.0 * x  # a bad model that makes x̂₀ blow up

    for fn in (
        lambda k: ancestral_sample(model, SCHED, x_T, k, mask=mask, clip_x0=1.0, project=centre),
        lambda k: ddim_sample(
            model, SCHED, x_T, k, num_steps=10, eta=1.0, mask=mask, clip_x0=1.0, project=centre
        ),
    ):
        out = np.asarray(jax.jit(fn)(jax.random.key(9)))
        assert np.all(out[np.asarray(mask) == 0] == 0)
        com = (out * np.asarray(mask)[..., None]).sum(1) / np.asarray(mask).sum(1)[:, None]
        np.testing.assert_allclose(com, 0.0, atol=1e-5)
        assert np.all(np.isfinite(out))


def test_pytree_state_vmap_and_no_retrace():
    tree = {"a": jnp.zeros((2, 3)), "b": jnp.zeros((2,))}

    @chex.assert_max_traces(n=1)
    def run(x, k):
        return ddim_sample(lambda x, t: x, SCHED, x, k, num_steps=5, eta=1.0)

    jitted = jax.jit(run)
    out1 = jitted(tree, jax.random.key(0))
    jitted(jax.tree.map(jnp.ones_like, tree), jax.random.key(1))
    assert jax.tree.structure(out1) == jax.tree.structure(tree)
    keys = jax.random.split(jax.random.key(2), 4)
    batched = jax.vmap(lambda k: ddim_sample(lambda x, t: x, SCHED, tree, k, num_steps=5, eta=1.0))(
        keys
    )
    single = ddim_sample(lambda x, t: x, SCHED, tree, keys[2], num_steps=5, eta=1.0)
    np.testing.assert_allclose(batched["a"][2], single["a"], rtol=1e-5, atol=1e-6)


def test_grad_through_sampler():
    x_T = jax.random.normal(jax.random.key(0), (2, 3))

    def f(w):
        return jnp.sum(
            ddim_sample(lambda x, t: w * x, SCHED, x_T, jax.random.key(1), num_steps=4, eta=0.0)
            ** 2
        )

    check_grads(f, (jnp.float32(0.2),), order=1, modes=["rev"], eps=1e-3, atol=5e-2, rtol=5e-2)


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_steps"):
        ddim_sample(lambda x, t: x, SCHED, jnp.zeros((1, 2)), jax.random.key(0), num_steps=0)
    with pytest.raises(ValueError, match="eta"):
        ddim_sample(lambda x, t: x, SCHED, jnp.zeros((1, 2)), jax.random.key(0), eta=-1.0)
    with pytest.raises(ValueError, match="clip_x0"):
        ancestral_sample(lambda x, t: x, SCHED, jnp.zeros((1, 2)), jax.random.key(0), clip_x0=0.0)
    with pytest.raises(ValueError, match="prefix"):
        ancestral_sample(
            lambda x, t: x, SCHED, jnp.zeros((1, 2)), jax.random.key(0), mask=jnp.ones((2,))
        )
