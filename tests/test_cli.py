import dataclasses
import json

import pytest

from jaxlab import cli
from jaxlab.report import registry

FAKE = "tests.report.fake_experiments"


@pytest.fixture
def fake_registry(monkeypatch):
    real_papers = registry.discover_papers
    monkeypatch.setattr(registry, "EXPERIMENTS_PACKAGE", FAKE)
    monkeypatch.setattr(registry, "discover_papers", lambda package=FAKE: real_papers(FAKE))


def test_list_groups_by_paper(fake_registry, capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("toy_paper: A. Author. Toy paper. ICML 2024\n")
    assert "    toy_exp " in out


def test_run_with_overrides(fake_registry, tmp_path, capsys):
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.lr=0.3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["echo"] for r in out["results"]] == [0.3, 0.3, 0.3]


def test_unknown_names_and_keys_are_errors(fake_registry, tmp_path):
    with pytest.raises(SystemExit, match="valid: batched_exp, broken_exp, toy_exp"):
        cli.main(["run", "nope"])
    with pytest.raises(SystemExit, match="unknown config key .nope.*keys: batch_seeds"):
        cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.nope=1"])
    with pytest.raises(SystemExit, match="unknown experiment 'x'"):
        cli.main(["reproduce", "--only", "x"])
    with pytest.raises(SystemExit, match="unknown paper 'nope'"):
        cli.main(["reproduce", "--paper", "nope"])
    with pytest.raises(SystemExit, match="unknown benchmark"):
        cli.main(["bench", "no_such_benchmark"])


def test_reproduce_with_a_failing_experiment_still_reports(fake_registry, tmp_path):
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 1
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["verdict"] for r in rows} >= {"failed", "supports"}


def test_reproduce_by_paper(fake_registry, tmp_path):
    assert cli.main(["reproduce", "--paper", "toy_paper", "--only", "toy_exp", "batched_exp",
                     "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["experiment"] for r in rows} == {"toy_exp", "batched_exp"}


def test_reproduce_stops_before_running_when_data_is_missing(fake_registry, monkeypatch,
                                                             tmp_path, capsys):
    from jaxlab.data import prerequisites

    monkeypatch.setitem(prerequisites.CHECKS, "fashion_mnist", lambda d: "apt-get install it")
    toy = registry.discover()["toy_exp"]
    monkeypatch.setattr(registry, "discover", lambda package=FAKE: {
        "toy_exp": dataclasses.replace(toy, requires=("fashion_mnist",))})
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 2
    assert "toy_exp: apt-get install it" in capsys.readouterr().err
    assert not (tmp_path / "workdirs").exists()


def test_reproduce_with_nothing_registered(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(registry, "discover", lambda package="experiments": {})
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 0
    assert "No experiment is registered yet" in (tmp_path / "REPORT.md").read_text()
