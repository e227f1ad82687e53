"""``jaxlab accel-check``: the kernel tests and every benchmark's quick mode on whatever
backend JAX finds, summarised in ``reports/accel/ACCEL.md`` (and ``accel.json``).

Run it wherever a GPU or TPU is available (``make accel-check``) and paste the table into
the README; on CPU it is the same check CI runs. The kernel tests run in a pytest
subprocess with ``JAX_PLATFORMS`` set to the backend the check reports
(``jax.default_backend()``), in up to 4 processes that do not preallocate device memory;
each test process records the backend it ran on (``jaxlab.report.xla_env``), and the check
fails when any ran elsewhere (an accelerator present, the tests on the CPU). The whole check
is meant to fit ``BUDGET_S`` (8 minutes) on one GPU: ``ACCEL.md`` gives its wall time and
warns past it. A benchmark's ``main(argv)`` may return a
``dict[str, float]`` of ratios; they go into the table beside its status and wall time,
and its printed output is kept in ``reports/accel/bench_<name>.txt``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jaxlab.report import xla_env

BENCHMARKS_PACKAGE = "jaxlab_benchmarks"
HARNESS_TEST_DIRS = ("experiments", "report", "data")  # not kernels: left to `make test`
SUMMARY_CHARS = 200  # of pytest's last line in the table; kernel_tests.txt has all of it
BUDGET_S = 480.0  # the whole check (kernel tests, every benchmark --quick) on one GPU


def available_benchmarks() -> list[str]:
    import pkgutil

    package = importlib.import_module(BENCHMARKS_PACKAGE)
    return sorted(
        i.name for i in pkgutil.iter_modules(package.__path__) if not i.name.startswith("_")
    )


def run_benchmark(name: str, argv: list[str]) -> Any:
    """Imports ``jaxlab_benchmarks.<name>`` and calls its ``main(argv)``."""
    return importlib.import_module(f"{BENCHMARKS_PACKAGE}.{name}").main(argv)


def test_workers(cores: int | None = None) -> int:
    """Test processes for the kernel tests: 4 where there are at least 4 cores, else one a
    core."""
    return max(1, min(4, cores if cores is not None else os.cpu_count() or 1))


def kernel_test_paths(root: str | os.PathLike = "tests") -> list[str]:
    """The kernel test folders under ``root`` (every one but the harness's)."""
    return sorted(
        str(d)
        for d in Path(root).glob("*/")
        if d.is_dir() and d.name not in HARNESS_TEST_DIRS and d.name != "__pycache__"
    )


def platform_name() -> str:
    """The ``JAX_PLATFORMS`` name of JAX's default backend: ``cuda`` where
    ``jax.default_backend()`` says ``gpu`` (``JAX_PLATFORMS=gpu`` would ask for ROCm too)."""
    from jax.extend import backend

    default = backend.get_backend()
    return next((k for k, v in backend.backends().items() if v is default), default.platform)


def backend_problem(backend: str, records: list[dict[str, Any]]) -> str | None:
    """Why kernel tests with these backend records (``xla_env.write_backend_record``, one a
    test process) do not count as run on ``backend``; None when they do.

    An accelerator reported and the tests on the CPU (an inherited ``JAX_PLATFORMS=cpu``),
    or no record at all (the tests' conftest did not run), makes the check fail.
    """
    if not records:
        return "no test process recorded its backend (did tests/conftest.py run?)"
    others = sorted({r["backend"] for r in records} - {backend})
    if others:
        return (
            f"the kernel tests ran on {', '.join(others)}, not on {backend}, "
            "the backend this check reports"
        )
    return None


def _kernel_tests(
    out: Path, backend: str, paths: Sequence[str] | None, workers: int
) -> dict[str, Any]:
    """Runs the tests on ``backend`` (``jax.default_backend()``'s name)."""
    paths = kernel_test_paths() if paths is None else list(paths)
    if not paths:
        return {"status": "skipped (no tests/ folder here: run from the repository root)"}
    records = out / "backend_records"
    shutil.rmtree(records, ignore_errors=True)
    env = {
        **os.environ,
        "JAX_PLATFORMS": platform_name(),  # the tests' conftest keeps it (default: cpu)
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",  # several test processes share a device
        xla_env.RECORDS_ENV: str(records),
    }
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers)]
        + paths,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    (out / "kernel_tests.txt").write_text(proc.stdout + proc.stderr)
    tail = (proc.stdout.strip().splitlines() or ["(no output)"])[-1][:SUMMARY_CHARS]
    found = xla_env.read_backend_records(records) if records.is_dir() else []
    problem = backend_problem(backend, found)
    return {
        "status": "passed" if proc.returncode == 0 and problem is None else "FAILED",
        "summary": tail,
        "seconds": time.perf_counter() - start,
        "workers": workers,
        "ran_on": sorted({r["backend"] for r in found}),
        "problem": problem,
    }


def _benchmark(name: str, out: Path) -> dict[str, Any]:
    buffer, start = io.StringIO(), time.perf_counter()
    entry: dict[str, Any] = {}
    try:
        with contextlib.redirect_stdout(buffer):
            ratios = run_benchmark(name, ["--quick"])
        entry["status"] = "passed"
        if isinstance(ratios, dict):
            entry["ratios"] = {k: float(v) for k, v in ratios.items()}
    except Exception:  # one broken benchmark must not hide the others
        entry["status"] = "FAILED"
        buffer.write("\n" + traceback.format_exc())
    entry["seconds"] = time.perf_counter() - start
    (out / f"bench_{name}.txt").write_text(buffer.getvalue())
    return entry


def accel_check(
    out: str | os.PathLike = "reports/accel",
    tests: bool = True,
    benchmarks: list[str] | None = None,
    test_paths: Sequence[str] | None = None,
    workers: int | None = None,
) -> bool:
    """Runs the check, writes ``ACCEL.md`` and ``accel.json`` under ``out``; True if green.

    Args:
      tests: run the kernel tests (``test_paths``, default every kernel test folder) on
        ``jax.default_backend()`` in ``workers`` processes (default ``test_workers()``).
      benchmarks: the benchmarks to run ``--quick`` (default all).
    """
    # Before JAX's backend starts: the test processes share its device with this one.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = jax.devices()[0]
    record: dict[str, Any] = {
        "backend": jax.default_backend(),
        "device": getattr(device, "device_kind", str(device)),
        "num_devices": jax.device_count(),
        "jax": jax.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    record["kernel_tests"] = (
        _kernel_tests(out, record["backend"], test_paths, workers or test_workers())
        if tests
        else {"status": "not run"}
    )
    names = available_benchmarks() if benchmarks is None else benchmarks
    record["benchmarks"] = {}
    for name in names:
        print(f"accel-check: benchmark {name} --quick", flush=True)
        record["benchmarks"][name] = _benchmark(name, out)
    record["seconds"] = time.perf_counter() - start
    (out / "accel.json").write_text(json.dumps(record, indent=1) + "\n")
    table = render(record)
    (out / "ACCEL.md").write_text(table)
    print(table, end="")
    kt = record["kernel_tests"]
    statuses = [kt["status"]] + [e["status"] for e in record["benchmarks"].values()]
    return not any(s == "FAILED" for s in statuses)


def render(record: dict[str, Any]) -> str:
    """``ACCEL.md`` of an ``accel.json`` record: the backend, a row a check, the wall time,
    and a warning line for tests on another backend or a check over ``BUDGET_S``."""
    lines = [
        f"Backend `{record['backend']}`, device {record['device']} "
        f"(×{record['num_devices']}), JAX {record['jax']}, {record['machine']}.",
        "",
        "| check | status | wall time | ratios |",
        "|---|---|---|---|",
    ]
    kt = record["kernel_tests"]
    where = (
        f" (ran on `{', '.join(kt['ran_on']) or 'no record'}`, {kt['workers']} processes)"
        if "workers" in kt
        else ""
    )
    lines.append(
        f"| kernel tests{where} | {kt['status']} {kt.get('summary', '')} "
        f"| {kt.get('seconds', 0):.0f} s | |"
    )
    for name, entry in record["benchmarks"].items():
        ratios = ", ".join(f"{k} {v:.3g}" for k, v in entry.get("ratios", {}).items())
        lines.append(
            f"| `jaxlab bench {name} --quick` | {entry['status']} "
            f"| {entry['seconds']:.0f} s | {ratios} |"
        )
    lines += ["", f"Whole check: {record['seconds']:.0f} s wall time."]
    if kt.get("problem"):
        lines.append(f"**Kernel tests not on the reported backend:** {kt['problem']}.")
    if record["seconds"] > BUDGET_S:
        lines.append(
            f"**Warning:** the check took longer than its {BUDGET_S / 60:.0f}-minute budget "
            "on one accelerator."
        )
    return "\n".join(lines) + "\n"
