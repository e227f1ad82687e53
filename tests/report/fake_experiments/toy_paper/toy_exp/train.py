import json
from pathlib import Path


def train_and_evaluate(config, workdir):
    calls = Path(workdir) / "calls.txt"
    calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
    (Path(workdir) / "config.json").write_text(config.to_json())
    noise = 0.01 * config.seed
    return {
        "method": 1.0 + config.gap + noise,
        "base": 1.0 + noise,
        "runs": [1.5 + noise, 1.6 + noise],
        "echo": json.loads(config.to_json())["lr"],
    }
