"""Which code computed a committed result: one record per experiment beside its claim rows.

``<results_dir>/provenance/<experiment>.json`` holds the experiment's name, the preset and
``jaxlab.report.codehash.code_parts`` of the code, the installed packages and the data
that ran it (``jaxlab reproduce`` writes it; ``jaxlab report --from`` copies it with the
rows). ``stale`` compares each record with the present checkout, so ``jaxlab report
--check`` fails when a committed sample was produced by other code than the code it sits
beside, and names the parts that differ.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from jaxlab.data import prerequisites
from jaxlab.report import codehash, registry

FOLDER = "provenance"


#: How ``stale`` names each part of ``codehash.PARTS`` that changed.
_PART_LABELS = {
    "experiment": "experiment code",
    "jaxlab": "jaxlab modules",
    "packages": "installed package versions",
    "data": "data files",
}


def write(results_dir: str | os.PathLike, name: str, preset: str, parts: dict[str, str]) -> None:
    """Writes ``<results_dir>/provenance/<name>.json`` for results of ``preset`` computed by
    the code whose ``code_parts`` are ``parts``."""
    folder = Path(results_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    record = {"experiment": name, "preset": preset, "parts": dict(sorted(parts.items()))}
    (folder / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")


def read(results_dir: str | os.PathLike, name: str) -> dict[str, Any] | None:
    """The provenance record of ``name`` under ``results_dir``, or ``None``."""
    path = Path(results_dir) / FOLDER / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def stale(
    results_dir: str | os.PathLike,
    preset: str,
    package: str = registry.EXPERIMENTS_PACKAGE,
    required: bool = True,
) -> list[str]:
    """One line per experiment with results under ``results_dir`` (``<name>.json``) whose
    provenance is missing (only when ``required``), is of another preset, or differs from
    the present checkout's code, packages or data (``codehash.code_parts`` of the
    experiment's ``preset`` config). Data that is not here
    (``jaxlab.data.prerequisites.missing_for_config``) is said to be absent, with the
    remedy, not to differ. Results of an experiment that is no longer registered
    are left to ``readme.stale_claims``."""
    experiments = registry.discover(package)
    lines = []
    for path in sorted(Path(results_dir).glob("*.json")):
        name = path.stem
        if name not in experiments:
            continue
        rerun = (
            f"run `jaxlab reproduce --preset {preset} --only {name}` and "
            f"`jaxlab report --preset {preset} --from reports/{preset}`"
        )
        record = read(results_dir, name)
        if record is None and not required:
            continue
        if record is None or record.get("preset") != preset:
            lines.append(f"{name}: no provenance record of the {preset} preset; {rerun}")
            continue
        experiment = experiments[name]
        config = experiment.get_config(preset)
        current = codehash.code_parts(experiment.module, config)
        changed = codehash.changed_parts(record["parts"], current)
        absent = prerequisites.missing_for_config(experiment.requires, config)
        if "data" in changed and absent:
            lines.append(
                f"{name}: its data is absent here, so its results could not be checked "
                f"against it: {'; '.join(absent)}"
            )
            changed.remove("data")
        if changed:
            what = " and ".join(_PART_LABELS[part] for part in changed)
            lines.append(f"{name}: its {what} changed since its results were computed; {rerun}")
    return lines
