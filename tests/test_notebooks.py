"""Every notebook under notebooks/ runs top to bottom, at the ``smoke`` preset.

A notebook's cell tagged ``parameters`` holds ``PRESET = "quick"``; the test replaces it
with ``PRESET = "smoke"`` (the papermill convention), so notebooks stay seconds-long here
and a reader still gets the real run by default. The notebook's kernel compiles with XLA's
backend optimisation level 0: smoke-sized notebooks are mostly compilation, their outputs are
demonstrations (numerics are asserted by the kernel tests, under default flags), and this
roughly halves their time.
"""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
COLAB_LINE = "except ImportError:"


def _parameter_cells(notebook):
    return [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_at_smoke_preset(path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    params = _parameter_cells(notebook)
    assert len(params) == 1 and params[0].source.strip() == 'PRESET = "quick"', (
        f"{path.name}: needs exactly one cell tagged 'parameters' holding PRESET = \"quick\""
    )
    params[0].source = 'PRESET = "smoke"'
    assert COLAB_LINE in notebook.cells[1].source, f"{path.name}: cell 2 must be the Colab install"
    assert "Runtime:" in notebook.cells[0].source, f"{path.name}: state the runtime at the top"
    flags = os.environ.get("XLA_FLAGS", "")
    monkeypatch.setenv("XLA_FLAGS", f"{flags} --xla_backend_optimization_level=0".strip())
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO)}}).execute()
