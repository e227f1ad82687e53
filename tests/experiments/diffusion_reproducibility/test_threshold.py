"""RP's threshold: an unrelated pair of items passes it at the chance rate (scipy reference)."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from jaxlab_experiments.diffusion_reproducibility.diffusion_reproducibility.train import (
    chance_threshold,
)


@pytest.mark.parametrize("rate", [0.05, 0.2])
def test_chance_threshold_passes_the_chance_rate_of_distinct_pairs(rate):
    features = np.random.default_rng(0).normal(size=(300, 16)) + 0.3
    tau = chance_threshold(features, rate)
    cosines = 1.0 - pdist(features, "cosine")  # every pair i < j, scipy's own cosine
    assert np.mean(cosines > tau) == pytest.approx(rate, abs=2e-3)
    assert chance_threshold(features, 0.01) > tau  # a rarer chance needs a higher τ


def test_chance_threshold_refuses_a_rate_outside_0_1():
    with pytest.raises(ValueError, match="chance_rate"):
        chance_threshold(np.eye(3), 0.0)


def test_unet_denoiser_maps_a_cifar_item_to_its_shape():
    import jax
    import jax.numpy as jnp

    from jaxlab_experiments.diffusion_reproducibility.diffusion_reproducibility.train import (
        UNetDenoiser,
    )

    model = UNetDenoiser(4, (32, 32, 3))
    x = jnp.zeros((2, 32 * 32 * 3))
    params = model.init(jax.random.key(0), x, jnp.zeros(2))
    assert model.apply(params, x, jnp.zeros(2)).shape == (2, 3072)
