"""``jaxlab accel-check``: the kernel tests and every benchmark's quick mode on whatever
backend JAX finds, summarised in ``reports/accel/ACCEL.md`` (and ``accel.json``).

Run it wherever a GPU or TPU is available (``make accel-check``) and paste the table into
the README; on CPU it is the same check CI runs. A benchmark's ``main(argv)`` may return a
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
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

BENCHMARKS_PACKAGE = "jaxlab_benchmarks"
HARNESS_TEST_DIRS = ("experiments", "report", "data")  # not kernels: left to `make test`


def available_benchmarks() -> list[str]:
    import pkgutil

    package = importlib.import_module(BENCHMARKS_PACKAGE)
    return sorted(
        i.name for i in pkgutil.iter_modules(package.__path__) if not i.name.startswith("_")
    )


def run_benchmark(name: str, argv: list[str]) -> Any:
    """Imports ``jaxlab_benchmarks.<name>`` and calls its ``main(argv)``."""
    return importlib.import_module(f"{BENCHMARKS_PACKAGE}.{name}").main(argv)


def _kernel_tests(out: Path) -> dict[str, Any]:
    tests = Path("tests")
    dirs = sorted(
        str(d)
        for d in tests.glob("*/")
        if d.is_dir() and d.name not in HARNESS_TEST_DIRS and d.name != "__pycache__"
    )
    if not dirs:
        return {"status": "skipped (no tests/ folder here: run from the repository root)"}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *dirs],
        capture_output=True,
        text=True,
        check=False,
    )
    (out / "kernel_tests.txt").write_text(proc.stdout + proc.stderr)
    tail = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    return {
        "status": "passed" if proc.returncode == 0 else "FAILED",
        "summary": tail,
        "seconds": time.perf_counter() - start,
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
) -> bool:
    """Runs the check, writes ``ACCEL.md`` and ``accel.json`` under ``out``; True if green."""
    import jax

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
    record["kernel_tests"] = _kernel_tests(out) if tests else {"status": "not run"}
    names = available_benchmarks() if benchmarks is None else benchmarks
    record["benchmarks"] = {}
    for name in names:
        print(f"accel-check: benchmark {name} --quick", flush=True)
        record["benchmarks"][name] = _benchmark(name, out)
    (out / "accel.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        f"Backend `{record['backend']}`, device {record['device']} "
        f"(×{record['num_devices']}), JAX {record['jax']}, {record['machine']}.",
        "",
        "| check | status | wall time | ratios |",
        "|---|---|---|---|",
    ]
    kt = record["kernel_tests"]
    lines.append(
        f"| kernel tests | {kt['status']} {kt.get('summary', '')} "
        f"| {kt.get('seconds', 0):.0f} s | |"
    )
    for name, entry in record["benchmarks"].items():
        ratios = ", ".join(f"{k} {v:.3g}" for k, v in entry.get("ratios", {}).items())
        lines.append(
            f"| `jaxlab bench {name} --quick` | {entry['status']} "
            f"| {entry['seconds']:.0f} s | {ratios} |"
        )
    (out / "ACCEL.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    statuses = [kt["status"]] + [e["status"] for e in record["benchmarks"].values()]
    return not any(s == "FAILED" for s in statuses)
