"""The data check before a run: a paper preset needs its own datasets, not the quick data."""

import json

import pytest

from jaxlab.data import prerequisites
from jaxlab.report import base_config, registry


def _paper_config(datasets, data_dir):
    config = base_config("paper")
    config.datasets = datasets
    config.data_dir = str(data_dir)
    return config


def _prepare(root, name, version="3.0.2"):
    folder = root / name / version
    folder.mkdir(parents=True)
    (folder / "dataset_info.json").write_text(json.dumps({"name": name}))


def test_paper_preset_names_its_missing_tfds_dataset(tmp_path):
    missing = prerequisites.missing_for_config((), _paper_config(("imagenet2012",), tmp_path))
    (remedy,) = missing
    assert "'imagenet2012'" in remedy and str(tmp_path) in remedy
    assert "jaxlab data fetch imagenet2012" in remedy


def test_paper_preset_passes_with_its_data_and_without_the_quick_data(tmp_path, monkeypatch):
    monkeypatch.setitem(prerequisites.CHECKS, "fashion_mnist", lambda d: "quick data missing")
    _prepare(tmp_path, "cifar10")
    _prepare(tmp_path / "glue", "sst2", "2.0.0")
    config = _paper_config(("cifar10", "glue/sst2", "generated"), tmp_path)
    assert prerequisites.missing_for_config(("fashion_mnist",), config) == []
    config.preset = "quick"
    assert prerequisites.missing_for_config(("fashion_mnist",), config) == ["quick data missing"]


def test_an_unprepared_folder_is_missing(tmp_path):
    (tmp_path / "cifar10" / "3.0.2").mkdir(parents=True)  # a download that never finished
    assert prerequisites.missing_for_config((), _paper_config(("cifar10",), tmp_path))


def test_dry_run_needs_no_data(tmp_path):
    config = _paper_config(("imagenet2012",), tmp_path)
    config.dry_run = True
    assert prerequisites.missing_for_config(("fashion_mnist",), config) == []


@pytest.mark.parametrize("name", list(registry.discover()))
def test_every_paper_dataset_has_a_check(name, tmp_path):
    """Every name a paper preset lists is a TFDS name or a known local source, and none of
    them is the quick presets' Debian Fashion-MNIST."""
    config = registry.get_experiment(name).get_config("paper")
    for dataset in config.datasets:
        assert dataset not in ("fashion_mnist_idx", "qm9pack", "shakespeare"), (name, dataset)
        if dataset not in prerequisites.LOCAL_SOURCES:
            assert dataset.replace("/", "").replace("_", "").isalnum(), (name, dataset)
    config.data_dir = str(tmp_path)
    for remedy in prerequisites.missing_for_config((), config):
        assert "not prepared" in remedy or "graph" in remedy
