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
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "JAX_NUM_CPU_DEVICES": "4",
        "JAX_CPU_COLLECTIVES_IMPLEMENTATION": "gloo",
        "JAX_CPU_ENABLE_ASYNC_DISPATCH": "false",
    }
    # stderr goes to files, not pipes: a loader's worker process that outlives its parent
    # would hold a pipe open and keep the test waiting after both processes ended.
    logs = [workdir.parent / f"{workdir.name}.process{i}.log" for i in range(2)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jaxlab.cli",
                "run",
                name,
                "--preset",
                "paper",
                "--dry-run",
                "--workdir",
                str(workdir),
                "--multihost",
                "--coordinator",
                address,
                "--num_processes",
                "2",
                "--process_id",
                str(i),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            text=True,
        )
        for i, log in enumerate(logs)
    ]
    for i, proc in enumerate(procs):
        proc.wait(timeout=3600)
        assert proc.returncode == 0, f"{name}: process {i} failed:\n{logs[i].read_text()[-4000:]}"
    return json.loads((workdir / "run.json").read_text())


@pytest.mark.slow
@pytest.mark.pod
@pytest.mark.parametrize("name", NAMES)
def test_paper_dry_run_on_two_processes_of_four_devices(name, tmp_path):
    summary = run_two_processes(name, tmp_path)
    assert summary["datasets"], f"{name}: no dataset read"
    check_outputs(name, tmp_path, summary)
