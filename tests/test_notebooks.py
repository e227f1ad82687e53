"""Every notebook under notebooks/ runs top to bottom, at the ``smoke`` preset.

A notebook's cell tagged ``parameters`` holds ``PRESET = "quick"``; the test replaces it
with ``PRESET = "smoke"`` (the papermill convention), so notebooks stay seconds-long here
and a reader still gets the real run by default. The notebook's kernel inherits the suite's
XLA flags (backend optimisation level 0, tests/conftest.py): smoke-sized notebooks are
mostly compilation and their outputs are demonstrations. The kernel sees one CPU device,
like the registry smoke test whose results it shares (tests/experiments/smoke.py). Every
notebook draws a figure (a matplotlib call, and an ``image/png`` output at smoke); committed
outputs (``make notebooks``, at ``quick``) hold one.
"""

from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from jaxlab.report.notebooks import MAX_OUTPUT_BYTES, merged, pooled, strip_outputs

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
COLAB_LINE = "except ImportError:"
PLOT_CALLS = ("plt.subplots(", "plt.figure(", "plt.plot(")


def _outputs(notebook):
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]


def _has_image(notebook):
    return any("image/png" in o.get("data", {}) for o in _outputs(notebook))


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
    monkeypatch.setenv("JAX_NUM_CPU_DEVICES", "1")  # the registry smoke test's device count
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    ).execute()
    assert _has_image(notebook), f"{path.name}: drew no figure at smoke"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_draws_a_figure(path):
    """A plotting call in the source; committed outputs, when there are any, hold a PNG."""
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert any(call in code for call in PLOT_CALLS), f"{path.name}: no matplotlib figure"
    if _outputs(notebook):
        assert _has_image(notebook), f"{path.name}: committed outputs hold no image/png"


def test_runner_strips_metadata_widgets_and_large_outputs():
    big = nbformat.v4.new_output("display_data", data={"image/png": "A" * (MAX_OUTPUT_BYTES + 1)})
    small = nbformat.v4.new_output("stream", name="stdout", text="ok\n")
    cell = nbformat.v4.new_code_cell("x", outputs=[big, small])
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    notebook = nbformat.v4.new_notebook(cells=[cell], metadata={"widgets": {"state": {}}})
    dropped = strip_outputs(notebook)
    assert len(dropped) == 1 and "display_data" in dropped[0]
    assert notebook.cells[0].outputs == [small]
    assert "execution" not in notebook.cells[0].metadata and "widgets" not in notebook.metadata


def test_pooled_and_merged_over_per_seed_and_batched_calls():
    per_seed = [{"acc": 0.5, "curve": [1.0, 2.0]}, {"acc": 0.7, "curve": [3.0, 4.0]}]
    batched = [{"acc": [0.5, 0.7]}]
    np.testing.assert_allclose(pooled(per_seed, "acc"), [0.5, 0.7])
    np.testing.assert_allclose(pooled(batched, "acc"), [0.5, 0.7])
    np.testing.assert_allclose(merged(per_seed)["curve"], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(merged(batched)["acc"], [0.5, 0.7])
