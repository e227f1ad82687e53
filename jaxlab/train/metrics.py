"""Metrics to a JSONL file and TensorBoard event files; hyper-parameters beside them."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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

    def read(self, up_to_step: int | None = None) -> list[dict[str, float]]:
        """The rows written so far (those with ``step <= up_to_step``)."""
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text().splitlines() if line]
        return [r for r in rows if up_to_step is None or r["step"] <= up_to_step]

    def truncate_after(self, step: int) -> list[dict[str, float]]:
        """Drops rows logged after ``step`` (by a run killed after its last checkpoint)."""
        rows = self.read(step)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return rows

    def close(self) -> None:
        self._tb.close()
