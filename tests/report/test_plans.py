"""The README's plan table: rows rendered from plans, written into its marked block."""

import pytest

from jaxlab.report import plans
from jaxlab.train.plan import ACCELERATORS

ROW = {"experiment": "toy", "mesh": "runs 8", "program": "one step", "memory_bytes": 2.5e9,
       "total_flops": 3.0e15, "hours": {a.name: 0.5 for a in ACCELERATORS},
       "fits": {a.name: a.memory >= 2.5e9 for a in ACCELERATORS}}


def test_markdown_has_one_row_per_experiment_and_names_what_does_not_fit():
    big = {**ROW, "experiment": "big", "memory_bytes": 90e9,
           "fits": {a.name: False for a in ACCELERATORS}}
    table = plans.markdown([ROW, big, {"experiment": "bad", "error": "ValueError: no"},
                            {"experiment": "pc", "host": "CI tests"}], 8)
    lines = table.splitlines()
    assert len(lines) == 6 and "mesh (8 devices)" in lines[0]
    assert lines[5] == "| pc | — | host program, no accelerator compile: CI tests | — | — | — |"
    assert lines[2].startswith("| toy | runs 8 | one step | 2.5 GB | 3e+15 | 0.5 / 0.5 / 0.5")
    assert "does not fit: " + ", ".join(a.name for a in ACCELERATORS) in lines[3]
    assert "not planned: ValueError: no" in lines[4]


def test_write_readme_replaces_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- plans:paper -->\nold\n<!-- /plans:paper -->\nb\n")
    plans.write_readme(readme, "new", "paper")
    assert readme.read_text() == "a\n<!-- plans:paper -->\nnew\n<!-- /plans:paper -->\nb\n"
    with pytest.raises(ValueError, match="plans:quick"):
        plans.write_readme(readme, "new", "quick")
