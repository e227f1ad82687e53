"""The MCF denoiser: shapes, masking, permutation equivariance, loss gradient, sampling."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.chem import SIZES, MCFDenoiser, center_positions, mcf_loss, mcf_sample
from jaxlab.diffusion import cosine_beta_schedule

B, N, C = 2, 7, 75


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    coords = jnp.asarray(rng.normal(size=(B, N, C)), jnp.float32)
    x = jnp.asarray(rng.normal(size=(B, N, 3)), jnp.float32)
    mask = jnp.array([[1] * 5 + [0] * 2, [1] * 7], jnp.float32)
    model = MCFDenoiser(SIZES["micro"])
    params = model.init(jax.random.key(0), coords, x, jnp.array([3, 4]), mask)
    return model, params, coords, x, mask


def test_shapes_mask_and_padding_independence(setup):
    model, params, coords, x, mask = setup
    out = model.apply(params, coords, x, jnp.array([3, 4]), mask)
    chex.assert_shape(out, (B, N, 3))
    np.testing.assert_array_equal(out[0, 5:], 0)
    # Garbage in the padding does not change the outputs on real atoms.
    x2 = x.at[0, 5:].set(100.0)
    coords2 = coords.at[0, 5:].set(-7.0)
    out2 = model.apply(params, coords2, x2, jnp.array([3, 4]), mask)
    np.testing.assert_allclose(out2[0, :5], out[0, :5], atol=1e-5)


def test_permutation_equivariance(setup):
    model, params, coords, x, mask = setup
    perm = np.random.default_rng(1).permutation(N)
    full = jnp.ones_like(mask)
    out = model.apply(params, coords, x, jnp.array([3, 4]), full)
    out_p = model.apply(params, coords[:, perm], x[:, perm], jnp.array([3, 4]), full)
    np.testing.assert_allclose(out_p, out[:, perm], atol=1e-5)


def test_loss_grad_and_sampling(setup):
    model, params, coords, x, mask = setup
    sched = cosine_beta_schedule(100)
    batch = {"atom_coords": coords, "positions": center_positions(x, mask), "mask": mask}
    loss, grads = jax.jit(
        jax.value_and_grad(lambda p: mcf_loss(model.apply, p, sched, batch, jax.random.key(1)))
    )(params)
    assert np.isfinite(float(loss))
    assert all(np.all(np.isfinite(g)) for g in jax.tree.leaves(grads))
    sample = jax.jit(lambda k: mcf_sample(model.apply, params, sched, coords, mask, k, num_steps=5))
    a = sample(jax.random.key(2))
    np.testing.assert_array_equal(a, sample(jax.random.key(2)))
    np.testing.assert_array_equal(a[0, 5:], 0)
    com = (a * mask[..., None]).sum(1) / mask.sum(1)[:, None]
    np.testing.assert_allclose(com, 0, atol=1e-5)
    assert float(jnp.max(jnp.abs(a))) <= 2.0 + 1e-5  # x̂₀ clipped to [-1, 1], then centred


def test_bad_inputs(setup):
    model, params, coords, x, mask = setup
    with pytest.raises(ValueError, match="x_t"):
        model.apply(params, coords, x[..., :2], jnp.array([1, 2]), mask)
    with pytest.raises(ValueError, match="mask"):
        model.apply(params, coords, x, jnp.array([1, 2]), mask[:, :3])
