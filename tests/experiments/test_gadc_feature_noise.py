"""Smoke run of gadc_feature_noise's quick config, shrunk to a few epochs."""

import pytest

from experiments.gadc_feature_noise.config import get_config
from experiments.gadc_feature_noise.train import train_and_evaluate


# Heavy on a loaded 2-core box (dense n×n attack / n·d² Gram diffusion); `make reproduce`
# runs the same code through the quick preset.
@pytest.mark.slow
def test_smoke(tmp_path):
    config = get_config("quick")
    config.gaussian_levels = (0.5,)
    config.flip_levels = ()
    config.num_runs = 2
    config.epochs = 3
    config.gaussian.num_terms = 2
    config.appnp.epochs = 2
    config.appnp.num_terms = 2
    result = train_and_evaluate(config, str(tmp_path))
    assert set(result) == {"cora_gauss0.5_gadc", "cora_gauss0.5_eps0", "cora_gauss0.5_appnp"}
    assert all(len(v) == 2 for v in result.values())
