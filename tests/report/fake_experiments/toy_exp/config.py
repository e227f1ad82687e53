import ml_collections


def get_config(preset="quick"):
    config = ml_collections.ConfigDict()
    config.seed = 0
    config.num_seeds = 3
    config.cpu_budget_s = 1.0
    config.lr = 0.1
    config.model = ml_collections.ConfigDict({"width": 4})
    config.gap = 1.0 if preset == "quick" else 2.0
    return config
