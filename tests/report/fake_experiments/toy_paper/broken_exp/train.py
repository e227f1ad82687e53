def train_and_evaluate(config, workdir):
    raise RuntimeError("boom")
