"""docs/paper_presets.md is current, and every row's datasets, steps, batch and seeds agree
with its experiment's ``get_config("paper")``; a "same" row runs the paper's values."""

import re
from pathlib import Path

import ml_collections
import pytest

from jaxlab.data import prerequisites
from jaxlab.report import paper_presets, registry

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = registry.discover()
OURS, PAPERS = paper_presets.OURS, paper_presets.PAPERS


def _committed_rows() -> dict[str, dict[str, str]]:
    """The committed table, one ``{column: cell}`` per experiment name (cells unescaped)."""
    lines = [ln for ln in (ROOT / paper_presets.DOC).read_text().splitlines() if ln.startswith("|")]

    def cells(line: str) -> list[str]:
        inner = line.strip().removeprefix("|").removesuffix("|")
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]

    header = cells(lines[0])
    assert set(lines[1]) == {"|", "-"}, lines[1]
    rows = {}
    for line in lines[2:]:
        row = dict(zip(header, cells(line), strict=True))
        rows[row["experiment"].strip("`")] = row
    return rows


ROWS = _committed_rows()


def _key_values(cell: str) -> dict[str, int]:
    """``"batch_size 50, eval_batch_size 500"`` -> ``{"batch_size": 50, ...}``."""
    if cell == paper_presets.NONE:
        return {}
    pairs = [item.split(" ") for item in cell.split(", ")]
    assert all(len(p) == 2 and p[1].isdigit() for p in pairs), cell
    return {key: int(value) for key, value in pairs}


def _numbers(text: str) -> set[int]:
    """The integers written in ``text`` ("390,625" is one number; "1e-4", "2.0" are none)."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return {int(n) for n in re.findall(r"(?<![\w.,-])\d+(?![\w.]|,\d)", text)}


def test_the_committed_table_is_current():
    committed = (ROOT / paper_presets.DOC).read_text()
    assert committed == paper_presets.render(), (
        "docs/paper_presets.md is stale: run `python -m jaxlab.report.paper_presets`"
    )


def test_the_table_has_one_row_per_experiment():
    assert sorted(ROWS) == sorted(EXPERIMENTS)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_the_row_states_the_paper_presets_datasets_steps_batch_and_seeds(name):
    """The doc's cells of our paper preset, parsed, against ``get_config("paper")``."""
    row, setting = ROWS[name], EXPERIMENTS[name].paper_setting
    config = EXPERIMENTS[name].get_config("paper")
    assert config.datasets, f"{name}: the paper preset names no datasets"
    assert row[OURS["datasets"]].split(", ") == list(config.datasets), name
    assert row[PAPERS["datasets"]].split(", ") == list(setting.datasets), name

    assert setting.steps_key in config, f"{name}: config has no {setting.steps_key!r}"
    steps = config[setting.steps_key]
    assert isinstance(steps, int) and steps > 0, (name, steps)
    assert _key_values(row[OURS["steps"]]) == {setting.steps_key: steps}, name

    batches = {k: config[k] for k in config.keys() if k.endswith(("batch", "batch_size"))}
    assert all(isinstance(b, int) and b > 0 for b in batches.values()), (name, batches)
    assert _key_values(row[OURS["batch"]]) == batches, name

    assert int(row[OURS["seeds"]]) == config.num_seeds, name
    stated = "not stated" if setting.seeds is None else str(setting.seeds)
    assert row[PAPERS["seeds"]] == stated, name


SAME = sorted(name for name, row in ROWS.items() if row["difference"] == paper_presets.SAME)


def test_some_rows_are_the_papers_setting():
    assert SAME


@pytest.mark.parametrize("name", SAME)
def test_a_same_row_runs_the_papers_datasets_steps_batch_and_seeds(name):
    """Where the difference is "same", our columns hold the paper's values."""
    row = ROWS[name]
    assert row[OURS["datasets"]] == row[PAPERS["datasets"]], name
    (steps,) = _key_values(row[OURS["steps"]]).values()
    assert steps in _numbers(row[PAPERS["steps"]]), (name, steps, row[PAPERS["steps"]])
    batches = _key_values(row[OURS["batch"]])
    if batches:
        assert set(batches.values()) & _numbers(row[PAPERS["batch"]]), (name, batches)
    else:  # no batch key: every step takes all the data, as the paper's must
        assert "full" in row[PAPERS["batch"]], (name, row[PAPERS["batch"]])
    if row[PAPERS["seeds"]] != "not stated":
        assert row[OURS["seeds"]] == row[PAPERS["seeds"]], name


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_the_difference_counts_our_seeds_and_steps_as_the_config_does(name):
    """A difference that writes "N seeds", or "N <unit>" for a step key ``num_<unit>`` or
    ``<unit>`` ("epochs", "rounds"), optionally with one word between ("5 classifier
    seeds", "10,000 SGD steps"), writes the paper preset's N. (A key of one phase, like
    ``nem_steps``, is not checked: the text counts the other phases in the same unit.)"""
    setting = EXPERIMENTS[name].paper_setting
    config = EXPERIMENTS[name].get_config("paper")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", ROWS[name]["difference"])
    counted = {"seeds": config.num_seeds}
    unit = re.fullmatch(r"(?:num_)?([a-z]+)", setting.steps_key)
    if unit:
        counted[unit.group(1)] = config[setting.steps_key]
    for word, value in counted.items():
        singular = re.sub(r"(?<=ss)es$|s$", "", word)
        for n in re.findall(rf"(?<![\w.])(\d+) (?:[\w-]+ )?(?:{word}|{singular})\b", text):
            assert int(n) == value, f"{name}: the difference counts {n} {word}, config {value}"


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_the_data_check_reads_the_tables_datasets(name, tmp_path):
    """``jaxlab run``'s data check of the paper preset asks, in an empty data directory, for
    every dataset of the row that is not generated in the run, and for nothing else."""
    config = EXPERIMENTS[name].get_config("paper")
    config.data_dir = str(tmp_path)
    datasets = ROWS[name][OURS["datasets"]].split(", ")
    remedies = prerequisites.missing_for_config((), config)
    local = prerequisites.LOCAL_SOURCES
    needed = [d for d in dict.fromkeys(datasets) if d not in local or local[d] is not None]
    assert len(remedies) == len(needed), (name, remedies)
    for dataset, remedy in zip(needed, remedies, strict=True):
        if dataset not in local:
            assert f"TFDS dataset {dataset!r}" in remedy, (name, dataset, remedy)


def test_batch_keys_are_the_batch_sizes():
    config = ml_collections.ConfigDict(
        dict(batch_size=4, eval_batch_size=8, wm_batch=2, batch_seeds=True, batches_per_segment=3)
    )
    assert paper_presets.batch_keys(config) == ("batch_size", "eval_batch_size", "wm_batch")
    assert paper_presets.pairs(config, ("wm_batch",)) == "wm_batch 2"
    assert paper_presets.pairs(config, ()) == paper_presets.NONE


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_preset_names_its_datasets(name):
    for preset in ("paper", "quick", "smoke"):
        assert EXPERIMENTS[name].get_config(preset).datasets, (name, preset)


def test_the_precision_column_names_each_paper_presets_numerics():
    for name, experiment in EXPERIMENTS.items():
        config = experiment.get_config("paper")
        cell = ROWS[name][paper_presets.PRECISION]
        assert cell == f"{config.matmul_precision} matmuls, {config.compute_dtype} compute", name
        assert config.param_dtype == "float32", name  # float32 master weights


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_smoke_and_quick_run_full_float32(name):
    """Quick and smoke results agree on CPU and GPU: highest matmuls, float32 compute."""
    for preset in ("smoke", "quick"):
        config = EXPERIMENTS[name].get_config(preset)
        assert (config.matmul_precision, config.compute_dtype) == ("highest", "float32"), (
            name,
            preset,
        )
