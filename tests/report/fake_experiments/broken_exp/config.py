import ml_collections


def get_config(preset="quick"):
    return ml_collections.ConfigDict({"seed": 0, "num_seeds": 1, "cpu_budget_s": 1.0})
