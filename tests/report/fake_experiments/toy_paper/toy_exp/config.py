import ml_collections

from jaxlab.report import base_config


def get_config(preset="quick"):
    config = base_config(preset)
    config.num_seeds = 3
    config.cpu_budget_s = 1.0
    config.lr = 0.1
    config.model = ml_collections.ConfigDict({"width": 4})
    config.gap = 1.0 if preset != "paper" else 2.0
    return config
