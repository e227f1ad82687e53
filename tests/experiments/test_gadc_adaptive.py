"""Smoke run of gadc_adaptive's quick config, shrunk to a few steps."""

import pytest

from experiments.gadc_adaptive.config import get_config
from experiments.gadc_adaptive.train import train_and_evaluate


# Heavy on a loaded 2-core box (dense n×n attack / n·d² Gram diffusion); `make reproduce`
# runs the same code through the quick preset.
@pytest.mark.slow
def test_smoke(tmp_path):
    config = get_config("quick")
    config.budgets = (0.05,)
    config.pgd_steps = 2
    config.pgd_samples = 2
    config.poisoning = True
    for model in ("gadc", "gcn", "appnp"):
        config[model].epochs = 2
    config.appnp.num_terms = 2
    config.gadc.num_terms = 1
    result = train_and_evaluate(config, str(tmp_path))
    budget = int(0.05 * 5069)
    for model in ("gadc", "gcn", "appnp"):
        assert 0 < result[f"cora_pgd0.05_flips_{model}"] <= budget
        assert 0.0 <= result[f"cora_pgd0.05_evasion_{model}"] <= 100.0
        assert f"cora_pgd0.05_poisoning_{model}" in result
