"""Smoke run of byzantine_grid's quick config, shrunk to a few steps and cells."""

import os

import numpy as np

from jaxlab.report.registry import get_experiment


def test_byzantine_grid_smoke(tmp_path):
    experiment = get_experiment("byzantine_grid")
    config = experiment.get_config("quick")
    assert config.num_workers == 17 and config.num_byzantine == 8
    assert {c.split("+")[0] for c in config.cells} == {"mean", "cwmed", "cwtm", "gm", "krum"}
    assert {c.split("+")[1] for c in config.cells} == {"plain", "nnm", "bucketing", "ctma"}
    assert set(config.attacks) == {"none", "sf", "lf", "ipm", "alie"}
    config.num_steps = 2
    config.cells = ("cwtm+plain", "cwtm+ctma", "cwtm+nnm")
    config.attacks = ("none", "lf")
    config.optimizers = ("momentum",)  # μ²-SGD's step is covered by tests/robust
    config.seeds_per_cell = 2
    config.timing_repeats = 1
    config.timing_dim = 1000
    results = experiment.train_and_evaluate(config, str(tmp_path))
    for key in ("acc_ctma", "acc_plain", "acc_ctma_minus_nnm", "worst_attack_acc_momentum"):
        assert len(results[key]) == 2 and np.all(np.isfinite(results[key])), key
    assert 0.0 <= min(results["acc/cwtm+ctma/lf/momentum"]) <= 100.0
    assert results["agg_ms_ctma"] > 0 and results["agg_ms_nnm"] > 0
    assert os.path.exists(tmp_path / "byzantine_grid_accuracy.png")
