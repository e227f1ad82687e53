"""Plans measured: the planned programs run on the present devices, and the host's rates.

:func:`measure` runs each program of a :class:`~jaxlab.train.plan.Plan` (compiled on the
present devices, at the preset's per-device shapes) on synthetic inputs of its abstract
arguments' shapes, dtypes and shardings (uniform floats in ``[0, 1)``, zero integers and
booleans, split PRNG keys): one warm-up call, then ``steps`` calls timed together up to
``jax.block_until_ready``. It gives the seconds per call beside the plan's estimate for the
present device, the achieved FLOP/s (the plan's FLOPs per call and device over the measured
time) and the share of the device's peak.

:func:`host_rates` measures this machine's CPU (a float32 matmul's FLOP/s over all cores, a
copy's bytes/s) as an :class:`~jaxlab.train.plan.Accelerator`: the roofline of "CPU hours
on this machine". :func:`input_rate` measures a program's host input pipeline (decoded and
augmented examples per second on one core).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.train.plan import ACCELERATORS, UTILISATION, Accelerator, InputPipeline, Plan

__all__ = [
    "Measurement",
    "device_accelerator",
    "host_rates",
    "input_rate",
    "measure",
    "synthetic",
]

#: Device kinds (``jax.Device.device_kind``, lower case) of :data:`ACCELERATORS`.
_KINDS = {"h100": "H100 SXM", "h200": "H200 SXM", "a100": "A100 80GB SXM", "v5 lite": "TPU v5e"}


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One program run on the present devices.

    Attributes:
      name: the program (``"train"``, ``"eval"``, ...).
      seconds_per_call: measured, the mean of the timed calls.
      estimated_seconds_per_call: the plan's roofline for the present device (``None``
        when its class is unknown).
      flops_per_second: achieved, per device (the plan's FLOPs per call and device over
        ``seconds_per_call``).
      peak_share: ``flops_per_second`` over the device's peak at the program's precision
        (``None`` when unknown).
      hours: ``calls × seconds_per_call`` of the whole preset on the present devices.
      input_examples_per_second_per_core: the host input pipeline's rate (``None``
        without one).
      host_cores_per_device: the host cores per device that keep up with the device
        (``None`` without an input pipeline).
    """

    name: str
    seconds_per_call: float
    estimated_seconds_per_call: float | None
    flops_per_second: float
    peak_share: float | None
    hours: float
    input_examples_per_second_per_core: float | None = None
    host_cores_per_device: float | None = None


def synthetic(abstract_args: Any, seed: int = 0) -> Any:
    """Concrete arrays for a tree of ``jax.ShapeDtypeStruct`` (placed on their shardings):
    floats uniform in ``[0, 1)``, integers and booleans zero, PRNG keys split from
    ``seed``."""
    rng = np.random.default_rng(seed)

    def make(leaf: Any) -> Any:
        sharding = getattr(leaf, "sharding", None)
        shape, dtype = tuple(leaf.shape), leaf.dtype
        value: Any
        if jnp.issubdtype(dtype, jax.dtypes.prng_key):
            keys = jax.random.split(jax.random.key(seed), max(int(np.prod(shape)), 1))
            value = keys.reshape(shape) if shape else keys[0]
        elif jnp.issubdtype(dtype, jnp.floating):
            value = rng.random(shape, dtype=np.float32).astype(dtype)
        else:
            value = np.zeros(shape, dtype)
        return jax.device_put(value, sharding) if sharding is not None else jnp.asarray(value)

    return jax.tree.map(make, abstract_args)


def device_accelerator(device: jax.Device | None = None) -> Accelerator | None:
    """The :data:`ACCELERATORS` entry of ``device`` (default: the first), the measured
    :func:`host_rates` on a CPU, else ``None``."""
    device = device or jax.devices()[0]
    if device.platform == "cpu":
        return host_rates()
    kind = device.device_kind.lower()
    for key, name in _KINDS.items():
        if key in kind:
            return next(a for a in ACCELERATORS if a.name == name)
    return None


_HOST: list[Accelerator] = []


def host_rates(size: int = 1024, repeats: int = 5) -> Accelerator:
    """This machine's CPU as an :class:`Accelerator` (measured once per process): every
    precision at the FLOP/s of a ``size``² float32 matmul on the first CPU device (XLA:CPU
    spreads it over the cores), the bandwidth of a 64 MiB float32 copy; the best of
    ``repeats`` runs each."""
    if _HOST:
        return _HOST[0]
    cpu = jax.devices("cpu")[0]
    a = jax.device_put(np.ones((size, size), np.float32), cpu)
    big = jax.device_put(np.ones(16 * 2**20, np.float32), cpu)
    matmul = jax.jit(lambda x: jnp.matmul(x, x, precision="highest"))
    copy = jax.jit(lambda x: x + 1.0)

    def best(fn: Any, x: Any) -> float:
        jax.block_until_ready(fn(x))
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(fn(x))
            times.append(time.perf_counter() - start)
        return min(times)

    rate = 2.0 * size**3 / best(matmul, a)
    bandwidth = 2.0 * big.nbytes / best(copy, big)
    cores = os.cpu_count() or 1
    _HOST.append(
        Accelerator(
            f"this CPU ({cores} cores)",
            {k: rate for k in ("fp8", "int8", "bf16", "tf32", "fp32", "fp64")},
            bandwidth,
            float("inf"),
            f"this machine, measured: a {size}² float32 matmul at {rate / 1e9:.3g} GFLOP/s, "
            f"a 64 MiB copy at {bandwidth / 1e9:.3g} GB/s",
        )
    )
    return _HOST[0]


def input_rate(pipeline: InputPipeline, examples: int = 8, seed: int = 0) -> float:
    """Examples per second of ``pipeline.example`` on one host core (this thread), after
    one warm-up example."""
    rng = np.random.default_rng(seed)
    pipeline.example(rng)
    start = time.perf_counter()
    for _ in range(examples):
        pipeline.example(rng)
    return examples / (time.perf_counter() - start)


def _estimate(p: Plan, accelerator: Accelerator | None) -> float | None:
    """The roofline seconds per call on ``accelerator``: measured host rates are taken as
    reached (utilisation 1), a datasheet's peak at :data:`UTILISATION`."""
    if accelerator is None:
        return None
    utilisation = 1.0 if accelerator.name.startswith("this CPU") else UTILISATION
    return p.hours(accelerator, utilisation) * 3600.0 / max(p.calls, 1)


def measure(p: Plan, steps: int, input_examples: int = 8) -> list[Measurement]:
    """Runs every accelerator program of ``p`` (compiled on the present devices: plan it
    on them) ``steps`` times after one warm-up, on :func:`synthetic` inputs.

    Raises:
      ValueError: ``steps < 1``.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    accelerator = device_accelerator()
    out = []
    for q in p.all_plans():
        spec = q.spec
        if spec.fn is None:
            continue
        compiled = jax.jit(spec.fn).lower(*spec.abstract_args).compile()
        args = synthetic(spec.abstract_args)
        jax.block_until_ready(compiled(*args))
        start = time.perf_counter()
        for _ in range(steps):
            result = compiled(*args)
        jax.block_until_ready(result)
        seconds = (time.perf_counter() - start) / steps
        achieved = q.flops_per_call / seconds
        peak = accelerator.peak(q.precision) if accelerator is not None else None
        rate = cores = None
        if spec.input_pipeline is not None:
            rate = input_rate(spec.input_pipeline, input_examples)
            cores = spec.input_pipeline.examples_per_call / seconds / q.devices / rate
        out.append(
            Measurement(
                name=spec.name,
                seconds_per_call=seconds,
                estimated_seconds_per_call=_estimate(q, accelerator),
                flops_per_second=achieved,
                peak_share=achieved / peak if peak else None,
                hours=q.calls * seconds / 3600.0,
                input_examples_per_second_per_core=rate,
                host_cores_per_device=cores,
            )
        )
    return out
