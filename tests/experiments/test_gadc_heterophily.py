"""Smoke run of gadc_heterophily's quick config, shrunk to a few epochs."""

import pytest

from experiments.gadc_heterophily.config import get_config
from experiments.gadc_heterophily.train import train_and_evaluate


# ~80 s on a loaded 2-core box; `make reproduce` runs the same code via the quick preset.
@pytest.mark.slow
def test_smoke(tmp_path):
    config = get_config("quick")
    config.datasets = ("texas",)
    config.num_runs = 2
    config.epochs = 3
    config.num_terms = 2
    result = train_and_evaluate(config, str(tmp_path))
    for conv in ("directed", "symmetric"):
        for eps in ("0", "1"):
            assert len(result[f"texas_{conv}_eps{eps}"]) == 2
    assert result["texas_directed_eps0_spectral_radius"] > 0
    assert (tmp_path / "heterophily.png").exists()
