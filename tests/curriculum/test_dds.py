"""DDS: the reward is the finite-difference loss change along the meta gradient."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.curriculum import dds_reward


def test_reward_matches_gradient_alignment():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    xm, ym = rng.normal(size=(4, 3)), rng.normal(size=4)
    theta = rng.normal(size=3)

    def loss_fn(p, a, b):
        return (a @ p - b) ** 2

    with jax.enable_x64(True):
        eps = 1e-6
        got = np.asarray(dds_reward(jnp.asarray(theta), loss_fn, x, y, xm, ym, eps))
    # numpy: per-sample gradients 2(xᵢθ − yᵢ)xᵢ and the meta gradient.
    g_i = 2 * (x @ theta - y)[:, None] * x
    g_meta = np.mean(2 * (xm @ theta - ym)[:, None] * xm, axis=0)
    np.testing.assert_allclose(got, -g_i @ g_meta, rtol=1e-4, atol=1e-6)
