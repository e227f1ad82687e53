import time
from pathlib import Path


def train_and_evaluate(config, workdir):
    """Sleeps (no CPU use, like a wedged thread pool) on its first call, returns on the next."""
    marker = Path(workdir).parents[1] / "stalled-once"
    if not marker.exists():
        marker.write_text("")
        time.sleep(600)
    return {"m": [1.0]}
