"""One timer for every benchmark and report: interleaved, warmed-up repeats.

``time_interleaved({"ours": f, "baseline": g}, repeats=7)`` calls each function once to
warm it up (compilation, caches), then runs the functions round-robin ``repeats`` times
and returns each one's median wall time. ``statistic="min"`` returns each one's fastest
call instead (min-of-k): load on a shared machine only ever adds time, so the minimum is
the least disturbed estimate of a function's own cost, and :func:`time_min_of_k` is what a
timing *claim* takes once per seed (one independent sample per replication).
Interleaving makes the *ratios* robust to load bursts on a shared machine: a burst slows
every candidate of that round, not one of them.
A function's result is blocked on (``jax.block_until_ready``) inside its timing, so
asynchronous dispatch never hides work.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

_STATISTICS: dict[str, Callable[[list[float]], Any]] = {"median": np.median, "min": min}


def _timed_call(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def time_interleaved(
    fns: Mapping[str, Callable[[], Any]],
    repeats: int = 5,
    warmup: int = 1,
    min_time_s: float = 0.0,
    statistic: str = "median",
) -> dict[str, float]:
    """Median (or minimum) seconds per call of each zero-argument function, timed
    round-robin.

    Args:
      fns: name → a function of no arguments (close over its inputs). Its result is
        blocked on, so it may return a ``jax.Array`` or any pytree of them.
      repeats: timed rounds; each round calls every function once.
      warmup: untimed calls of each function before the first round.
      min_time_s: keep adding rounds until every function (the fastest included) has
        accumulated at least this much timed time (for millisecond-scale functions on a
        noisy machine).
      statistic: ``"median"`` or ``"min"`` of each function's timed calls.

    Returns:
      name → median (or minimum) seconds per call.

    Example:
      >>> t = time_interleaved({"a": lambda: jnp.ones(3).sum()}, repeats=3)
      >>> sorted(t)
      ['a']
    """
    if not fns:
        raise ValueError("fns is empty: give at least one function to time")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats}, {warmup}")
    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(_STATISTICS)}, got {statistic!r}")
    for fn in fns.values():
        for _ in range(warmup):
            jax.block_until_ready(fn())
    samples: dict[str, list[float]] = {name: [] for name in fns}
    rounds = 0
    while rounds < repeats or min(map(sum, samples.values())) < min_time_s:
        for name, fn in fns.items():
            samples[name].append(_timed_call(fn))
        rounds += 1
    reduce = _STATISTICS[statistic]
    return {name: float(reduce(s)) for name, s in samples.items()}


def time_min_of_k(
    fns: Mapping[str, Callable[[], Any]], k: int = 5, warmup: int = 1
) -> dict[str, float]:
    """Fastest of ``k`` interleaved calls of each function, in seconds: one timing sample
    per function (``time_interleaved(fns, repeats=k, warmup=warmup, statistic="min")``).

    A timing claim calls it once per seed, on that seed's inputs, so its samples are
    replications and not rounds of one measurement.

    Example:
      >>> t = time_min_of_k({"a": lambda: jnp.ones(3).sum(), "b": lambda: jnp.ones(4)}, k=3)
      >>> sorted(t)
      ['a', 'b']
    """
    return time_interleaved(fns, repeats=k, warmup=warmup, statistic="min")


def time_call(fn: Callable[[], Any], repeats: int = 5, warmup: int = 1) -> float:
    """Median seconds per call of one zero-argument function (see ``time_interleaved``)."""
    return time_interleaved({"fn": fn}, repeats=repeats, warmup=warmup)["fn"]


def ratios(times: Mapping[str, float], baseline: str) -> dict[str, float]:
    """``times[name] / times[baseline]`` for every name (the baseline maps to 1.0)."""
    if baseline not in times:
        raise KeyError(f"baseline {baseline!r} not among the timed names {sorted(times)}")
    return {name: t / times[baseline] for name, t in times.items()}


def print_speedups(
    title: str,
    rows: Mapping[str, Mapping[str, float]],
    *,
    ours: str = "jaxlab",
    peer: str = "numpy",
    width: int = 44,
) -> dict[str, float]:
    """Prints one line per row (``ours`` and ``peer`` ms, peer/ours speed-up) under ``title``.

    Args:
      title: the table's first line.
      rows: what was timed → ``{name: seconds}`` as :func:`time_interleaved` returns it.

    Returns:
      what → ``ours`` time as a multiple of ``peer``'s (:func:`ratios`).
    """
    print(title)
    print(f"{'what':{width}s} {ours + ' ms':>10s} {peer + ' ms':>10s} {'speed-up':>9s}")
    out = {}
    for what, times in rows.items():
        out[what] = ratios(times, peer)[ours]
        print(
            f"{what:{width}s} {1e3 * times[ours]:10.2f} {1e3 * times[peer]:10.2f} "
            f"{1.0 / out[what]:8.1f}×"
        )
    return out
