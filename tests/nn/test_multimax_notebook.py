"""Executes notebooks/multimax.ipynb (cwd = repository root)."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


def test_multimax_notebook_runs():
    notebook = nbformat.read(ROOT / "notebooks" / "multimax.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = "".join(
        o.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
        for o in cell.get("outputs", [])
    )
    assert "MultiMax" in outputs and "loss after 20 steps" in outputs
