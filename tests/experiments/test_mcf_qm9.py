"""Smoke run of the mcf_qm9 experiment (quick config shrunk to a few steps)."""

import numpy as np

from experiments.mcf_qm9 import EXPERIMENT
from experiments.mcf_qm9.config import get_config
from experiments.mcf_qm9.train import train_and_evaluate


def test_configs_and_claims():
    for preset in ("quick", "paper"):
        config = get_config(preset)
        assert {"seed", "num_seeds", "cpu_budget_s"} <= set(config)
    assert EXPERIMENT.name == "mcf_qm9"


def test_smoke_run(tmp_path):
    config = get_config("quick")
    config.dataset = "tiny"
    config.model_size = "micro"
    config.num_steps = 3
    config.batch_size = 8
    config.num_test = 3
    config.sampler_steps = 3
    config.eval_batch_size = 8
    results = train_and_evaluate(config, str(tmp_path))
    for claim in EXPERIMENT.claims:
        assert claim.metric in results
        if claim.baseline:
            assert claim.baseline in results
    assert len(results["cov_r"]) == 3
    assert all(0.0 <= v <= 1.0 for v in results["cov_r"])
    assert all(np.isfinite(results["mat_r"])) and all(np.isfinite(results["random_mat_r"]))
    assert (tmp_path / "rejected.json").exists()
    assert (tmp_path / "mcf_qm9_mat_r.png").exists()
