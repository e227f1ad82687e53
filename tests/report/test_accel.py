"""`jaxlab accel-check` writes its table, keeps each benchmark's output, and fails when a
benchmark fails (without hiding the others)."""

import json

from jaxlab.report import accel


def test_accel_check_table_and_failures(monkeypatch, tmp_path):
    def fake_benchmark(name, argv):
        assert argv == ["--quick"]
        print(f"output of {name}")
        if name == "broken":
            raise RuntimeError("no kernel")
        return {"ours/baseline": 0.5}

    monkeypatch.setattr(accel, "run_benchmark", fake_benchmark)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # accel_check's default
    assert accel.accel_check(tmp_path, tests=False, benchmarks=["good"])
    table = (tmp_path / "ACCEL.md").read_text()
    assert "| `jaxlab bench good --quick` | passed |" in table and "ours/baseline 0.5" in table
    assert (tmp_path / "bench_good.txt").read_text().startswith("output of good")
    assert not accel.accel_check(tmp_path, tests=False, benchmarks=["broken", "good"])
    record = json.loads((tmp_path / "accel.json").read_text())
    assert record["benchmarks"]["broken"]["status"] == "FAILED"
    assert record["benchmarks"]["good"]["status"] == "passed"
    assert "RuntimeError: no kernel" in (tmp_path / "bench_broken.txt").read_text()
    assert record["backend"] == "cpu"


def test_every_benchmark_module_has_main():
    import importlib
    import inspect

    names = accel.available_benchmarks()
    assert {"byzantine", "gadc", "mcf", "multimax"} <= set(names)
    for name in names:
        module = importlib.import_module(f"{accel.BENCHMARKS_PACKAGE}.{name}")
        assert "argv" in inspect.signature(module.main).parameters, name


def test_backend_problem_fails_an_accelerator_check_whose_tests_ran_on_the_cpu():
    gpu, cpu = {"backend": "gpu", "devices": 1}, {"backend": "cpu", "devices": 8}
    assert accel.backend_problem("gpu", [gpu, gpu]) is None
    assert accel.backend_problem("cpu", [cpu]) is None
    assert "ran on cpu, not on gpu" in accel.backend_problem("gpu", [gpu, cpu])
    assert "ran on cpu, not on tpu" in accel.backend_problem("tpu", [cpu, cpu])
    assert "no test process" in accel.backend_problem("gpu", [])


def test_platform_name_is_the_one_jax_platforms_takes():
    import jax

    assert accel.platform_name() in jax.extend.backend.backends()


def test_test_workers():
    assert [accel.test_workers(c) for c in (1, 2, 3, 4, 16)] == [1, 2, 3, 4, 4]


def test_table_names_the_tests_backend_and_warns_past_the_budget():
    record = {
        "backend": "gpu",
        "device": "NVIDIA H200",
        "num_devices": 1,
        "jax": "0",
        "machine": "x86_64, 16 CPUs",
        "kernel_tests": {
            "status": "FAILED",
            "summary": "926 passed",
            "seconds": 145.0,
            "workers": 4,
            "ran_on": ["cpu"],
            "problem": accel.backend_problem("gpu", [{"backend": "cpu"}]),
        },
        "benchmarks": {},
        "seconds": accel.BUDGET_S + 1,
    }
    table = accel.render(record)
    assert "| kernel tests (ran on `cpu`, 4 processes) | FAILED 926 passed | 145 s |" in table
    assert "ran on cpu, not on gpu" in table and "8-minute budget" in table
    record["seconds"] = accel.BUDGET_S - 1
    assert "budget" not in accel.render(record)


def test_kernel_tests_run_on_the_reported_backend_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # accel_check's default
    assert accel.accel_check(
        tmp_path,
        benchmarks=[],
        test_paths=["tests/report/test_xla_env.py::test_flag_names"],
        workers=1,
    )
    record = json.loads((tmp_path / "accel.json").read_text())
    tests = record["kernel_tests"]
    assert tests["status"] == "passed" and "1 passed" in tests["summary"], tests
    assert tests["ran_on"] == [record["backend"]] and tests["problem"] is None
    assert f"(ran on `{record['backend']}`, 1 processes)" in (tmp_path / "ACCEL.md").read_text()
