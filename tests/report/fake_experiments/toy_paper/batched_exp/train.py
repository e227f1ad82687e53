from pathlib import Path


def train_and_evaluate(config, workdir):
    calls = Path(workdir) / "calls.txt"
    calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
    seeds = range(config.seed, config.seed + config.num_seeds)
    return {"m": [2.0 + 0.01 * s for s in seeds], "b": [1.0 + 0.01 * s for s in seeds]}
