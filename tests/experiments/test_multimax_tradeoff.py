"""Smoke run of multimax_tradeoff's quick preset, shrunk."""

import math
import os

from jaxlab.report.registry import get_experiment


def test_quick_preset_smoke(tmp_path):
    experiment = get_experiment("multimax_tradeoff")
    config = experiment.get_config("quick")
    config.num_vectors, config.fit_steps, config.num_entries = 64, 30, 16
    results = experiment.train_and_evaluate(config, str(tmp_path))
    for claim in experiment.claims:
        assert math.isfinite(results[claim.metric]) and math.isfinite(results[claim.baseline])
    for name in ("softmax_t0.1", "sparsemax", "entmax15", "multimax_fit", "multimax_hand"):
        assert 0.0 <= results[f"sparsity_{name}"] <= 1.0
        assert 0.0 <= results[f"peaks_kept_{name}"] <= config.num_peaks
    # Invariants of the setting: a colder softmax is sparser; sparsemax is sparse.
    assert results["sparsity_softmax_t0.1"] >= results["sparsity_softmax_t2"]
    assert results["sparsity_sparsemax"] > 0.5
    assert os.path.exists(tmp_path / "tradeoff.png")
