"""docs/paper_presets.md is current, and every experiment's PAPER_SETTING agrees with its
paper preset: the same datasets, steps and seeds wherever it says "same"."""

from pathlib import Path

import pytest

from jaxlab.report import paper_presets, registry

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = registry.discover()


def test_the_committed_table_is_current():
    committed = (ROOT / paper_presets.DOC).read_text()
    assert committed == paper_presets.render(), (
        "docs/paper_presets.md is stale: run `python -m jaxlab.report.paper_presets`"
    )


def test_the_table_has_a_row_per_experiment():
    text = (ROOT / paper_presets.DOC).read_text()
    for name in EXPERIMENTS:
        assert f"| `{name}` |" in text


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_paper_setting_matches_the_paper_preset(name):
    experiment = EXPERIMENTS[name]
    setting = experiment.paper_setting
    assert isinstance(setting, paper_presets.PaperSetting)
    config = experiment.get_config("paper")
    assert setting.steps_key in config, f"{name}: config has no {setting.steps_key!r}"
    assert config.datasets, f"{name}: the paper preset names no datasets"
    if setting.same:
        assert tuple(config.datasets) == tuple(setting.datasets), name
        if setting.seeds is not None:
            assert config.num_seeds == setting.seeds, name
        assert str(config[setting.steps_key]) in setting.steps.replace(",", ""), (
            f"{name}: {setting.steps_key}={config[setting.steps_key]} is not in the paper's "
            f"steps {setting.steps!r}"
        )


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_preset_names_its_datasets(name):
    for preset in ("paper", "quick", "smoke"):
        assert EXPERIMENTS[name].get_config(preset).datasets, (name, preset)


def _committed_rows() -> dict[str, dict[str, str]]:
    """The committed table, one ``{column: cell}`` per experiment name."""
    lines = [ln for ln in (ROOT / paper_presets.DOC).read_text().splitlines() if ln.startswith("|")]
    header = [h.strip() for h in lines[0].strip("|").split(" | ")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows[cells[0].strip("`")] = dict(zip(header, cells, strict=True))
    return rows


def test_the_precision_column_names_each_paper_presets_numerics():
    rows = _committed_rows()
    assert set(rows) == set(EXPERIMENTS)
    for name, experiment in EXPERIMENTS.items():
        config = experiment.get_config("paper")
        cell = rows[name][paper_presets.PRECISION]
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
