"""The suite's one way to get an experiment's ``smoke`` results (8 CPU devices, computed once
per test run in the shared reports root of tests/conftest.py).

The smoke run is end-to-end plumbing, not numerics (the kernel tests assert those under
default flags), and it is mostly compilation: it runs in a subprocess whose XLA compiles at
backend optimisation level 0, which roughly halves its time (like the notebooks).
"""

import os
import subprocess
import sys

from jaxlab.report import runner

FAST_XLA_FLAGS = "--xla_backend_optimization_level=0"


def xla_flags() -> str:
    """``XLA_FLAGS`` of the smoke subprocesses: the caller's plus :data:`FAST_XLA_FLAGS`."""
    return f"{os.environ.get('XLA_FLAGS', '')} {FAST_XLA_FLAGS}".strip()


def smoke_results(name: str) -> list[dict]:
    """``runner.load_or_run(name, "smoke")``, computed (when not saved yet) in a subprocess.

    Raises:
      AssertionError: the subprocess failed (its stderr's tail is the message).
    """
    code = f"from jaxlab.report import runner; runner.load_or_run({name!r}, 'smoke')"
    done = subprocess.run([sys.executable, "-c", code],
                          env={**os.environ, "XLA_FLAGS": xla_flags()},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{name}: smoke run failed:\n{done.stderr[-3000:]}"
    return runner.load_or_run(name, preset="smoke")  # the subprocess saved it
