"""``docs/paper_presets.md``: per experiment, what the paper ran beside our three presets.

Each experiment's ``config.py`` declares the paper's setting once, as ``PAPER_SETTING``
(a :class:`PaperSetting`, read from the paper or its reference code, with the source).
The table is generated from those records and from the configs themselves (the datasets,
steps, batch sizes and seeds of ``paper``, beside the paper's; those of ``quick`` and
``smoke``), so it cannot drift from the code; ``tests/report/test_paper_presets.py`` checks
the committed file, the records and every row's columns against the configs.

    python -m jaxlab.report.paper_presets          # rewrites docs/paper_presets.md
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from jaxlab.report import registry

DOC = Path("docs") / "paper_presets.md"
SAME = "same"
#: The column of the paper preset's numerics (smoke and quick: highest, float32).
PRECISION = "precision of our `paper`"


@dataclasses.dataclass(frozen=True)
class PaperSetting:
    """What the paper ran for one experiment (all text, as the paper or its code states it).

    Attributes:
      datasets: the paper's datasets, by their TFDS names where TFDS or jaxlab has a builder
        (the names our ``paper`` preset must read when ``difference`` is ``"same"``).
      splits: the splits and their sizes.
      model: architecture and size.
      steps: steps or epochs, as the paper states them (and in steps, where that differs).
      batch: the batch size.
      seeds: the number of seeds or repetitions the paper reports (``None``: not stated).
      evaluation: the evaluation protocol (metric, split, number of samples).
      hardware: the paper's hardware, where stated.
      source: where these facts come from (table, section, or file of the reference code).
      difference: ``"same"`` when our ``paper`` preset runs this setting, else what differs
        and why (data or weights not public, a suite not available in JAX).
      steps_key: the config key that holds our step (or epoch, round) count.
    """

    datasets: tuple[str, ...]
    splits: str
    model: str
    steps: str
    batch: str
    seeds: int | None
    evaluation: str
    hardware: str
    source: str
    difference: str = SAME
    steps_key: str = "num_steps"

    def __post_init__(self) -> None:
        if not self.source.strip():
            raise ValueError("PaperSetting needs its source (a table, section or file)")
        if not self.difference.strip():
            raise ValueError(f"PaperSetting.difference must be {SAME!r} or say what differs")

    @property
    def same(self) -> bool:
        return self.difference == SAME


#: The columns of the paper's values and of our ``paper`` preset's, per quantity: the
#: datasets, the step count (the config key ``steps_key``), the batch and the seeds.
QUANTITIES = ("datasets", "steps", "batch", "seeds")
PAPERS = {q: f"paper's {q}" for q in QUANTITIES}
OURS = {
    "datasets": "our `paper`: datasets (TFDS names)",
    "steps": "our `paper`: steps",
    "batch": "our `paper`: batch",
    "seeds": "our `paper`: seeds",
}
#: The cell of a quantity a config does not have (a ``paper`` preset with no batch key).
NONE = "—"


def batch_keys(config: Any) -> tuple[str, ...]:
    """The config's batch sizes: its top-level keys ending in ``batch`` or ``batch_size``
    (``batch_size``, ``eval_batch_size``, ``wm_batch``; not ``batch_seeds``)."""
    return tuple(k for k in config.keys() if k.endswith(("batch", "batch_size")))


def pairs(config: Any, keys: tuple[str, ...]) -> str:
    """``"key value, key value"`` of ``keys`` in ``config`` (:data:`NONE` for no key)."""
    return ", ".join(f"{k} {config[k]}" for k in keys) or NONE


def _preset(config: Any, key: str) -> str:
    datasets = ", ".join(config.datasets) or NONE
    return f"{datasets}; {pairs(config, (key,))}; {config.num_seeds} seed(s)"


def numerics(config: Any) -> str:
    """The precision cell of a preset: its ``matmul_precision`` and ``compute_dtype``."""
    return f"{config.matmul_precision} matmuls, {config.compute_dtype} compute"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def rows() -> list[dict[str, str]]:
    """One row per registered experiment: the paper's setting beside our three presets."""
    out = []
    for name, experiment in registry.discover().items():
        setting = experiment.paper_setting
        configs = {preset: experiment.get_config(preset) for preset in ("paper", "quick", "smoke")}
        paper = configs["paper"]
        seeds = setting.seeds if setting.seeds is not None else "not stated"
        row = {"experiment": f"`{name}`"}
        row[PAPERS["datasets"]] = ", ".join(setting.datasets)
        row[OURS["datasets"]] = ", ".join(paper.datasets) or NONE
        row[PAPERS["steps"]] = setting.steps
        row[OURS["steps"]] = pairs(paper, (setting.steps_key,))
        row[PAPERS["batch"]] = setting.batch
        row[OURS["batch"]] = pairs(paper, batch_keys(paper))
        row[PAPERS["seeds"]] = seeds
        row[OURS["seeds"]] = paper.num_seeds
        row["paper's splits, model, evaluation, hardware"] = (
            f"**splits** {setting.splits}; **model** {setting.model}; "
            f"**eval** {setting.evaluation}; **hardware** {setting.hardware}"
        )
        row["source"] = setting.source
        for preset in ("quick", "smoke"):
            row[f"our `{preset}`"] = _preset(configs[preset], setting.steps_key)
        row[PRECISION] = numerics(paper)
        row["difference"] = setting.difference
        out.append({k: _cell(v) for k, v in row.items()})
    return out


def render() -> str:
    """The whole ``docs/paper_presets.md``."""
    table = rows()
    header = list(table[0])
    lines = [
        "# The papers' settings beside our presets",
        "",
        "Generated by `python -m jaxlab.report.paper_presets` from each experiment's",
        "`PAPER_SETTING` (in its `config.py`) and its three presets;",
        "`tests/report/test_paper_presets.py` keeps it current and checks every row's datasets,",
        "steps, batch and seeds against the configs. Per quantity, the paper's value beside",
        "our `paper` preset's: the datasets read (TFDS names, or the source of generated data;",
        "`jaxlab run` checks that these are prepared), the step (epoch, round) count under the",
        "config key that holds it, the batch sizes (the config keys ending in `batch` or",
        "`batch_size`; — where the run has none: full-batch steps, or independent runs) and",
        'the seeds. "same": the `paper` preset runs the paper\'s setting (`jaxlab run NAME',
        "--preset paper --dry-run` checks its program on mock data); otherwise the difference",
        "and why. Our `quick` and `smoke`: datasets; step count; seeds. Precision: the `paper`",
        "preset's `matmul_precision` and `compute_dtype`: the paper's, from its reference code",
        "(cited beside the fields in `config.py`; a difference says where jaxlab's model cannot",
        "compute in the paper's dtype); parameters and optimiser state are float32. `smoke` and",
        "`quick` use highest matmuls and float32 compute, so CPU and GPU results agree.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(row[k] for k in header) + " |" for row in table]
    return "\n".join(lines) + "\n"


def main() -> int:
    DOC.write_text(render())
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
