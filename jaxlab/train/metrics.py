"""Metrics to a JSONL file and TensorBoard event files; hyper-parameters beside them.

``fit`` logs row by row; a whole-run scan (``scan_run``/``batch_runs``) returns its metrics
stacked over steps, which one call writes: ``log_history(workdir, history)``. On several
processes (``jax.distributed``) every process holds the same metrics and only process 0
writes them (the others would race on the same files).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np
from tensorboardX import SummaryWriter


class MetricsWriter:
    """Writes ``{step, **metrics}`` lines to ``<workdir>/metrics.jsonl`` and ``<workdir>/tb``."""

    def __init__(self, workdir: str | os.PathLike):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.path = self.workdir / "metrics.jsonl"
        self._tb = SummaryWriter(str(self.workdir / "tb"))

    def write_hparams(self, hparams: Mapping[str, Any]) -> None:
        text = json.dumps(dict(hparams), indent=2, sort_keys=True, default=str)
        (self.workdir / "hparams.json").write_text(text + "\n")
        self._tb.add_text("hparams", f"```\n{text}\n```", 0)

    def write(self, step: int, metrics: Mapping[str, float]) -> None:
        row = {"step": int(step), **{k: float(v) for k, v in metrics.items()}}
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        for key, value in row.items():
            if key != "step":
                self._tb.add_scalar(key, value, step)

    def write_history(
        self,
        history: Mapping[str, Any],
        *,
        first_step: int = 1,
        every: int = 1,
        step_axis: int = 0,
        prefix: str = "",
    ) -> int:
        """Writes metrics stacked over steps, one row per step; returns the rows written.

        A leaf of shape ``[steps]`` gives the scalar ``prefix + name``; a leaf with more
        axes (e.g. ``[steps, runs]``) gives one scalar per entry, ``name/i`` (``name/i/j``
        for two more axes). Rows already logged from ``first_step`` on (by an earlier,
        interrupted call) are replaced, never duplicated.

        Args:
          history: ``{name: array}``, every array with the same number of steps.
          first_step: the step number of the first entry.
          every: keep every this many steps (and the last).
          step_axis: the steps' axis in each array (e.g. 1 for ``[runs, steps]``).
          prefix: prepended to every name.
        """
        arrays = {k: np.moveaxis(np.asarray(v), step_axis, 0) for k, v in history.items()}
        lengths = {a.shape[0] for a in arrays.values()}
        if len(lengths) > 1:
            raise ValueError(f"history entries differ in their number of steps: {sorted(lengths)}")
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        num_steps = lengths.pop() if lengths else 0
        self.truncate_after(first_step - 1)
        kept = [t for t in range(num_steps) if (t + 1) % every == 0 or t == num_steps - 1]
        for t in kept:
            row = {}
            for name, array in arrays.items():
                for index, value in np.ndenumerate(array[t]):
                    suffix = "".join(f"/{i}" for i in index)
                    row[f"{prefix}{name}{suffix}"] = float(value)
            self.write(first_step + t, row)
        return len(kept)

    def read(self, up_to_step: int | None = None) -> list[dict[str, float]]:
        """The rows written so far (those with ``step <= up_to_step``)."""
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # the last line of a run killed mid-write
                break
        return [r for r in rows if up_to_step is None or r["step"] <= up_to_step]

    def truncate_after(self, step: int) -> list[dict[str, float]]:
        """Drops rows logged after ``step`` (by a run killed after its last checkpoint)."""
        rows = self.read(step)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return rows

    def close(self) -> None:
        self._tb.close()


def log_result(
    workdir: str | os.PathLike,
    result: Mapping[str, Any],
    hparams: Mapping[str, Any] | None = None,
    max_values: int = 64,
) -> int:
    """Logs an experiment's returned metrics as one ``result/...`` row after the last step
    logged in ``workdir`` (so every run's ``metrics.jsonl`` and TensorBoard end with what
    it reported); returns the step of that row.

    Numbers and numeric arrays of at most ``max_values`` entries become scalars
    (``result/name/i`` per entry, e.g. per seed); longer arrays (curves, samples) and
    non-numeric values are left to ``result.json``. Processes other than 0 write nothing
    and return 0.
    """
    if jax.process_index() != 0:
        return 0
    row: dict[str, float] = {}
    for name, value in result.items():
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if array.size > max_values:
            continue
        for index, entry in np.ndenumerate(array):
            row["result/" + name + "".join(f"/{i}" for i in index)] = float(entry)
    writer = MetricsWriter(workdir)
    try:
        if hparams is not None:
            writer.write_hparams(hparams)
        # An earlier, interrupted call of the same run may have logged its result row.
        rows = [r for r in writer.read() if not any(k.startswith("result/") for k in r)]
        writer.path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        step = int(max((r["step"] for r in rows), default=0)) + 1
        writer.write(step, row)
        return step
    finally:
        writer.close()


def log_history(workdir: str | os.PathLike, history: Mapping[str, Any], **kwargs: Any) -> int:
    """``MetricsWriter(workdir).write_history(history, **kwargs)`` and close: one call for an
    experiment to log the stacked per-step metrics of a whole-run scan (processes other
    than 0 write nothing and return 0).

    Example:
      >>> import tempfile
      >>> log_history(tempfile.mkdtemp(), {"loss": [3.0, 2.0, 1.5]})
      3
    """
    if jax.process_index() != 0:
        return 0
    writer = MetricsWriter(workdir)
    try:
        return writer.write_history(history, **kwargs)
    finally:
        writer.close()
