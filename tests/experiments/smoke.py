"""The suite's one way to get an experiment's ``smoke`` results, computed once per test run
in the shared reports root of tests/conftest.py, on 1 device or on the suite's 8.

The smoke run is end-to-end plumbing, not numerics (the kernel tests assert those), and it
is mostly compilation: it runs in a subprocess that inherits the suite's environment (XLA
backend optimisation level 0, tests/conftest.py). The registry smoke test and
the notebooks use the 1-device run: on 8 fake CPU devices sharing 2 cores every experiment
would pay for its padded, split runs. ``tests/experiments/test_devices.py`` and
``test_multihost.py`` compare the 8-device run with it.
"""

import os
import subprocess
import sys
from pathlib import Path

from jaxlab.report import runner, xla_env

COLLECTIVE_TIMEOUT = {"xla_cpu_collective_call_terminate_timeout_seconds": "600"}


def multi_device_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a process with several CPU devices on the suite's loaded cores."""
    env = dict(env)
    # Synchronous dispatch: with XLA:CPU's asynchronous dispatch, two 8-device programs
    # with collectives enqueued back to back can deadlock on oversubscribed cores (some
    # device threads in an all-reduce, the others waiting to launch; llark_music).
    env["JAX_CPU_ENABLE_ASYNC_DISPATCH"] = "false"
    # A collective waits for all device threads; on 2 cores shared with another worker's
    # multi-device run a thread can come later than XLA's default timeout (40 s), which
    # aborts the process. 10 minutes; set where this XLA knows the flag (xla_env).
    xla_env.add_flags(env, COLLECTIVE_TIMEOUT)
    return env


def smoke_results(name: str, devices: int = 1) -> list[dict]:
    """``runner.load_or_run(name, "smoke")`` on ``devices`` CPU devices, computed (when not
    saved yet) in a subprocess. The 1-device results live where ``jaxlab reproduce --preset
    smoke`` would put them (the notebooks find them there); others beside them.

    Raises:
      AssertionError: the subprocess failed (its stderr's tail is the message).
    """
    out = None if devices == 1 else str(Path(runner.default_out("smoke")) / f"{devices}-devices")
    code = f"from jaxlab.report import runner; runner.load_or_run({name!r}, 'smoke', {out!r})"
    env = {**os.environ, "JAX_NUM_CPU_DEVICES": str(devices)}
    if devices > 1:
        env = multi_device_env(env)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{name}: smoke run failed:\n{done.stderr[-3000:]}"
    return runner.load_or_run(name, "smoke", out)  # the subprocess saved it
