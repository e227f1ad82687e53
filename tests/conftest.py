"""Test configuration, before any test runs: the backend (the CPU with 8 fake devices unless
``JAX_PLATFORMS`` says otherwise), strict rank promotion, and XLA's cheapest CPU code
generation.

``make test`` runs on the CPU: ``JAX_PLATFORMS`` defaults to ``cpu``. A caller that sets it
keeps it (``jaxlab accel-check`` sets it to the backend it reports); tests marked
``@pytest.mark.devices(8)`` skip where the backend has fewer devices (one GPU).

On the CPU the suite is mostly compilation (small arrays, many programs), so its processes
compile with two XLA flags, each unless ``XLA_FLAGS`` already names it and only if the
installed XLA knows it (``jaxlab.report.xla_env.add_flags`` probes that in a subprocess,
cached per jaxlib version; a flag it drops is named in pytest's header). Both keep the same
HLO programs with the same semantics; float results agree up to rounding, and the tests'
tolerances hold with and without them.
- ``--xla_backend_optimization_level=0`` (LLVM ``-O0``): less CPU time per compilation;
- ``--xla_cpu_use_fusion_emitters=false`` (XLA's elemental emitters for fusions): less
  backend compile time again.
What each saves, and the command that measured it, is in the README (Tests).
Subprocesses (smoke runs, notebook kernels, multi-process runs) inherit them through the
environment. When the backend does not start at all (an unknown flag in the caller's
``XLA_FLAGS``, a missing backend), the run stops before collection with a message saying
what failed, instead of XLA aborting each process with pytest's output captured.
"""

import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # read when jax is imported

from jaxlab.report import xla_env  # noqa: E402

FAST_XLA_FLAGS = {"xla_backend_optimization_level": "0", "xla_cpu_use_fusion_emitters": "false"}
XLA = xla_env.add_flags(os.environ, FAST_XLA_FLAGS)

import jax  # noqa: E402
import pytest  # noqa: E402

from jaxlab.report import runner  # noqa: E402

NUM_DEVICES = 8
jax.config.update("jax_num_cpu_devices", NUM_DEVICES)
jax.config.update("jax_numpy_rank_promotion", "raise")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "devices(n): needs n devices (the CPU's 8 fake ones); skipped on a backend with fewer",
    )


def pytest_report_header(config):
    dropped = f"; not set (unknown to this XLA): {XLA.dropped}" if XLA.dropped else ""
    return (
        f"jax {jax.__version__}, jaxlib {xla_env.jaxlib_version()}, backend "
        f"{XLA.probe.backend or '?'}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}{dropped}"
    )


def pytest_sessionstart(session):
    if not XLA.probe.ok:
        pytest.exit(xla_env.failure_message(XLA.probe, os.environ), returncode=4)


_recorded = []


def pytest_runtest_setup(item):
    """Skips a ``devices(n)`` test on a backend with fewer than n devices, and (once per
    process) writes the backend record ``jaxlab accel-check`` asks for."""
    if os.environ.get(xla_env.RECORDS_ENV) and not _recorded:
        _recorded.append(xla_env.write_backend_record(os.environ[xla_env.RECORDS_ENV]))
    marker = item.get_closest_marker("devices")
    if marker is not None and jax.device_count() < marker.args[0]:
        pytest.skip(
            f"needs {marker.args[0]} devices; this backend ({jax.default_backend()}) "
            f"has {jax.device_count()}"
        )


@pytest.fixture(scope="session", autouse=True)
def shared_reports_dir(tmp_path_factory):
    """One ``reports`` root for the whole run, shared by the pytest-xdist workers.

    Experiments' smoke results are saved there (``jaxlab.report.runner.load_or_run``), so
    the registry smoke test and the notebook that shows the same experiment compute it once.
    Those smoke runs (tests/experiments/smoke.py) and the notebook kernels inherit this
    environment's rank promotion and run on one device, so a result is the same whichever
    process computed it first; the 8-device smoke runs are saved beside them. A
    ``JAXLAB_REPORTS_DIR`` set before the run is kept, so reruns can reuse its results.
    """
    if os.environ.get(runner.REPORTS_ENV):
        reports = Path(os.environ[runner.REPORTS_ENV])
    else:
        base = tmp_path_factory.getbasetemp()
        root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        reports = root / "shared-reports"
        os.environ[runner.REPORTS_ENV] = str(reports)
    os.environ["JAX_NUM_CPU_DEVICES"] = str(NUM_DEVICES)
    os.environ["JAX_NUMPY_RANK_PROMOTION"] = "raise"
    return reports


def pytest_collection_modifyitems(config, items):
    """The experiments' smoke runs (the suite's longest tests, 10-55 s each) first, the
    notebooks, which reuse their results, right after them, then the rest.

    ``--dist worksteal`` hands each worker a contiguous share of this order and lets an idle
    worker take from the end of another's, so the smoke runs and then the notebooks run on
    one worker, one after the other: no notebook waits on (or runs itself) a smoke run still
    in progress on another worker, and the workers end on short tests.
    """
    smoke = "tests/experiments/test_registry_smoke.py::test_smoke_run_returns_every_claimed_metric"
    notebook = "tests/test_notebooks.py::test_notebook_runs_at_smoke_preset"

    def rank(item):
        return 0 if item.nodeid.startswith(smoke) else 1 if item.nodeid.startswith(notebook) else 2

    items.sort(key=rank)  # stable: in collection order within each group


@pytest.fixture(autouse=True)
def no_global_matmul_precision():
    """Fails a test that leaves ``jax_default_matmul_precision`` set for the whole process
    (importing dynamax sets it to float32): every later test in that worker would multiply
    at full float32 and hide what a GPU's TF32 default does. The setting is put back."""
    yield
    leaked = jax.config.jax_default_matmul_precision
    if leaked is not None:
        jax.config.update("jax_default_matmul_precision", None)
        pytest.fail(f"the test left jax_default_matmul_precision={leaked!r} set globally")
