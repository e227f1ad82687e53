import json

import pytest

from jaxlab import cli
from jaxlab.report import registry

FAKE = "tests.report.fake_experiments"


@pytest.fixture
def fake_registry(monkeypatch):
    real = registry.discover
    monkeypatch.setattr(registry, "discover", lambda package=FAKE: real(FAKE))


def test_list(fake_registry, capsys):
    assert cli.main(["list"]) == 0
    assert "toy_exp" in capsys.readouterr().out


def test_run_with_overrides(fake_registry, tmp_path, capsys):
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.lr=0.3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["echo"] for r in out["results"]] == [0.3, 0.3, 0.3]


def test_unknown_names_and_keys_are_errors(fake_registry, tmp_path):
    with pytest.raises(SystemExit, match="valid: broken_exp, toy_exp"):
        cli.main(["run", "nope"])
    with pytest.raises(SystemExit, match="unknown config key .nope.*keys: cpu_budget_s, gap"):
        cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.nope=1"])
    with pytest.raises(SystemExit, match="unknown experiment 'x'"):
        cli.main(["reproduce", "--only", "x"])
    with pytest.raises(SystemExit, match="unknown benchmark"):
        cli.main(["bench", "no_such_benchmark"])


def test_reproduce_with_a_failing_experiment_still_reports(fake_registry, tmp_path):
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 1
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["verdict"] for r in rows} >= {"failed", "supports"}


def test_reproduce_with_nothing_registered(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(registry, "discover", lambda package="experiments": {})
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 0
    assert "No experiment is registered yet" in (tmp_path / "REPORT.md").read_text()
