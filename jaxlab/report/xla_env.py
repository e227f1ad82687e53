"""The XLA environment of the test processes and the subprocesses they start: which
``XLA_FLAGS`` may be added, and which backend the tests run on.

XLA reads ``XLA_FLAGS`` when JAX starts its first backend and aborts the whole process on a
flag it does not know (``F parse_flags_from_env.cc] Unknown flag in XLA_FLAGS``); flags come
and go between XLA versions. So a flag is only added after a probe process,
``python -c "import jax; jax.devices()"`` under the same environment plus that flag, started
the backend; and only when that backend is the CPU (the flags added here are CPU code
generation and timeout settings). A probe takes about 2 s; its result is cached per jaxlib
version, ``JAX_PLATFORMS`` and ``XLA_FLAGS`` string in a JSON file under the temporary
directory (successes and unknown-flag aborts only: other failures, such as a busy GPU, are
probed again next time).

``backend_record`` / ``write_backend_record`` say which backend a test process ran on:
``jaxlab accel-check`` names a folder in ``JAXLAB_BACKEND_RECORDS`` and every pytest process
(each xdist worker) that runs a test writes one JSON file there.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RECORDS_ENV = "JAXLAB_BACKEND_RECORDS"
PROBE_CODE = (
    "import json, jax; d = jax.devices(); "
    "print(json.dumps({'backend': jax.default_backend(), 'devices': len(d)}))"
)
PROBE_TIMEOUT_S = 300.0
_FATAL_LOG = re.compile(r"^F\d{4} ")  # absl's fatal log line: F<mmdd> <time> <file:line>] ...


@dataclass(frozen=True)
class Probe:
    """What a probe process found: ``ok`` with the ``backend`` and its ``devices`` count, or
    ``error``, the line that says why the backend did not start."""

    ok: bool
    backend: str = ""
    devices: int = 0
    error: str = ""


@dataclass(frozen=True)
class Flags:
    """``add_flags``'s result: the probe of the environment as left, and the flag names it
    ``added`` and ``dropped`` (unknown to this XLA)."""

    probe: Probe
    added: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def flag_names(xla_flags: str) -> set[str]:
    """The flag names in an ``XLA_FLAGS`` string: ``"--a=1 --b"`` -> ``{"a", "b"}``."""
    return {f.lstrip("-").split("=", 1)[0] for f in xla_flags.split()}


def jaxlib_version() -> str:
    try:
        return importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _cache_file(cache_dir: str | os.PathLike | None) -> Path:
    root = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "jaxlab-xla-probe"
    return root / f"jaxlib-{jaxlib_version()}.json"


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write_cache(path: Path, key: str, value: Probe) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs probes
        path.parent.mkdir(parents=True, exist_ok=True)
        entries = {**_read_cache(path), key: asdict(value)}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entries, indent=1))
        os.replace(tmp, path)  # atomic: xdist workers probe at the same time


def _error_line(stderr: str, returncode: int) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if _FATAL_LOG.match(line)]
    if fatal:
        return fatal[-1]
    if lines:
        return lines[-1]  # a Python exception's last line
    return f"the probe process exited with status {returncode} and printed nothing"


def probe(env: Mapping[str, str], cache_dir: str | os.PathLike | None = None) -> Probe:
    """Starts JAX's backend in a subprocess under ``env`` and says whether it started.

    Args:
      env: the environment of the process to be (``JAX_PLATFORMS``, ``XLA_FLAGS``, ...).
      cache_dir: the cache's folder (default: ``jaxlab-xla-probe`` in the temporary folder).
    """
    key = f"{env.get('JAX_PLATFORMS', '')}|{env.get('XLA_FLAGS', '')}"
    path = _cache_file(cache_dir)
    cached = _read_cache(path).get(key)
    if cached is not None:
        return Probe(**cached)
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE_CODE],
            env={**env, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Probe(ok=False, error=f"the probe did not finish in {PROBE_TIMEOUT_S:.0f} s")
    if done.returncode == 0:
        found = json.loads(done.stdout.strip().splitlines()[-1])
        result = Probe(ok=True, backend=found["backend"], devices=found["devices"])
    else:
        result = Probe(ok=False, error=_error_line(done.stderr, done.returncode))
    if result.ok or "Unknown flag" in result.error:
        _write_cache(path, key, result)
    return result


def _with(env: Mapping[str, str], flags: Mapping[str, str]) -> dict[str, str]:
    added = " ".join(f"--{name}={value}" for name, value in flags.items())
    return {**env, "XLA_FLAGS": f"{env.get('XLA_FLAGS', '')} {added}".strip()}


def add_flags(
    env: MutableMapping[str, str],
    flags: Mapping[str, str],
    cache_dir: str | os.PathLike | None = None,
) -> Flags:
    """Adds to ``env["XLA_FLAGS"]`` each of ``flags`` (name -> value, no ``--``) that it does
    not name yet, when ``env``'s backend is the CPU and the installed XLA accepts the flag.

    ``env`` is changed in place (``os.environ`` or a subprocess's copy). The result's probe
    is of ``env`` as left: not ``ok`` when even its own ``XLA_FLAGS`` or ``JAX_PLATFORMS``
    keep the backend from starting (``failure_message`` explains it).
    """
    missing = {k: v for k, v in flags.items() if k not in flag_names(env.get("XLA_FLAGS", ""))}
    platforms = env.get("JAX_PLATFORMS", "").split(",")
    if missing and platforms[0] == "cpu":
        together = probe(_with(env, missing), cache_dir)  # the usual case: one probe
        if together.ok:
            env.update(_with(env, missing))
            return Flags(together, added=list(missing))
    base = probe(env, cache_dir)
    if not base.ok or base.backend != "cpu" or not missing:
        return Flags(base)
    accepted = {k: v for k, v in missing.items() if probe(_with(env, {k: v}), cache_dir).ok}
    if not accepted:
        return Flags(base, dropped=list(missing))
    env.update(_with(env, accepted))
    dropped = [k for k in missing if k not in accepted]
    return Flags(probe(env, cache_dir), added=list(accepted), dropped=dropped)


def failure_message(result: Probe, env: Mapping[str, str]) -> str:
    """One paragraph: what failed, XLA's or Python's line about it, what to do."""
    if "Unknown flag" in result.error:
        remedy = (
            "Remove that flag from XLA_FLAGS: this XLA does not know it (flags change "
            "between XLA versions; the tested ones are in requirements/lock-cpu.txt)."
        )
    else:
        remedy = (
            "Set JAX_PLATFORMS to a backend that is installed and free (cpu always is), "
            "or install the tested versions (make install, requirements/lock-cpu.txt)."
        )
    return (
        "JAX's backend does not start in this environment, so no test can run: a probe "
        f"process (python -c 'import jax; jax.devices()', jaxlib {jaxlib_version()}, "
        f"JAX_PLATFORMS={env.get('JAX_PLATFORMS', '')!r}, "
        f"XLA_FLAGS={env.get('XLA_FLAGS', '')!r}) failed with: {result.error} -- {remedy}"
    )


def startup_problem(env: Mapping[str, str]) -> str | None:
    """``failure_message`` when JAX's backend does not start under ``env``, else None."""
    result = probe(env)
    return None if result.ok else failure_message(result, env)


def backend_record() -> dict[str, Any]:
    """The backend this process's JAX runs on (starts it if not started yet)."""
    import jax

    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "devices": len(devices),
        "device_kind": devices[0].device_kind,
        "jax": jax.__version__,
        "jaxlib": jaxlib_version(),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
    }


def write_backend_record(folder: str | os.PathLike) -> Path:
    """Writes ``backend_record()`` to ``folder/<worker>-<pid>.json``; returns the file."""
    record = backend_record()
    path = Path(folder) / f"{record['worker']}-{os.getpid()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record) + "\n")
    return path


def read_backend_records(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """Every record ``write_backend_record`` left in ``folder``."""
    return [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
