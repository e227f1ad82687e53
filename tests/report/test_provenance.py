"""A committed result records the code that computed it, and `report --check` sees a change."""

import json
import shutil
from pathlib import Path

from jaxlab.data import prerequisites
from jaxlab.report import codehash, markdown, provenance, readme, registry, runner

FAKE = Path(__file__).parent / "fake_experiments"


def _package(tmp_path, monkeypatch) -> str:
    """A private copy of the fake experiments, free to edit, under a name of its own (a
    module imported by another test stays in ``sys.modules``)."""
    name = f"prov_{tmp_path.name}"
    shutil.copytree(FAKE, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_reproduce_writes_a_record_that_report_copies(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch)
    experiment = registry.discover(package)["toy_exp"]
    records = runner.run_all([experiment], tmp_path / "out", progress=False)
    markdown.write_report(records, tmp_path / "out", "quick", 1.0)
    written = json.loads((tmp_path / "out/results/provenance/toy_exp.json").read_text())
    assert written["experiment"] == "toy_exp" and written["preset"] == "quick"
    assert set(written["parts"]) == set(codehash.PARTS)
    committed = tmp_path / "docs"
    (committed / "provenance").mkdir(parents=True)
    (committed / "provenance/gone.json").write_text("{}")  # another experiment's: kept
    assert readme.copy_results(tmp_path / "out", committed) == ["toy_exp"]
    assert provenance.read(committed, "toy_exp") == written
    assert (committed / "provenance/gone.json").is_file()
    assert provenance.stale(committed, "quick", package) == []


def test_stale_names_what_changed(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch)
    experiment = registry.discover(package)["toy_exp"]
    results = tmp_path / "results"
    results.mkdir()
    (results / "toy_exp.json").write_text("[]\n")
    (results / "not_registered.json").write_text("[]\n")
    [line] = provenance.stale(results, "quick", package)
    assert line.startswith("toy_exp: no provenance record of the quick preset")
    assert provenance.stale(results, "quick", package, required=False) == []
    parts = codehash.code_parts(experiment.module, experiment.get_config("quick"))
    provenance.write(results, "toy_exp", "paper", parts)
    [line] = provenance.stale(results, "quick", package)
    assert "no provenance record of the quick preset" in line
    provenance.write(results, "toy_exp", "quick", parts)
    assert provenance.stale(results, "quick", package) == []

    train = tmp_path / package / "toy_paper/toy_exp/train.py"
    train.write_text(train.read_text() + "\n# an edit\n")
    [line] = provenance.stale(results, "quick", package)
    assert "its experiment code changed since" in line
    assert "--only toy_exp" in line

    provenance.write(results, "toy_exp", "quick", {**parts, "experiment": "0" * 64})
    bumped = tuple((n, v + ".post1" if n == "numpy" else v) for n, v in codehash.package_versions())
    monkeypatch.setattr(codehash, "package_versions", lambda: bumped)
    [line] = provenance.stale(results, "quick", package)
    assert "experiment code and installed package versions changed" in line


def test_code_hash_changes_with_each_part(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch)
    module = registry.discover(package)["toy_exp"].module
    before = codehash.code_hash(module)
    train = tmp_path / package / "toy_paper/toy_exp/train.py"
    train.write_text(train.read_text() + "\n# an edit\n")
    after = codehash.code_hash(module)
    assert before != after
    assert codehash.changed_parts(
        codehash.code_parts(module), {**codehash.code_parts(module), "data": "x"}
    ) == ["data"]


def test_absent_data_is_named_not_called_other_data(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch)
    experiment = registry.discover(package)["toy_exp"]
    results = tmp_path / "results"
    results.mkdir()
    (results / "toy_exp.json").write_text("[]\n")
    parts = codehash.code_parts(experiment.module, experiment.get_config("quick"))
    provenance.write(results, "toy_exp", "quick", {**parts, "data": "0" * 64})
    [line] = provenance.stale(results, "quick", package)
    assert "its data files changed since" in line  # the data is here and differs
    remedy = "graph datasets: no graphs/ folder in the data directory /nowhere"
    monkeypatch.setattr(prerequisites, "missing_for_config", lambda requires, config: [remedy])
    [line] = provenance.stale(results, "quick", package)
    absent = "its data is absent here, so its results could not be checked against it"
    assert line == f"toy_exp: {absent}: {remedy}"
    provenance.write(results, "toy_exp", "quick", {**parts, "data": "0" * 64, "packages": "1"})
    absent, other = provenance.stale(results, "quick", package)
    assert "data is absent here" in absent and "installed package versions changed" in other
