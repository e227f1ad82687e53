"""Registry-wide: every experiment's ``paper`` preset runs as a dry run on 8 fake devices.

``jaxlab run NAME --preset paper --dry-run`` runs the paper program at its real model shapes
on mock data of the paper's datasets (``tfds.testing.mock_data``): 2 steps a phase, a global
batch of at most 8 rows per device, one evaluation batch. It must write ``run.json`` with the
datasets it read (each ``mock``), ``metrics.jsonl``, and a checkpoint or a finished piece
(``jaxlab.train.resumable``). Slow (the paper models' compile times): ``make test-pod``
runs it.
"""

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from jaxlab.report import registry

from .smoke import multi_device_env

NAMES = sorted(registry.discover())
# Results a dry run must reach where a path of the real run depends on the data: MCF's mock
# molecules parse, so RDKit's metric scores every one and the ETKDG baseline embeds each.
DRY_RUN_RESULTS = {"mcf_qm9": {"num_unparsable": 0.0, "etkdg_failures": 0.0}}


def dry_run(
    name: str,
    workdir: Path,
    devices: int = 8,
    launcher: Sequence[str] = ("-m", "jaxlab.cli"),
) -> dict:
    """Runs the dry run in a subprocess on ``devices`` CPU devices; returns its run.json.

    ``launcher``: the Python arguments that run ``jaxlab`` with the arguments after them
    (``-m jaxlab.cli``, or a driver script such as ``dry_run_rss.py`` and its own
    arguments).
    """
    env = multi_device_env({**os.environ, "JAX_NUM_CPU_DEVICES": str(devices)})
    done = subprocess.run(
        [
            sys.executable,
            *launcher,
            "run",
            name,
            "--preset",
            "paper",
            "--dry-run",
            "--workdir",
            str(workdir),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{name}: dry run failed:\n{done.stderr[-4000:]}"
    return json.loads((workdir / "run.json").read_text())


def check_outputs(name: str, workdir: Path, summary: dict) -> None:
    config = registry.get_experiment(name).get_config("paper")
    assert summary["dry_run"] is True
    datasets = summary["datasets"]
    assert all(set(d) == {"name", "split", "mock"} and d["mock"] is True for d in datasets)
    read = {d["name"].split("/")[0] for d in datasets}
    tfds_names = {n for n in config.datasets if n in read}
    assert tfds_names == read, f"{name}: read {read}, config.datasets {config.datasets}"
    assert list(workdir.rglob("metrics.jsonl")), f"{name}: no metrics.jsonl"
    saved = [p for p in workdir.rglob("checkpoints") if any(p.iterdir())]
    saved += list(workdir.rglob("runs/*.npz"))  # finished pieces (jaxlab.train.resumable)
    assert saved, f"{name}: nothing written that a killed run resumes from"
    for key, value in DRY_RUN_RESULTS.get(name, {}).items():
        assert all(r[key] == value for r in summary["results"]), (name, key, summary["results"])


@pytest.mark.slow
@pytest.mark.pod
@pytest.mark.parametrize("name", NAMES)
def test_paper_preset_dry_run_on_8_devices(name, tmp_path):
    check_outputs(name, tmp_path, dry_run(name, tmp_path))
