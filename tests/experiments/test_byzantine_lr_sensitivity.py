"""Smoke run of byzantine_lr_sensitivity's quick config, shrunk to a few steps."""

import os

import numpy as np

from jaxlab.report.registry import get_experiment


def test_byzantine_lr_sensitivity_smoke(tmp_path):
    experiment = get_experiment("byzantine_lr_sensitivity")
    config = experiment.get_config("quick")
    assert set(config.optimizers) == {"momentum", "mu2sgd"}
    config.num_steps = 2
    config.learning_rates = (0.1, 1.0)
    config.optimizers = ("momentum",)
    config.seeds_per_cell = 2
    results = experiment.train_and_evaluate(config, str(tmp_path))
    assert len(results["acc_range_momentum"]) == 2
    assert np.all(np.asarray(results["acc_range_momentum"]) >= 0)
    assert set(results) >= {"acc/momentum/lr=0.1", "acc/momentum/lr=1", "mean_acc_momentum"}
    assert os.path.exists(tmp_path / "byzantine_lr_sensitivity.png")
