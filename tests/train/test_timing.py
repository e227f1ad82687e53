"""``time_interleaved``, ``time_call`` and ``ratios``: call counts, order, medians, errors."""

import time

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.train import timing
from jaxlab.train.timing import ratios, time_call, time_interleaved


def test_round_robin_order_and_call_counts():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in ("a", "b", "c")}
    times = time_interleaved(fns, repeats=3, warmup=2)
    assert calls == ["a", "a", "b", "b", "c", "c"] + ["a", "b", "c"] * 3
    assert set(times) == {"a", "b", "c"} and all(t >= 0 for t in times.values())


def test_medians_of_the_timed_calls(monkeypatch):
    """Median of each function's own samples (the warm-up is not timed)."""
    samples = {"fast": iter([0.1, 0.3, 0.2]), "slow": iter([5.0, 1.0, 3.0])}
    monkeypatch.setattr(timing, "_timed_call", lambda fn: next(samples[fn()]))
    times = time_interleaved({"fast": lambda: "fast", "slow": lambda: "slow"}, repeats=3, warmup=0)
    assert times == {"fast": pytest.approx(0.2), "slow": pytest.approx(3.0)}
    assert ratios(times, "fast") == {"fast": 1.0, "slow": pytest.approx(15.0)}


def test_min_of_k_is_each_functions_fastest_call(monkeypatch):
    """``statistic="min"`` / ``time_min_of_k``: the minimum of each function's samples."""
    values = {"fast": [0.3, 0.1, 0.2], "slow": [5.0, 1.0, 3.0]}
    for timer in (
        lambda fns: time_interleaved(fns, repeats=3, warmup=0, statistic="min"),
        lambda fns: timing.time_min_of_k(fns, k=3, warmup=0),
    ):
        samples = {name: iter(v) for name, v in values.items()}
        monkeypatch.setattr(timing, "_timed_call", lambda fn, samples=samples: next(samples[fn()]))
        times = timer({"fast": lambda: "fast", "slow": lambda: "slow"})
        assert times == {"fast": pytest.approx(0.1), "slow": pytest.approx(1.0)}


def test_sleeps_are_measured_and_blocked_on():
    times = time_interleaved(
        {
            "short": lambda: time.sleep(0.002),
            "long": lambda: time.sleep(0.02),
            "array": lambda: jnp.ones((64, 64)) @ jnp.ones((64, 64)),
        },
        repeats=3,
    )
    assert times["short"] >= 0.002 and times["long"] >= 0.02
    assert times["long"] > times["short"]
    assert np.isfinite(times["array"])


def test_min_time_adds_rounds(monkeypatch):
    """Rounds continue until every function has accumulated ``min_time_s``."""
    calls = []
    monkeypatch.setattr(timing, "_timed_call", lambda fn: fn())
    fns = {"a": lambda: calls.append("a") or 0.001, "b": lambda: calls.append("b") or 0.005}
    time_interleaved(fns, repeats=1, warmup=0, min_time_s=0.02)
    assert calls == ["a", "b"] * 20  # "a" needs 20 rounds of 0.001 s to reach 0.02 s


def test_time_call_is_one_function():
    calls = []
    assert time_call(lambda: calls.append(1), repeats=4, warmup=1) >= 0
    assert len(calls) == 5


def test_bad_inputs():
    with pytest.raises(ValueError, match="empty"):
        time_interleaved({})
    with pytest.raises(ValueError, match="repeats"):
        time_interleaved({"f": lambda: None}, repeats=0)
    with pytest.raises(ValueError, match="warmup"):
        time_interleaved({"f": lambda: None}, warmup=-1)
    with pytest.raises(ValueError, match="statistic"):
        time_interleaved({"f": lambda: None}, statistic="mean")
    with pytest.raises(KeyError, match="baseline"):
        ratios({"a": 1.0}, "b")


def test_print_speedups_reports_peer_over_ours(capsys):
    from jaxlab.train.timing import print_speedups

    out = print_speedups("t", {"a": {"jaxlab": 0.002, "numpy": 0.008}})
    assert out == {"a": 0.25}
    assert "4.0×" in capsys.readouterr().out
