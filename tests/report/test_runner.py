"""The runner's reuse of saved results: config and code hash must match; --fresh; clean-up."""

import json
import shutil
import uuid
from pathlib import Path

import pytest

from jaxlab.report import codehash, registry, runner
from jaxlab.report.workdir import LOCK_NAME, WorkdirLock, WorkdirLocked

FAKE = Path(__file__).parent / "fake_experiments"


@pytest.fixture
def fake_copy(tmp_path_factory, monkeypatch):
    """A copy of the fake experiments package under a fresh name (outside ``tmp_path``, the
    tests' workdir); returns (its name, its folder)."""
    name = f"fake_copy_{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("packages")
    shutil.copytree(FAKE, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(root))
    return name, root / name


def _calls(run_dir: Path) -> str:
    return (run_dir / "calls.txt").read_text()


def test_editing_the_experiment_or_its_paper_forces_a_rerun(fake_copy, tmp_path):
    package, folder = fake_copy
    experiment = registry.get_experiment("toy_exp", package)
    marker = tmp_path / "seed_0" / "from_the_first_run"

    def reran() -> bool:
        runner.run_experiment(experiment, tmp_path)
        saved = json.loads((tmp_path / "seed_0" / "result.json").read_text())
        config = experiment.get_config("quick")
        assert saved["code"] == codehash.code_hash(experiment.module, config)
        assert _calls(tmp_path / "seed_0") == "x"  # one call since the folder was emptied
        rerun = not marker.exists()
        marker.write_text("")
        return rerun

    assert reran()
    assert not reran()  # nothing changed: reused
    train = folder / "toy_paper" / "toy_exp" / "train.py"
    train.write_text(train.read_text() + "\n# an edit\n")
    assert reran()
    assert not reran()
    (folder / "toy_paper" / "trainer.py").write_text("SHARED = 1\n")  # the paper's code
    assert reran()
    (folder / "toy_paper" / "batched_exp" / "train.py").write_text("# another experiment\n")
    assert not reran()


def test_code_hash_covers_files_renames_and_jaxlab(fake_copy):
    package, folder = fake_copy
    module = f"{package}.toy_paper.toy_exp"
    base = codehash.code_hash(module)
    assert codehash.code_hash(module) == base
    assert codehash.code_hash(f"{package}.toy_paper.batched_exp") != base
    data = folder / "toy_paper" / "toy_exp" / "notes.txt"
    data.write_text("a")
    with_file = codehash.code_hash(module)
    assert with_file != base
    data.rename(data.with_name("other.txt"))
    assert codehash.code_hash(module) not in (base, with_file)
    (folder / "toy_paper" / "toy_exp" / "__pycache__").mkdir(exist_ok=True)
    (folder / "toy_paper" / "toy_exp" / "__pycache__" / "x.pyc").write_bytes(b"1")
    data.with_name("other.txt").unlink()
    assert codehash.code_hash(module) == base  # compiled files do not count
    jaxlab_part = codehash.code_parts(module)["jaxlab"]
    assert len(jaxlab_part) == 64 and jaxlab_part == codehash.code_parts(module)["jaxlab"]


def test_fresh_reruns_and_a_config_change_empties_the_folder(fake_copy, tmp_path):
    package, _ = fake_copy
    experiment = registry.get_experiment("toy_exp", package)
    runner.run_experiment(experiment, tmp_path)
    (tmp_path / "seed_0" / "stale_checkpoint").write_text("old")
    runner.run_experiment(experiment, tmp_path, fresh=True)
    assert _calls(tmp_path / "seed_0") == "x"
    assert not (tmp_path / "seed_0" / "stale_checkpoint").exists()
    (tmp_path / "seed_0" / "stale_checkpoint").write_text("old")
    runner.run_experiment(experiment, tmp_path, overrides=["lr=0.9"])
    assert not (tmp_path / "seed_0" / "stale_checkpoint").exists()
    saved = json.loads((tmp_path / "seed_0" / "result.json").read_text())
    assert saved["config"]["lr"] == 0.9 and saved["experiment"] == "toy_exp"


def test_an_interrupted_call_resumes_in_its_folder(fake_copy, tmp_path):
    package, _ = fake_copy
    experiment = registry.get_experiment("toy_exp", package)
    runner.run_experiment(experiment, tmp_path)
    (tmp_path / "seed_1" / "result.json").unlink()  # killed after training, before saving
    (tmp_path / "seed_1" / "checkpoint").write_text("resume me")
    runner.run_experiment(experiment, tmp_path)
    assert (tmp_path / "seed_1" / "checkpoint").exists()
    assert _calls(tmp_path / "seed_1") == "xx" and _calls(tmp_path / "seed_0") == "x"


def test_legacy_results_without_a_code_hash_are_run_again_in_place(fake_copy, tmp_path):
    package, _ = fake_copy
    experiment = registry.get_experiment("toy_exp", package)
    runner.run_experiment(experiment, tmp_path)
    for seed in range(3):
        folder = tmp_path / f"seed_{seed}"
        saved = json.loads((folder / "result.json").read_text())
        (folder / "result.json").write_text(
            json.dumps({"config": saved["config"], "result": saved["result"]})
        )
        (folder / "call.json").unlink()
    runner.run_experiment(experiment, tmp_path)
    assert _calls(tmp_path / "seed_0") == "xx"


def test_another_experiments_workdir_is_refused(fake_copy, tmp_path):
    package, _ = fake_copy
    experiments = registry.discover(package)
    runner.run_experiment(experiments["toy_exp"], tmp_path)
    with pytest.raises(runner.ForeignRunError, match="run of experiment 'toy_exp'"):
        runner.run_experiment(experiments["batched_exp"], tmp_path)
    assert not (tmp_path / "seeds_0-3").exists()


def test_a_failure_before_any_file_leaves_nothing(fake_copy, tmp_path):
    package, _ = fake_copy
    experiment = registry.get_experiment("broken_exp", package)
    work = tmp_path / "new" / "work"
    with pytest.raises(RuntimeError, match="boom"):
        runner.run_experiment(experiment, work)
    assert not (tmp_path / "new").exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    with pytest.raises(RuntimeError, match="boom"):
        runner.run_experiment(experiment, existing)
    assert list(existing.iterdir()) == []


def test_a_workdir_in_use_is_refused(fake_copy, tmp_path):
    package, _ = fake_copy
    experiment = registry.get_experiment("toy_exp", package)
    with WorkdirLock(tmp_path), pytest.raises(WorkdirLocked, match="in use by process"):
        runner.run_experiment(experiment, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    runner.run_experiment(experiment, tmp_path)
    assert not (tmp_path / LOCK_NAME).exists()
    assert not (tmp_path / "seed_0").joinpath(LOCK_NAME).exists()


def test_calls_per_seed_or_batched(fake_copy):
    package, _ = fake_copy
    experiments = registry.discover(package)
    config = experiments["toy_exp"].get_config("quick")
    assert [name for name, _ in runner.calls(config)] == ["seed_0", "seed_1", "seed_2"]
    config = experiments["batched_exp"].get_config("quick")
    assert [name for name, _ in runner.calls(config)] == ["seeds_0-3"]
    config.num_seeds = 0
    with pytest.raises(ValueError, match="num_seeds must be >= 1"):
        runner.calls(config)


def test_every_call_logs_its_result_to_metrics_jsonl_once(tmp_path):
    experiment = registry.get_experiment("batched_exp", "tests.report.fake_experiments")
    runner.run_experiment(experiment, tmp_path)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    result = json.loads((run_dir / runner.RESULT).read_text())["result"]
    assert [r["step"] for r in rows] == [1]
    assert rows[0]["result/m/1"] == result["m"][1] and rows[0]["result/b/0"] == result["b"][0]
    assert json.loads((run_dir / "hparams.json").read_text())["num_seeds"] == len(result["m"])
    assert any((run_dir / "tb").iterdir())
    runner.run_experiment(experiment, tmp_path, fresh=True)  # the rerun replaces its row
    assert len((run_dir / "metrics.jsonl").read_text().splitlines()) == 1


def test_load_or_run_waits_for_the_process_using_the_workdir(tmp_path, monkeypatch):
    monkeypatch.setenv(runner.REPORTS_ENV, str(tmp_path))
    workdir = tmp_path / "smoke" / "workdirs" / "batched_exp"
    workdir.mkdir(parents=True)
    lock = WorkdirLock(workdir)
    lock.acquire()
    attempts = []
    sleep = runner.time.sleep

    def release_after_one_wait(seconds):
        attempts.append(seconds)
        lock.release()
        sleep(0)

    monkeypatch.setattr(runner.time, "sleep", release_after_one_wait)
    package = "tests.report.fake_experiments"
    results = runner.load_or_run("batched_exp", "smoke", package=package)
    assert len(attempts) == 1 and results[0]["m"][0] == 2.0
    assert runner.load_or_run("batched_exp", "smoke", package=package) == results  # reused
    assert [p.read_text() for p in workdir.glob("*/calls.txt")] == ["x"]
