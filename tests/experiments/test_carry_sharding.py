"""Every segmented-scan experiment keeps its carry on the mesh: at each segment of its
``smoke`` run (1 process × 8 CPU devices, and 2 processes × 4), every batched leaf of the
``segmented_scan_run`` carry that holds more than one run is split over every device of the
mesh, each device holding its own block of runs (never replicated, never on one device).

``segmented_scan_run`` records the carry's placement when ``JAXLAB_CARRY_PROBE`` names a
folder (``carry-<process>.jsonl``: sharding, device count, each local shard's run block).
Slow: a smoke run per experiment and layout.
"""

import json
import os
import subprocess
import sys

import pytest

from jaxlab.train.runs import CARRY_PROBE_ENV
from tests.experiments.smoke import multi_device_env
from tests.experiments.test_multihost import run_two_processes

SEGMENTED = (
    "diffusion_reproducibility",
    "drstrategy_maze",
    "eureka_two_step",
    "icl_nonlinear",
    "llark_music",
    "mc_ensemble_ood",
    "slwi_stream",
)
DEVICES = 8


def run_one_process(name: str, workdir) -> None:
    """``jaxlab run NAME --preset smoke`` on 1 process × 8 CPU devices."""
    env = multi_device_env({**os.environ, "JAX_NUM_CPU_DEVICES": str(DEVICES)})
    command = [sys.executable, "-m", "jaxlab.cli", "run", name, "--preset", "smoke"]
    done = subprocess.run(
        [*command, "--json", "--workdir", str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{name}: smoke run failed:\n{done.stderr[-3000:]}"


def carry_records(folder, processes: int) -> list[list[dict]]:
    """Per process, its probe's records in order."""
    out = []
    for i in range(processes):
        lines = (folder / f"carry-{i}.jsonl").read_text().splitlines()
        out.append([json.loads(line) for line in lines])
    return out


def assert_split_over_every_device(name: str, per_process: list[list[dict]]) -> None:
    """Each record (a batched carry leaf at a segment) of more than one run: split over all
    the devices, the devices' run blocks disjoint and covering the runs."""
    counts = {len(records) for records in per_process}
    assert len(counts) == 1 and counts != {0}, f"{name}: probe records {counts}"
    for records in zip(*per_process, strict=True):
        runs = records[0]["runs"]
        if runs <= 1:
            continue
        where = f"{name} at step {records[0]['step']} ({runs} runs)"
        for record in records:
            assert record["kind"] == "NamedSharding", f"{where}: {record['kind']}"
            assert record["num_devices"] == record["global_devices"] == DEVICES, where
        blocks = sorted(
            {(device, start, stop) for r in records for device, start, stop in r["blocks"]}
        )
        assert len({device for device, _, _ in blocks}) == DEVICES, f"{where}: {blocks}"
        spans = sorted((start, stop) for _, start, stop in blocks)
        size = runs // DEVICES
        assert spans == [(i * size, (i + 1) * size) for i in range(DEVICES)], f"{where}: {spans}"


@pytest.mark.slow
@pytest.mark.parametrize("name", SEGMENTED)
def test_carry_split_over_runs_on_one_process_of_eight(name, tmp_path, monkeypatch):
    probe = tmp_path / "probe"
    probe.mkdir()
    monkeypatch.setenv(CARRY_PROBE_ENV, str(probe))
    run_one_process(name, tmp_path / "run")
    assert_split_over_every_device(name, carry_records(probe, 1))


@pytest.mark.slow
@pytest.mark.parametrize("name", SEGMENTED)
def test_carry_split_over_runs_on_two_processes_of_four(name, tmp_path, monkeypatch):
    probe = tmp_path / "probe"
    probe.mkdir()
    monkeypatch.setenv(CARRY_PROBE_ENV, str(probe))
    run_two_processes(name, tmp_path / "run")
    assert_split_over_every_device(name, carry_records(probe, 2))
