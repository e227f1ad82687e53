import json

import ml_collections
import numpy as np
import pytest

from jaxlab.report import configs, markdown, registry, runner, verdict

FAKE = "tests.report.fake_experiments"


def test_discover_papers_and_unknown_names():
    papers = registry.discover_papers(FAKE)
    assert list(papers) == ["toy_paper"]  # a folder without PAPER is not a paper
    paper, experiments = papers["toy_paper"]
    assert paper.citation == "A. Author. Toy paper. ICML 2024"
    found = registry.discover(FAKE)
    assert list(found) == ["batched_exp", "broken_exp", "toy_exp"]
    assert found["toy_exp"].module == f"{FAKE}.toy_paper.toy_exp"
    assert found["toy_exp"].paper is paper
    with pytest.raises(KeyError, match="valid experiments: batched_exp, broken_exp, toy_exp"):
        registry.get_experiment("nope", FAKE)


def test_base_config_presets():
    for preset in configs.PRESETS:
        config = configs.base_config(preset)
        assert config.preset == preset and config.num_seeds == 1 and not config.batch_seeds
    with pytest.raises(ValueError, match="preset must be one of"):
        configs.base_config("fast")


def test_batched_seeds_run_once_and_pool(tmp_path):
    experiment = registry.get_experiment("batched_exp", FAKE)
    results, _ = runner.run_experiment(experiment, tmp_path)
    assert len(results) == 1 and len(results[0]["m"]) == 4
    assert (tmp_path / "seeds_0-3" / "calls.txt").read_text() == "x"
    runner.run_experiment(experiment, tmp_path)  # cached
    assert (tmp_path / "seeds_0-3" / "calls.txt").read_text() == "x"
    np.testing.assert_allclose(verdict.pool(results, "m"), [2.0, 2.01, 2.02, 2.03])


def test_overrides_types_and_unknown_keys():
    config = ml_collections.ConfigDict(
        {"lr": 0.1, "steps": 3, "model": {"width": 4}, "name": "a", "sizes": (1, 2)}
    )
    new = configs.apply_overrides(config, ["lr=1", "model.width=8", "name=b", "sizes=[3,4]"])
    assert new.lr == 1.0 and isinstance(new.lr, float)
    assert new.model.width == 8 and new.name == "b" and new.sizes == (3, 4)
    assert config.lr == 0.1  # the original is untouched
    with pytest.raises(KeyError, match=r"unknown config key 'lrr'.*valid keys: lr, model.width"):
        configs.apply_overrides(config, ["lrr=1"])
    with pytest.raises(ValueError, match="steps"):
        configs.apply_overrides(config, ["steps=abc"])
    with pytest.raises(ValueError, match="KEY=VALUE"):
        configs.apply_overrides(config, ["lr"])


def test_runner_seeds_resume_and_overrides(tmp_path):
    experiment = registry.get_experiment("toy_exp", FAKE)
    results, _ = runner.run_experiment(experiment, tmp_path, overrides=["lr=0.5"])
    assert [r["echo"] for r in results] == [0.5, 0.5, 0.5]
    assert [round(r["base"], 3) for r in results] == [1.0, 1.01, 1.02]
    runner.run_experiment(experiment, tmp_path, overrides=["lr=0.5"])  # cached
    assert (tmp_path / "seed_1" / "calls.txt").read_text() == "x"
    runner.run_experiment(experiment, tmp_path, overrides=["lr=0.7"])  # config changed
    # A changed config empties the seed folder and runs it once more.
    assert (tmp_path / "seed_1" / "calls.txt").read_text() == "x"


def test_reproduce_in_worker_processes_gives_the_same_records(tmp_path):
    experiments = list(registry.discover(FAKE).values())
    serial = runner.run_all(experiments, tmp_path / "serial", progress=False)
    parallel = runner.run_all(
        experiments, tmp_path / "parallel", progress=False, jobs=2, package=FAKE
    )
    assert [r["experiment"].name for r in parallel] == [e.name for e in experiments]
    for a, b in zip(serial, parallel, strict=True):
        assert a["results"] == b["results"]
        assert (a["error"] is None) == (b["error"] is None)
    assert "boom" in next(r["error"] for r in parallel if r["error"])
    with pytest.raises(ValueError, match="jobs"):
        runner.run_all(experiments, tmp_path, progress=False, jobs=0)


def test_reproduce_report_and_results_json(tmp_path):
    experiments = list(registry.discover(FAKE).values())
    records = runner.run_all(experiments, tmp_path, progress=False)
    rows = markdown.write_report(records, tmp_path, "quick", 12.0)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved == rows
    keys = {
        "experiment",
        "claim",
        "metric",
        "paper",
        "ours_mean",
        "ours_std",
        "num_seeds",
        "setting",
        "verdict",
    }
    assert all(keys <= set(r) for r in saved)
    assert {r["paper_id"] for r in saved} == {"toy_paper"}
    assert json.loads((tmp_path / "results" / "toy_exp.json").read_text()) == [
        r for r in saved if r["experiment"] == "toy_exp"
    ]
    broken = [r for r in saved if r["experiment"] == "broken_exp"]
    assert broken[0]["verdict"] == "failed" and "boom" in broken[0]["error"]
    beats, matches, pooled = [r for r in saved if r["experiment"] == "toy_exp"]
    assert beats["verdict"] == "supports" and beats["num_seeds"] == 3
    np.testing.assert_allclose(beats["ours_mean"], 2.01)
    np.testing.assert_allclose(beats["ours_std"], np.std([2.0, 2.01, 2.02], ddof=1))
    assert matches["verdict"] == "contradicts"  # 2.01 is not within 0.5 of 1.0
    assert pooled["num_seeds"] == 6
    report = (tmp_path / "REPORT.md").read_text()
    assert "Wall time: **0.2 min**" in report
    # summary: paper, experiments, supports, contradicts, inconclusive, failed
    assert "| [Toy paper](toy_paper.md) | 3 | 3 | 1 | 0 | 1 |" in report
    assert "`broken_exp` failed: RuntimeError: boom" in report
    page = (tmp_path / "toy_paper.md").read_text()
    assert page.startswith("# A. Author. Toy paper. ICML 2024")
    assert "failed: RuntimeError: boom" in page and "declared CPU budget 1 s" in page
    assert (tmp_path / "plots" / "toy_exp.png").stat().st_size > 1000


def test_a_stalled_worker_is_restarted_once(tmp_path, capsys):
    package = "tests.report.stall_experiments"
    experiments = list(registry.discover(package).values())
    records = runner.run_all(
        experiments, tmp_path, progress=False, jobs=2, package=package, stall_s=3.0, poll_s=0.5
    )
    by_name = {r["experiment"].name: r for r in records}
    assert by_name["stall_exp"]["error"] is None and by_name["stall_exp"]["results"]
    assert by_name["stall_exp"]["retried"] and "retried" not in by_name["steady_exp"]
    assert "stall_exp: no CPU use" in capsys.readouterr().err
    # The stalled worker's threads' stacks name the line it waited on; the steady one has none.
    stacks = (tmp_path / "stalls" / "stall_exp.txt").read_text()
    assert "attempt 1: Python threads" in stacks
    assert "stall_exp/train.py" in stacks and "train_and_evaluate" in stacks
    assert not (tmp_path / "stalls" / "steady_exp.txt").exists()
