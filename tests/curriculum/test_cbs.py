"""CBS: the annealing schedule and the Gaussian smoothing against scipy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import signal

from jaxlab.curriculum import cbs, cbs_sigma
from jaxlab.nn.lenet import LeNet, gaussian_blur


def test_schedule():
    assert [round(cbs_sigma(e, 1.0, 0.9, 2), 4) for e in range(6)] == [1, 1, 0.9, 0.9, 0.81, 0.81]
    assert cbs(grow_interval=1).model_curriculum(None, 3) == {"sigma": pytest.approx(0.729)}
    assert cbs().vision_only
    with pytest.raises(ValueError, match="grow_factor"):
        cbs(grow_factor=1.5)


def test_gaussian_blur_matches_scipy_convolution():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(2, 6, 5, 3)).astype(np.float32)
        sigma = 0.8
        r = np.arange(3) - 1.0
        k = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * sigma**2))
        k /= k.sum()
        expected = np.stack(
            [
                np.stack([signal.convolve2d(x[b, :, :, c], k, mode="same") for c in range(3)], -1)
                for b in range(2)
            ]
        )
        np.testing.assert_allclose(gaussian_blur(x, sigma), expected, rtol=1e-5, atol=1e-6)
        with pytest.raises(ValueError, match="kernel_size"):
            gaussian_blur(x, 1.0, kernel_size=2)


def test_lenet_with_and_without_smoothing():
    import jax

    model = LeNet(num_classes=4, features=(2, 3), hidden=(5,))
    x = jnp.ones((2, 8, 8, 1))
    params = model.init(jax.random.key(0), x)["params"]
    assert model.apply({"params": params}, x).shape == (2, 4)
    assert model.apply({"params": params}, x, jnp.float32(1.0)).shape == (2, 4)
