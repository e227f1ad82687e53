"""``MetricsWriter.write_history`` / ``log_history``: stacked per-step metrics as rows."""

import json

import jax
import numpy as np
import pytest

from jaxlab.train.metrics import MetricsWriter, log_history, log_result


def rows(path):
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_history_rows_per_step_and_per_run(tmp_path):
    loss = np.array([[3.0, 2.0, 1.0, 0.5], [4.0, 3.0, 2.0, 1.0]])  # [runs, steps]
    n = log_history(
        tmp_path,
        {"loss": loss, "lr": np.array([0.1, 0.1, 0.05, 0.05])[None]},
        step_axis=1,
        every=2,
        prefix="train/",
    )
    assert n == 2
    got = rows(tmp_path)
    assert [r["step"] for r in got] == [2, 4]
    assert got[1] == {"step": 4, "train/loss/0": 0.5, "train/loss/1": 1.0, "train/lr/0": 0.05}
    assert any((tmp_path / "tb").iterdir())


def test_rewriting_replaces_rows_instead_of_duplicating(tmp_path):
    writer = MetricsWriter(tmp_path)
    writer.write_history({"a": np.arange(5.0)})
    writer.write_history({"a": 10 + np.arange(3.0)}, first_step=3)
    writer.close()
    assert [(r["step"], r["a"]) for r in rows(tmp_path)] == [
        (1, 0.0),
        (2, 1.0),
        (3, 10.0),
        (4, 11.0),
        (5, 12.0),
    ]


def test_bad_history(tmp_path):
    with pytest.raises(ValueError, match="number of steps"):
        log_history(tmp_path, {"a": np.zeros(3), "b": np.zeros(4)})
    with pytest.raises(ValueError, match="every"):
        log_history(tmp_path, {"a": np.zeros(3)}, every=0)


def test_only_process_zero_writes(tmp_path, monkeypatch):
    # On several processes every one holds the same metrics; the others would race on the
    # same files (tensorboardX's makedirs), so they write nothing.
    monkeypatch.setattr(jax, "process_index", lambda: 1)
    assert log_history(tmp_path / "run", {"loss": np.zeros(3)}) == 0
    assert log_result(tmp_path / "run", {"acc": 0.5}) == 0
    assert not (tmp_path / "run").exists()
