"""``jaxlab.report.xla_env``: a flag the installed XLA does not know is found by a probe
process, not set, and named; the caller's own unknown flag is a clear failure, not an abort
of the test process; probes are cached; backend records round-trip."""

import json

import pytest

from jaxlab.report import xla_env

BOGUS = "xla_cpu_no_such_flag"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("xla-probe-cache")


def test_flag_names():
    assert xla_env.flag_names("--a=1  --b --c=x=y") == {"a", "b", "c"}
    assert xla_env.flag_names("") == set()


def test_an_unknown_flag_is_dropped_and_a_known_one_is_added(cache):
    env = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}
    result = xla_env.add_flags(env, {BOGUS: "1"}, cache)
    assert result.probe.ok and result.probe.backend == "cpu"
    assert result.dropped == [BOGUS] and result.added == []
    assert env["XLA_FLAGS"] == ""
    result = xla_env.add_flags(env, {"xla_backend_optimization_level": "0"}, cache)
    assert result.added == ["xla_backend_optimization_level"] and result.dropped == []
    assert env["XLA_FLAGS"] == "--xla_backend_optimization_level=0"
    again = xla_env.add_flags(env, {"xla_backend_optimization_level": "1"}, cache)
    assert again.added == [] and env["XLA_FLAGS"] == "--xla_backend_optimization_level=0"


def test_the_callers_unknown_flag_is_a_clear_failure(cache):
    env = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--{BOGUS}=1"}
    result = xla_env.add_flags(env, {BOGUS: "0"}, cache)  # probed (and cached) above
    assert not result.probe.ok
    assert "Unknown flag" in result.probe.error and BOGUS in result.probe.error
    message = xla_env.failure_message(result.probe, env)
    assert BOGUS in message and "Remove that flag" in message and "\n" not in message
    missing = xla_env.Probe(ok=False, error="RuntimeError: Unable to initialize backend 'cuda'")
    message = xla_env.failure_message(missing, {"JAX_PLATFORMS": "cuda"})
    assert "'cuda'" in message and "Set JAX_PLATFORMS" in message


def test_probes_are_cached_per_environment(cache, monkeypatch):
    xla_env.probe({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}, cache)  # computed above

    def no_subprocess(*args, **kwargs):
        raise AssertionError("probed again")

    monkeypatch.setattr(xla_env.subprocess, "run", no_subprocess)
    assert xla_env.probe({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}, cache).ok
    rejected = xla_env.probe({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--{BOGUS}=1"}, cache)
    assert not rejected.ok
    with pytest.raises(AssertionError, match="probed again"):
        xla_env.probe({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_dump_to=/dev/null"}, cache)


def test_the_error_line_is_xlas_fatal_line_or_pythons_last_line():
    fatal = "F1204 16:33:00.087086 7404 parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: --x"
    assert xla_env._error_line(f"warning\n{fatal}\n*** Check failure stack trace\n", -6) == fatal
    python = "Traceback ...\nRuntimeError: Unable to initialize backend 'cuda'\n"
    assert xla_env._error_line(python, 1) == "RuntimeError: Unable to initialize backend 'cuda'"
    assert "status -9" in xla_env._error_line("", -9)


def test_backend_records_round_trip(tmp_path, monkeypatch):
    import jax

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    path = xla_env.write_backend_record(tmp_path)
    assert path.name.startswith("gw3-")
    (record,) = xla_env.read_backend_records(tmp_path)
    assert record == json.loads(path.read_text())
    assert record["backend"] == jax.default_backend() and record["worker"] == "gw3"
    assert record["devices"] == jax.device_count()
