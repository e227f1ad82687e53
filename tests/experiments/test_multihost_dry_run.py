"""``jaxlab run NAME --preset paper --dry-run --multihost`` on 2 processes × 4 CPU devices
(gloo collectives): each process streams its own shard of the mock paper datasets
(``make_loader``'s ``ShardByJaxProcess``, ``eval_batches``' per-process share), the
batches are global arrays over ``data``, and every result reaches the host through
multi-host-safe gathers. Both processes must exit 0; process 0 writes ``run.json``, whose
datasets must be mock reads of the paper preset's datasets. Slow (DeiT-S compiles):
``pytest -m slow tests/experiments/test_multihost_dry_run.py``.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.experiments.test_dry_run import check_outputs
from tests.experiments.test_multihost import _free_port

NAMES = ("multimax_vit",)


def run_two_processes(name: str, workdir) -> dict:
    """``run.json`` of the paper dry run of ``name`` on 2 processes × 4 CPU devices."""
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "4",
           "JAX_CPU_COLLECTIVES_IMPLEMENTATION": "gloo",
           "JAX_CPU_ENABLE_ASYNC_DISPATCH": "false"}
    procs = [subprocess.Popen(
        [sys.executable, "-m", "jaxlab.cli", "run", name, "--preset", "paper", "--dry-run",
         "--workdir", str(workdir), "--multihost", "--coordinator", address,
         "--num_processes", "2", "--process_id", str(i)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for i in range(2)]
    errors = [proc.communicate(timeout=3600)[1] for proc in procs]
    for i, proc in enumerate(procs):
        assert proc.returncode == 0, f"{name}: process {i} failed:\n{errors[i][-4000:]}"
    return json.loads((workdir / "run.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_paper_dry_run_on_two_processes_of_four_devices(name, tmp_path):
    summary = run_two_processes(name, tmp_path)
    assert summary["datasets"], f"{name}: no dataset read"
    check_outputs(name, tmp_path, summary)
