import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from jaxlab import cli
from jaxlab.report import registry
from jaxlab.report.workdir import LOCK_NAME, WorkdirError

FAKE = "tests.report.fake_experiments"
REPO = Path(__file__).resolve().parents[1]


def _use_package(monkeypatch, package: str) -> None:
    real_papers = registry.discover_papers  # discover() passes its own default: ignored
    monkeypatch.setattr(registry, "EXPERIMENTS_PACKAGE", package)
    monkeypatch.setattr(registry, "discover_papers", lambda _=None: real_papers(package))


@pytest.fixture
def fake_registry(monkeypatch):
    _use_package(monkeypatch, FAKE)


# An experiment that resumes from <workdir>/checkpoints like `fit` does.
_CKPT_TRAIN = textwrap.dedent("""
    import jax.numpy as jnp
    import jax

    from jaxlab.train.checkpoint import Checkpointer


    def train_and_evaluate(config, workdir):
        restored = Checkpointer(workdir).restore({"w": jnp.zeros(3)}, jax.random.key(0))
        return {"m": 0.0 if restored is None else 1.0}
""")


@pytest.fixture
def fake_copy(tmp_path_factory, monkeypatch):
    """The fake experiments plus `ckpt_exp` (which restores a checkpoint), as a fresh
    package outside tmp_path; the registry uses it."""
    name = f"fake_cli_{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("packages")
    shutil.copytree(
        REPO / "tests" / "report" / "fake_experiments",
        root / name,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    exp = root / name / "toy_paper" / "ckpt_exp"
    shutil.copytree(root / name / "toy_paper" / "broken_exp", exp)
    (exp / "__init__.py").write_text(
        "from jaxlab.report import Claim, Experiment\n\n"
        "EXPERIMENT = Experiment(name='ckpt_exp',\n"
        "                        claims=(Claim('c', metric='m', diagnostic=True),))\n"
    )
    (exp / "train.py").write_text(_CKPT_TRAIN)
    monkeypatch.syspath_prepend(str(root))
    _use_package(monkeypatch, name)
    return name


def _err_lines(capsys) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return [line.strip() for line in err.splitlines() if line.strip()]


def test_list_groups_by_paper(fake_registry, capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("toy_paper: A. Author. Toy paper. ICML 2024\n")
    assert re.search(r"    toy_exp +3 claims +quick ≈ 1 s\n", out)
    assert re.search(r"    batched_exp +1 claim +quick", out)
    assert "1 claims" not in out


def test_list_never_doubles_the_period_after_et_al(fake_registry, monkeypatch, capsys):
    papers = registry.discover_papers()
    paper, experiments = papers["toy_paper"]
    many = dataclasses.replace(paper, authors="Author, Other, et al.")
    monkeypatch.setattr(
        registry, "discover_papers", lambda package=FAKE: {"toy_paper": (many, experiments)}
    )
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "Author, Other, et al. Toy paper. ICML 2024" in out and ".." not in out


def test_run_prints_the_claims_table_and_saves_json(fake_registry, tmp_path, capsys):
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not out.lstrip().startswith("{")
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("claim "))
    assert "verdict" in lines[header] and "smoke" not in out
    beats = lines[header + 1]
    assert beats.startswith("method beats baseline") and "(n=3)" in beats and "base 1.01" in beats
    assert "paper 1" in lines[header + 2]
    assert all(
        line.split()[-1] in {"supports", "contradicts", "inconclusive"}
        for line in lines[header + 1 : header + 4]
    )
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["experiment"] == "toy_exp" and len(saved["results"]) == 3
    assert [row["claim"] for row in saved["claims"]] == [
        "method beats baseline",
        "matches the paper",
        "batched runs are pooled",
    ]


def test_run_json_flag_and_overrides(fake_registry, tmp_path, capsys):
    assert (
        cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.lr=0.3", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert [r["echo"] for r in out["results"]] == [0.3, 0.3, 0.3]
    assert out == json.loads((tmp_path / "run.json").read_text())


def test_smoke_run_is_labelled(fake_registry, tmp_path, capsys):
    assert cli.main(["run", "batched_exp", "--preset", "smoke", "--workdir", str(tmp_path)]) == 0
    assert "smoke: claims need not hold" in capsys.readouterr().out


def test_fresh_runs_every_seed_again(fake_registry, tmp_path, capsys):
    for extra in ([], [], ["--fresh"]):
        assert cli.main(["run", "batched_exp", "--workdir", str(tmp_path), *extra]) == 0
        assert (tmp_path / "seeds_0-3" / "calls.txt").read_text() == "x"
    assert "running seeds_0-3 again (--fresh)" in capsys.readouterr().err


def test_unknown_names_and_keys_are_errors(fake_registry, tmp_path):
    with pytest.raises(SystemExit, match="valid: batched_exp, broken_exp, toy_exp"):
        cli.main(["run", "nope"])
    with pytest.raises(SystemExit, match="unknown config key .nope.*keys: batch_seeds"):
        cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.nope=1"])
    with pytest.raises(SystemExit, match="num_seeds must be >= 1"):
        cli.main(["run", "toy_exp", "--workdir", str(tmp_path), "--config.num_seeds=0"])
    with pytest.raises(SystemExit, match="unknown experiment 'x'"):
        cli.main(["reproduce", "--only", "x"])
    with pytest.raises(SystemExit, match="unknown paper 'nope'"):
        cli.main(["reproduce", "--paper", "nope"])
    with pytest.raises(SystemExit, match="--process_id need --multihost"):
        cli.main(["run", "toy_exp", "--process_id", "1"])
    with pytest.raises(SystemExit, match="unknown benchmark"):
        cli.main(["bench", "no_such_benchmark"])
    with pytest.raises(SystemExit, match="--jobs must be >= 1"):
        cli.main(["reproduce", "--jobs", "0"])
    assert not list(tmp_path.iterdir())


def _needs_missing_data(monkeypatch):
    from jaxlab.data import prerequisites

    monkeypatch.setitem(prerequisites.CHECKS, "fashion_mnist", lambda d: "apt-get install it")
    toy = registry.discover()["toy_exp"]
    monkeypatch.setattr(
        registry,
        "discover",
        lambda package=FAKE: {"toy_exp": dataclasses.replace(toy, requires=("fashion_mnist",))},
    )


def test_run_stops_before_running_when_data_is_missing(
    fake_registry, monkeypatch, tmp_path, capsys
):
    _needs_missing_data(monkeypatch)
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path / "w")]) == 2
    assert _err_lines(capsys) == [
        "jaxlab: data missing, nothing was run:",
        "toy_exp: apt-get install it",
    ]
    assert not (tmp_path / "w").exists()


def test_reproduce_stops_before_running_when_data_is_missing(
    fake_registry, monkeypatch, tmp_path, capsys
):
    _needs_missing_data(monkeypatch)
    assert cli.main(["reproduce", "--out", str(tmp_path / "out")]) == 2
    assert "toy_exp: apt-get install it" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("under", ["file", "/proc"])
def test_unusable_workdir_is_one_line(fake_registry, tmp_path, capsys, under):
    (tmp_path / "file").write_text("x")
    workdir = str(tmp_path / "file" / "w") if under == "file" else "/proc/jaxlab-no/w"
    assert cli.main(["run", "toy_exp", "--workdir", workdir]) == 2
    (line,) = _err_lines(capsys)
    assert line.startswith("jaxlab: cannot create the directory") and workdir in line
    assert line.endswith("choose another directory")
    with pytest.raises(WorkdirError):
        cli.main(["--debug", "run", "toy_exp", "--workdir", workdir])
    with pytest.raises(WorkdirError):
        cli.main(["run", "toy_exp", "--workdir", workdir, "--debug"])


def test_reproduce_out_under_a_file_fails_before_running(fake_registry, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert cli.main(["reproduce", "--out", str(tmp_path / "file" / "out")]) == 2
    (line,) = _err_lines(capsys)
    assert "cannot create the directory" in line and "Not a directory" in line


def test_a_failed_run_leaves_no_empty_folders(fake_registry, tmp_path):
    with pytest.raises(RuntimeError, match="boom"):  # a bug, not a user error: traceback
        cli.main(["run", "broken_exp", "--workdir", str(tmp_path / "a" / "w")])
    assert not (tmp_path / "a").exists()


def _dead_pid() -> int:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(finished.stdout)


def test_workdir_in_use_is_refused_and_a_stale_lock_taken_over(fake_registry, tmp_path, capsys):
    import socket

    lock = tmp_path / LOCK_NAME
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(json.dumps({"pid": live.pid, "host": socket.gethostname()}))
        assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path)]) == 2
        (line,) = _err_lines(capsys)
        assert f"is in use by process {live.pid}" in line and "wait for that run" in line
        assert not (tmp_path / "seed_0").exists()
        assert cli.main(["reproduce", "--out", str(tmp_path)]) == 2
        assert "in use by process" in capsys.readouterr().err
    finally:
        live.kill()
        live.wait()
    dead = _dead_pid()
    lock.write_text(json.dumps({"pid": dead, "host": socket.gethostname()}))
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path)]) == 0
    assert f"stale lock {lock} of process {dead}" in capsys.readouterr().err
    assert not lock.exists()


def test_another_experiments_workdir_is_one_line(fake_registry, tmp_path, capsys):
    assert cli.main(["run", "toy_exp", "--workdir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert cli.main(["run", "broken_exp", "--workdir", str(tmp_path)]) == 2
    (line,) = _err_lines(capsys)
    assert "holds a run of experiment 'toy_exp'" in line and "another --workdir" in line


def test_a_foreign_checkpoint_is_one_line(fake_copy, tmp_path, capsys):
    import jax
    import jax.numpy as jnp

    from jaxlab.train.checkpoint import Checkpointer

    other = Checkpointer(tmp_path / "seed_0")  # a model of another shape, left in the workdir
    other.save(1, {"v": jnp.ones((2, 2))}, jax.random.key(0))
    other.wait()
    other.close()
    assert cli.main(["run", "ckpt_exp", "--workdir", str(tmp_path)]) == 2
    (line,) = _err_lines(capsys)
    directory = tmp_path / "seed_0" / "checkpoints"
    assert line.startswith(f"jaxlab: cannot restore the checkpoint at step 1 in {directory}")
    assert line.endswith(f"delete {directory} or pass another --workdir")


def test_reproduce_with_a_failing_experiment_still_reports(fake_registry, tmp_path):
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 1
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["verdict"] for r in rows} >= {"failed", "supports"}
    assert not (tmp_path / LOCK_NAME).exists()


def test_reproduce_by_paper_and_fresh(fake_registry, tmp_path, capsys):
    for extra in ([], ["--fresh"]):
        assert (
            cli.main(
                [
                    "reproduce",
                    "--paper",
                    "toy_paper",
                    "--only",
                    "toy_exp",
                    "batched_exp",
                    "--out",
                    str(tmp_path),
                    *extra,
                ]
            )
            == 0
        )
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["experiment"] for r in rows} == {"toy_exp", "batched_exp"}
    assert "running seeds_0-3 again (--fresh)" in capsys.readouterr().err


def test_reproduce_with_nothing_registered(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(registry, "discover", lambda package="experiments": {})
    assert cli.main(["reproduce", "--out", str(tmp_path)]) == 0
    assert "No experiment is registered yet" in (tmp_path / "REPORT.md").read_text()


def test_report_errors_are_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no .*nope.md here"):
        cli.main(["report", "--readme", str(tmp_path / "nope.md")])
    (tmp_path / "R.md").write_text("x")
    with pytest.raises(SystemExit, match="no per-experiment results in"):
        cli.main(["report", "--readme", str(tmp_path / "R.md"), "--from", str(tmp_path)])


def test_plan_and_data_parsers():
    parser = cli._parser()
    args = parser.parse_args(["plan", "mcf_qm9"])
    assert (args.command, args.name, args.preset, args.devices) == ("plan", "mcf_qm9", "paper", 8)
    args = parser.parse_args(["plan", "x", "--preset", "quick", "--devices", "4"])
    assert (args.preset, args.devices) == ("quick", 4)
    args = parser.parse_args(["data", "fetch", "cora", "--data_dir", "/d"])
    assert (args.command, args.data_command, args.name, args.data_dir) == (
        "data",
        "fetch",
        "cora",
        "/d",
    )
    assert parser.parse_args(["data", "list"]).data_command == "list"
    with pytest.raises(SystemExit):
        parser.parse_args(["data"])


# --- the parser against the README's command block ---------------------------------------


def _leaf_parsers(parser, path=()):
    """(command path, parser) of the root and of every command without subcommands."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not path or not subs:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaf_parsers(child, (*path, name))


def _all_parsers(parser, path=()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _all_parsers(child, (*path, name))


def _readme_lines(parser) -> dict[tuple[str, ...], str]:
    text = (REPO / "README.md").read_text()
    block = text.split("## Command line", 1)[1].split("```", 2)[1]
    lines: list[str] = []
    for raw in block.splitlines():
        code = raw.split("  #", 1)[0]
        if raw.startswith("jaxlab"):
            lines.append(code)
        elif raw.startswith(" ") and lines:
            lines[-1] += " " + code.strip()
    found = {}
    for line in lines:
        node, path = parser, []
        for token in line.split()[1:]:
            subs = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
            if not subs or token not in subs[0].choices:
                break
            node, path = subs[0].choices[token], [*path, token]
        assert tuple(path) not in found, f"README lists `jaxlab {' '.join(path)}` twice"
        found[tuple(path)] = line
    return found


def test_readme_command_block_matches_the_parser():
    parser = cli._parser()
    readme = _readme_lines(parser)
    leaves = dict(_leaf_parsers(parser))
    assert set(readme) == set(leaves)
    for path, sub in leaves.items():
        line = readme[path]
        documented = {o for o in re.findall(r"(?<![\w.-])--[a-z][\w-]*", line) if o != "--config"}
        options = {
            o
            for a in sub._actions
            for o in a.option_strings
            if o.startswith("--") and o != "--help" and (not path or o != "--debug")
        }
        assert documented == options, f"jaxlab {' '.join(path)}: {documented ^ options}"
        words = set(re.findall(r"[A-Z][A-Z_]*", line))
        for action in sub._actions:
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                assert (action.metavar or action.dest.upper()) in words, (path, action.dest)
    assert "[--config.KEY=VALUE ...]" in readme[("run",)]


def test_every_help_is_informative(capsys):
    for path, sub in _all_parsers(cli._parser()):
        assert sub.description and len(sub.description) > 40, path
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                assert action.help, (path, action.dest)
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--config.KEY=VALUE" in out and "(default: quick)" in out
    with pytest.raises(SystemExit):
        cli.main(["list", "--help"])
    assert "number of claims" in " ".join(capsys.readouterr().out.split())
