"""The README's plan table: rows rendered from plans (compute- and memory-bound hours apart,
precision, padding, whether the paper preset runs today), written into its marked block."""

import types

import pytest

from jaxlab.report import PaperSetting, plans, registry
from jaxlab.train.plan import ACCELERATORS

ROW = {
    "experiment": "toy",
    "mesh": "runs 8",
    "program": "one step",
    "programs": ["train"],
    "precision": "bf16",
    "loops": "",
    "padding": 0.375,
    "memory_bytes": 2.5e9,
    "total_flops": 3.0e15,
    "compute_hours": {a.name: 0.5 for a in ACCELERATORS},
    "memory_hours": {a.name: 0.005 for a in ACCELERATORS},
    "fits": {a.name: a.memory >= 2.5e9 for a in ACCELERATORS},
    "cpu_hours": 120.0,
    "runnable": "yes",
}


def test_markdown_has_one_row_per_experiment_and_names_what_does_not_fit():
    big = {
        **ROW,
        "experiment": "big",
        "memory_bytes": 90e9,
        "programs": ["train", "sample"],
        "loops": "train 1000",
        "fits": {a.name: False for a in ACCELERATORS},
        "runnable": "no: ImageNet-C | not in TFDS",
    }
    table = plans.markdown(
        [
            ROW,
            big,
            {"experiment": "bad", "error": "ValueError: no"},
            {"experiment": "pc", "host": "CI tests", "runnable": "yes"},
        ],
        8,
    )
    lines = table.splitlines()
    assert len(lines) == 8 and "mesh (8 devices)" in lines[0]
    assert lines[7].startswith("CPU hours on this machine: every device's share")
    lines = lines[:6]
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert header[6].startswith("compute-bound h") and header[7].startswith("memory-bound h")
    assert header[-3:] == ["CPU hours on this machine", "padding", "runnable today"]
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert len(cells) == len(header)
    assert cells[:6] == ["toy", "runs 8", "one step", "bf16", "2.5 GB", "3e+15"]
    assert cells[6:] == [
        "0.5 / 0.5 / 0.5 / 0.5",
        "< 0.01 / < 0.01 / < 0.01 / < 0.01",
        "120",
        "38%",
        "yes",
    ]
    assert "does not fit: " + ", ".join(a.name for a in ACCELERATORS) in lines[3]
    assert "one step (+ sample); loops: train 1000" in lines[3]
    assert lines[3].endswith("| no: ImageNet-C \\| not in TFDS |")
    assert "not planned: ValueError: no" in lines[4] and lines[4].endswith("| — |")
    assert lines[5].startswith("| pc | — | host program, no accelerator compile: CI tests |")
    assert all(line.replace("\\|", "").count("|") == lines[0].count("|") for line in lines[2:])


def test_write_readme_replaces_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- plans:paper -->\nold\n<!-- /plans:paper -->\nb\n")
    plans.write_readme(readme, "new", "paper")
    assert readme.read_text() == "a\n<!-- plans:paper -->\nnew\n<!-- /plans:paper -->\nb\n"
    with pytest.raises(ValueError, match="plans:quick"):
        plans.write_readme(readme, "new", "quick")


def _setting(difference: str = "same") -> PaperSetting:
    return PaperSetting(
        datasets=("cifar10",),
        splits="train/test",
        model="ResNet-18",
        steps="200 epochs",
        batch="128",
        seeds=3,
        evaluation="test accuracy",
        hardware="1 GPU",
        source="Table 1",
        difference=difference,
    )


@pytest.fixture
def config_module(monkeypatch):
    """``set(**attributes)``: the config module every experiment's ``runnable`` reads."""
    module = types.ModuleType("fake_config")
    monkeypatch.setattr(
        registry, "get_experiment", lambda name: types.SimpleNamespace(module="fake")
    )
    monkeypatch.setattr(plans.importlib, "import_module", lambda name: module)

    def set_attributes(**attributes):
        for key in ("PAPER_SETTING", "dry_run"):
            if hasattr(module, key):
                delattr(module, key)
        for key, value in attributes.items():
            setattr(module, key, value)

    return set_attributes


def test_runnable_says_what_is_missing(config_module):
    config_module(PAPER_SETTING=_setting(), dry_run=lambda c, d: c)
    assert plans.runnable("x") == "yes"
    config_module(PAPER_SETTING=_setting())
    assert plans.runnable("x") == "no: no dry_run in config.py (the paper preset is untested)"
    config_module(PAPER_SETTING=_setting("the\nweights are not public"), dry_run=lambda c, d: c)
    assert plans.runnable("x") == "yes, differs: the weights are not public"
    config_module()
    assert plans.runnable("x").startswith("no: no PAPER_SETTING in config.py; no dry_run")
    config_module(PAPER_SETTING=_setting("x" * 500), dry_run=lambda c, d: c)
    text = plans.runnable("x")
    assert text.startswith("yes, differs: x") and text.endswith("...") and len(text) == 160


def test_runnable_reads_every_registered_experiment():
    for name in registry.discover():
        status = plans.runnable(name)
        assert status == "yes" or status.startswith(("yes, differs: ", "no: ")), (name, status)


def test_a_row_of_a_registered_experiment_renders_every_column():
    """The smoke preset's seeds fill one run lane of the 8 computed: the rest is padding."""
    row = plans._row("multimax_tradeoff", "smoke")
    seeds = registry.get_experiment("multimax_tradeoff").get_config("smoke").num_seeds
    assert row["programs"] == ["train"] and row["padding"] == pytest.approx(1 - seeds / 8)
    assert set(row["compute_hours"]) == set(row["memory_hours"]) == {a.name for a in ACCELERATORS}
    line = plans.markdown([row], 8).splitlines()[2]
    assert line.startswith("| multimax_tradeoff | runs 8 |")
    assert line.endswith(f"| {1 - seeds / 8:.0%} | — |")
    # every device's work on this CPU: 8 × calls × max(FLOPs / rate, bytes / bandwidth)
    p = plans.plan("multimax_tradeoff", "smoke")
    host = plans.plan_measure.host_rates()
    per_call = max(p.flops_per_call / host.peak("tf32"), p.bytes_per_call / host.bandwidth)
    assert row["cpu_hours"] == pytest.approx(8 * p.calls * per_call / 3600)


@pytest.mark.parametrize(
    ("matmul_precision", "planned"), [("highest", "fp32"), ("default", "tf32")]
)
def test_a_plan_is_traced_at_its_presets_matmul_precision(monkeypatch, matmul_precision, planned):
    """A float32 program at "highest" runs at a GPU's fp32 rate (H100: 66.9 TFLOP/s), at
    "default" at TF32's (494.7): the plan reads it from the compiled program."""
    real = registry.get_experiment("dpo_dynamics")  # a smoke plan with matrix products

    class AtPrecision:  # the experiment with its smoke preset at another precision
        module = real.module

        def get_config(self, preset):
            config = real.get_config(preset)
            config.matmul_precision = matmul_precision
            return config

    monkeypatch.setattr(registry, "get_experiment", lambda name: AtPrecision())
    p = plans.plan("dpo_dynamics", "smoke")
    assert p.precision == planned and set(p.precision_flops) == {planned}
    h100 = next(a for a in ACCELERATORS if a.name == "H100 SXM")
    seconds = p.compute_hours(h100, 1.0) * 3600 / p.calls
    assert seconds == pytest.approx(p.flops_per_call / h100.peak(planned))


def test_loop_trip_counts_are_listed_with_equal_ones_merged():
    def fake(trips, assumed=None):
        return types.SimpleNamespace(
            loop_trips=trips, spec=types.SimpleNamespace(loop_trips=assumed)
        )

    assert plans._trips(fake(())) == "none"
    assert plans._trips(fake((5, 5, 20, None, 5))) == "5 ×3, 20, ? (once)"
    assert plans._trips(fake((None, None), 50)) == "50 (assumed) ×2"
