"""Smoke run of gadc_metattack's quick config, shrunk to a few epochs."""

from experiments.gadc_metattack import EXPERIMENT
from experiments.gadc_metattack.config import get_config
from experiments.gadc_metattack.train import train_and_evaluate


def test_smoke(tmp_path):
    config = get_config("quick")
    config.datasets = ("cora",)
    config.ptb_rates = (0.25,)
    config.num_terms = (1,)
    config.num_runs = 2
    config.epochs = 3
    config.baseline_runs = 1
    config.gcn.epochs = 2
    config.appnp.epochs = 2
    config.appnp.num_terms = 2
    result = train_and_evaluate(config, str(tmp_path))
    assert set(result) == {"cora_0.25_gadc", "cora_0.25_gcn", "cora_0.25_appnp"}
    assert len(result["cora_0.25_gadc"]) == 2
    assert all(0.0 <= v <= 100.0 for v in result["cora_0.25_gadc"])
    assert {c.metric for c in EXPERIMENT.claims} >= {"cora_0.25_gadc"}
