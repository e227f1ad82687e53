"""The notebooks' helpers, and ``python -m jaxlab.report.notebooks``: runs them in place.

A notebook gets an experiment's results with ``jaxlab.report.runner.load_or_run`` (a list of
per-call result dicts); :func:`pooled` turns one metric of them into a flat array of samples,
:func:`merged` turns them into one dict of arrays, :func:`print_claims` prints every claim
beside its baseline, and :func:`call_dirs` names the folders the calls wrote artefacts to.

The command executes notebooks top to bottom at their own ``PRESET`` (``quick``: it reuses
the results ``make reproduce`` saved under ``$JAXLAB_REPORTS_DIR/quick``, default
``reports/quick``), writes them back with their outputs, drops execution metadata, widget
state and any output over :data:`MAX_OUTPUT_BYTES`, and exits non-zero naming every notebook
that failed. ``--preset`` runs another preset (the parameters cell is restored afterwards:
for trying the command, not for committing)::

    python -m jaxlab.report.notebooks [--preset smoke] [notebooks/x.ipynb ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxlab.report import registry, runner

#: Outputs larger than this (their JSON, in bytes) are dropped from the written notebook.
MAX_OUTPUT_BYTES = 200_000
REPO = Path(__file__).resolve().parents[2]


def pooled(results: Sequence[dict[str, Any]], metric: str) -> np.ndarray:
    """``metric``'s samples over ``load_or_run``'s per-call results, flattened in call order
    (a batched call's list holds one entry per seed)."""
    return np.concatenate([np.ravel(np.asarray(r[metric], np.float64)) for r in results])


def merged(results: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """One dict of arrays: a single call's values as they are (a batched call's per-seed
    lists, or a curve); several calls' values stacked along a new first axis (one per call).
    """
    if len(results) == 1:
        return {k: np.asarray(v) for k, v in results[0].items()}
    return {k: np.stack([np.asarray(r[k]) for r in results]) for k in results[0]}


def print_claims(name: str, results: Sequence[dict[str, Any]]) -> None:
    """Prints each claim of experiment ``name``: our mean, and the baseline's or the paper's."""
    print(name)
    for claim in registry.get_experiment(name).claims:
        ours = pooled(results, claim.metric).mean()
        base = pooled(results, claim.baseline).mean() if claim.baseline else claim.paper
        print(f"  {claim.name[:70]:70s} ours {ours:10.3f}  vs {base}")


def call_dirs(name: str, preset: str = "quick") -> list[Path]:
    """The folders ``load_or_run(name, preset)`` ran its calls in (one per call, in order)."""
    workdir = runner.default_out(preset) / "workdirs" / name
    config = registry.get_experiment(name).get_config(preset)
    return [workdir / folder for folder, _ in runner.calls(config)]


def strip_outputs(notebook) -> list[str]:
    """Drops execution metadata, widget state and large outputs; returns what was dropped."""
    dropped = []
    notebook.metadata.pop("widgets", None)
    for index, cell in enumerate(notebook.cells):
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.outputs:
            size = len(json.dumps(output))
            if size > MAX_OUTPUT_BYTES:
                dropped.append(f"cell {index}: {output.get('output_type')} of {size} bytes")
            else:
                kept.append(output)
        cell.outputs = kept
    return dropped


def execute(path: Path, preset: str | None = None, timeout: int = 3600) -> list[str]:
    """Runs notebook ``path`` in place (from the repository root) and writes it back with its
    outputs; ``preset`` replaces its parameters cell for the run. Returns the dropped
    outputs.

    Raises:
      nbclient.exceptions.CellExecutionError: a cell failed (the file is left unchanged).
    """
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    params = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    original = [c.source for c in params]
    if preset is not None:
        for cell in params:
            cell.source = f'PRESET = "{preset}"'
    NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO)}},
    ).execute()
    for cell, source in zip(params, original, strict=True):
        cell.source = source
    dropped = strip_outputs(notebook)
    nbformat.write(notebook, path)
    return dropped


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (1 when any notebook failed)."""
    parser = argparse.ArgumentParser(
        prog="python -m jaxlab.report.notebooks",
        description="Execute notebooks in place at their PRESET and keep their outputs.",
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, help="notebooks to run (default: every notebooks/*.ipynb)"
    )
    parser.add_argument(
        "--preset",
        default=None,
        help="run at this preset instead of the notebook's (not for commits)",
    )
    args = parser.parse_args(argv)
    paths = args.paths or sorted((REPO / "notebooks").glob("*.ipynb"))
    failed = []
    for path in paths:
        print(f"notebooks: running {path}", flush=True)
        try:
            for line in execute(path, args.preset):
                print(f"notebooks: {path.name}: dropped {line}", flush=True)
        except Exception as error:  # noqa: BLE001 - report every failing notebook, then fail
            print(
                f"notebooks: {path.name} FAILED: {type(error).__name__}: {error}",
                file=sys.stderr,
                flush=True,
            )
            failed.append(path.name)
    if failed:
        print(f"notebooks: {len(failed)} failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
