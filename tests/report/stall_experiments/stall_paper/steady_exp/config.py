from jaxlab.report import base_config


def get_config(preset="quick"):
    config = base_config(preset)
    config.num_seeds = 1
    config.cpu_budget_s = 1.0
    return config
