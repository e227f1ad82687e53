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
