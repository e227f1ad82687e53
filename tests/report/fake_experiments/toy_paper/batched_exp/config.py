from jaxlab.report import base_config


def get_config(preset="quick"):
    config = base_config(preset)
    config.num_seeds, config.batch_seeds = 4, True
    return config
