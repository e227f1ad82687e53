"""The jaxlab command. `jaxlab COMMAND --help` describes each command; the README's
"Command line" block lists them all (a test keeps the two equal).

A user error (an unknown name, missing data, a workdir that cannot be used or is in use, a
checkpoint that cannot be restored) prints one or two lines, the problem and the remedy,
and exits non-zero; `jaxlab --debug COMMAND ...` shows the Python traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jaxlab.report import registry
from jaxlab.report.configs import PRESETS

# Exceptions whose message already names the problem and its remedy: (module, class). A
# class is looked up only when its module has been imported (an instance of it implies so),
# which keeps `jaxlab list` from importing JAX and orbax.
_USER_ERRORS = (
    ("jaxlab.report.workdir", "WorkdirError"),
    ("jaxlab.train.checkpoint", "CheckpointError"),
    ("jaxlab.data.paths", "DataNotFoundError"),
    ("jaxlab.data.fetch", "FetchError"),
)

_RUN_HELP = """\
Runs every seed of experiment NAME at a preset, then prints the experiment's claims with
their verdicts; the results are also saved as JSON (<workdir>/run.json; --json prints it).

The workdir keeps each seed's folder: a killed run resumes from its checkpoints, and a
finished seed is reused while its config and code (the experiment's folder and the jaxlab
package, by SHA-256) are unchanged; --fresh runs every seed again. A workdir is locked
while a run uses it.

Config values: --config.KEY=VALUE, any number of times; dotted keys, Python literals, e.g.
  jaxlab run multimax_tradeoff --preset smoke --config.num_seeds=5 --config.model.width=64
An unknown key lists the valid ones.
"""


def _add_debug(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        default=default,
        help="show the Python traceback of an error",
    )


def _command(sub, name: str, summary: str, description: str) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=summary,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_debug(parser, argparse.SUPPRESS)  # also accepted after the command
    return parser


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data_dir",
        metavar="DIR",
        help="offline data directory (default: $JAXLAB_DATA_DIR, else ../shared/data)",
    )


def _multihost_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--multihost",
        action="store_true",
        help="call jax.distributed.initialize() first (TPU pods, SLURM, ...)",
    )
    parser.add_argument(
        "--coordinator",
        metavar="HOST:PORT",
        help="with --multihost: process 0's address (default: detected from "
        "the cluster's environment, or $JAX_COORDINATOR_ADDRESS)",
    )
    parser.add_argument(
        "--num_processes",
        type=int,
        metavar="N",
        help="with --multihost: the number of processes (default: detected)",
    )
    parser.add_argument(
        "--process_id",
        type=int,
        metavar="I",
        help="with --multihost: this process's index (default: detected)",
    )


def _preset_option(parser: argparse.ArgumentParser, default: str, what: str) -> None:
    parser.add_argument(
        "--preset", choices=PRESETS, default=default, help=f"{what} (default: {default})"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxlab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    _add_debug(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _command(
        sub,
        "list",
        "list the papers and their experiments",
        "Prints each paper (its citation) and, under it, its experiments: the name, "
        "the number of claims\nand the quick preset's declared wall time on a 2-core "
        "CPU.",
    )

    run = _command(sub, "run", "run one experiment (all its seeds) and print its claims", _RUN_HELP)
    run.add_argument("name", metavar="NAME", help="the experiment (`jaxlab list` names them)")
    _preset_option(
        run,
        "quick",
        "smoke: seconds, claims need not hold; quick: the reproduction; paper: the paper's scale",
    )
    run.add_argument("--workdir", metavar="DIR", help="default: workdirs/<name>/<preset>")
    _data_dir_option(run)
    _multihost_option(run)
    run.add_argument(
        "--fresh",
        action="store_true",
        help="ignore saved results and checkpoints: run every seed again",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="with --preset paper: the paper program at its real model shapes on "
        "mock data of its datasets (2 steps a phase, a global batch of at most 8 "
        "rows per device, one evaluation batch); writes a checkpoint, "
        "metrics.jsonl and run.json with the datasets read",
    )
    run.add_argument(
        "--json", action="store_true", help="print the results as JSON instead of the claims table"
    )

    rep = _command(
        sub,
        "reproduce",
        "run experiments and write the report",
        "Runs the selected experiments (all by default) and writes REPORT.md, one "
        "page per paper,\nresults.json and results/<experiment>.json under --out. "
        "Saved seeds are reused as by `jaxlab run`.",
    )
    _preset_option(rep, "quick", "the preset of every experiment")
    rep.add_argument(
        "--paper",
        nargs="+",
        metavar="ID",
        default=None,
        help="only the experiments of these papers",
    )
    rep.add_argument(
        "--only", nargs="+", metavar="NAME", default=None, help="only these experiments"
    )
    rep.add_argument(
        "--only-cpu-feasible",
        action="store_true",
        help="with --preset paper: only the experiments whose planned CPU hours (the "
        "README's plans:paper table) are at most 2",
    )
    rep.add_argument(
        "--out",
        metavar="DIR",
        help="default: reports/<preset> ($JAXLAB_REPORTS_DIR/<preset> when set)",
    )
    rep.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="experiments run at once, each in its own process (default 1)",
    )
    _data_dir_option(rep)
    _multihost_option(rep)
    rep.add_argument(
        "--fresh",
        action="store_true",
        help="ignore saved results and checkpoints: run everything again",
    )

    report = _command(
        sub,
        "report",
        "regenerate the README's results from the committed "
        "per-experiment results (docs/results/<preset>/)",
        "Rewrites the README's results block of a preset and the results "
        "blocks of the method docs\n(docs/*.md) from docs/results/<preset>/*.json. "
        "The paper preset's blocks sit beside the\nquick ones (results:paper in the "
        "README, results:NAME:paper in the docs) and never\nreplace them.",
    )
    report.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="first copy DIR/results/*.json (a reproduce run) into them",
    )
    _preset_option(report, "quick", "which results block")
    report.add_argument(
        "--readme",
        default="README.md",
        metavar="PATH",
        help="the README to rewrite (default: README.md)",
    )
    report.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the README, the method docs or the committed "
        "results are stale (other claims, or quick results computed by other code, packages "
        "or data than this checkout's): the quick blocks, and the paper blocks when "
        "docs/results/paper exists",
    )
    report.add_argument(
        "--rejudge",
        action="store_true",
        help="first judge the committed samples again with the current claims "
        "and verdict rule, rewriting docs/results/<preset>/*.json",
    )

    bench = _command(
        sub,
        "bench",
        "run benchmarks/NAME.py (all when NAME is omitted)",
        "Runs benchmarks against the baselines a user would otherwise use, "
        "measured in the same run.",
    )
    bench.add_argument("name", nargs="?", metavar="NAME", help="one benchmark (default: all)")
    bench.add_argument("--quick", action="store_true", help="a short run of each benchmark")

    accel = _command(
        sub,
        "accel-check",
        "kernel tests + every benchmark --quick on this backend; a table in reports/accel/",
        "Runs the kernel tests and every benchmark's quick mode on the backend "
        "JAX finds,\nand writes OUT/ACCEL.md. The tests run with JAX_PLATFORMS set to "
        "that backend; the\ncheck fails when a test process ran on another one.",
    )
    accel.add_argument(
        "--out",
        default=os.path.join("reports", "accel"),
        metavar="DIR",
        help="default: reports/accel",
    )
    accel.add_argument("--no-tests", action="store_true", help="benchmarks only")
    accel.add_argument(
        "--test-path",
        nargs="+",
        metavar="PATH",
        default=None,
        help="only these test files or folders (default: every kernel test folder)",
    )
    accel.add_argument(
        "--bench", nargs="*", metavar="NAME", default=None, help="only these benchmarks"
    )

    plan = _command(
        sub,
        "plan",
        "compile an experiment at a preset's real shapes: memory, FLOPs, estimated time",
        "Compiles experiment NAME's programs (training, evaluation, sampling) ahead "
        "of time at the\npreset's real shapes on an N-device mesh (abstract "
        "inputs, nothing allocated) and\nprints per-device memory, FLOPs and bytes "
        "per call (loops times their trip counts),\nthe precision of the matrix "
        "products, the padding share, and compute-bound and\nmemory-bound hours "
        "on named accelerators, and the CPU hours on this machine. --all adds\nwhether "
        "each paper preset runs today. --measure K plans on the present devices\nand runs "
        "K calls of each program on synthetic inputs: measured seconds per call\nbeside "
        "the estimate, achieved FLOP/s, share of the peak, host input rate.",
    )
    plan.add_argument("name", metavar="NAME", nargs="?", help="the experiment")
    _preset_option(plan, "paper", "the preset whose shapes are compiled")
    plan.add_argument(
        "--devices", type=int, default=8, metavar="N", help="devices of the mesh (default: 8)"
    )
    plan.add_argument(
        "--all", action="store_true", help="every experiment, one table row each (instead of NAME)"
    )
    plan.add_argument(
        "--readme",
        metavar="PATH",
        default=None,
        help="with --all: write the table into PATH's <!-- plans:PRESET --> block",
    )
    plan.add_argument(
        "--measure",
        type=int,
        default=0,
        metavar="K",
        help="run K timed calls of each program on the present devices (with NAME)",
    )

    data = _command(
        sub,
        "data",
        "get the public datasets the experiments read",
        "Downloads public datasets into ~/.cache/jaxlab (or --data_dir), checks "
        "their SHA-256\nand converts them to the layout the loaders read.",
    )
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    fetch = _command(
        data_sub,
        "fetch",
        "download and convert dataset NAME",
        "Downloads dataset NAME from its canonical source, verifies it and converts it.",
    )
    fetch.add_argument("name", metavar="NAME", help="the dataset (`jaxlab data list`)")
    fetch.add_argument(
        "--data_dir", metavar="DIR", help="where to put it (default: ~/.cache/jaxlab)"
    )
    _command(
        data_sub,
        "list",
        "list the datasets `jaxlab data fetch` can get",
        "Prints the names of the datasets `jaxlab data fetch` can get.",
    )
    return parser


def _check_names(names: Sequence[str], valid: Sequence[str], what: str) -> None:
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise SystemExit(
            f"jaxlab: unknown {what} {', '.join(map(repr, unknown))}; "
            f"valid: {', '.join(valid) or '(none registered)'}"
        )


def _is_user_error(error: BaseException) -> bool:
    for module, name in _USER_ERRORS:
        kind = getattr(sys.modules.get(module), name, None)
        if kind is not None and isinstance(error, kind):
            return True
    return False


def _is_primary(args) -> bool:
    """Whether this process writes the shared outputs (always, unless ``--multihost``)."""
    if not getattr(args, "multihost", False):
        return True
    import jax

    return jax.process_index() == 0


def _missing_data(experiments, preset: str = "quick", config=None) -> bool:
    """Prints what data the ``preset`` runs of ``experiments`` (or the one run of
    ``config``) miss, one remedy per line; True if any."""
    from jaxlab.report import runner

    problems = runner.check_prerequisites(experiments, preset, config=config)
    if problems:
        print("jaxlab: data missing, nothing was run:\n  " + "\n  ".join(problems), file=sys.stderr)
    return bool(problems)


def _cmd_list(args) -> int:
    papers = registry.discover_papers()
    if not papers:
        print("No experiment is registered yet.")
    for paper_id, (paper, experiments) in papers.items():
        print(f"{paper_id}: {paper.citation}")
        for name, experiment in experiments.items():
            budget = experiment.get_config("quick").cpu_budget_s
            count = len(experiment.claims)
            claims = f"{count:2d} claim{'' if count == 1 else 's'}"
            print(f"    {name:30s} {claims:10s} quick ≈ {budget:.0f} s")
    return 0


def _number(mean: float | None, std: float | None, unit: str) -> str:
    if mean is None:
        return "—"
    return f"{mean:.4g}" + (f" ± {std:.2g}" if std else "") + unit


def _claims_table(rows: list[dict[str, Any]]) -> list[str]:
    """The claim rows of ``markdown.claim_rows`` as an aligned plain-text table."""
    header = ("claim", "ours (mean ± std, n)", "paper / threshold / baseline", "verdict")
    body = []
    for row in rows:
        unit = row.get("unit") or ""
        ours = _number(row.get("ours_mean"), row.get("ours_std"), unit)
        if row.get("num_seeds"):
            ours += f" (n={row['num_seeds']})"
        reference = []
        if row.get("paper") is not None:
            reference.append(f"paper {row['paper']:.4g}{unit}")
        if row.get("threshold") is not None:
            reference.append(f"threshold {row['threshold']:.4g}{unit}")
        if row.get("baseline"):
            base = _number(row.get("baseline_mean"), row.get("baseline_std"), unit)
            reference.append(f"{row['baseline']} {base}")
        verdict = str(row.get("verdict"))
        if row.get("error"):
            verdict += f": {row['error']}"
        body.append((str(row["claim"]), ours, "; ".join(reference) or "—", verdict))
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(3)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + "  "
        + line[3]
        for line in (header, *body)
    ]


def _cmd_run(args) -> int:
    from jaxlab.report import configs, markdown, runner

    experiments = registry.discover()
    _check_names([args.name], list(experiments), "experiment")
    experiment = experiments[args.name]
    try:
        if args.dry_run:
            import jax

            if args.preset != "paper":
                raise ValueError("--dry-run runs the paper preset: add --preset paper")
            config = experiment.dry_run_config(jax.device_count())
        else:
            config = experiment.get_config(args.preset)
        config = configs.apply_overrides(config, args.overrides)
        runner.calls(config)
    except (KeyError, ValueError) as error:
        raise SystemExit(f"jaxlab: {error.args[0] if error.args else error}") from error
    if _missing_data([experiment], args.preset, config):
        return 2
    folder = f"{args.preset}-dry-run" if args.dry_run else args.preset
    workdir = Path(args.workdir or os.path.join("workdirs", args.name, folder))
    primary = _is_primary(args)
    results, seconds = runner.run_experiment(
        experiment,
        workdir,
        args.preset,
        args.overrides,
        fresh=args.fresh,
        lock=primary,
        dry_run=args.dry_run,
    )
    if not primary:
        return 0
    if args.dry_run:
        return _dry_run_summary(args, workdir, results, seconds)
    record = {
        "experiment": experiment,
        "results": results,
        "error": None,
        "seconds": seconds,
        "budget": float(config.cpu_budget_s),
        "preset": args.preset,
    }
    rows = runner.jsonable(markdown.claim_rows([record]))
    summary = {
        "experiment": args.name,
        "preset": args.preset,
        "seconds": round(seconds, 1),
        "results": results,
        "claims": rows,
    }
    text = json.dumps(summary, indent=1, default=str)
    (workdir / "run.json").write_text(text + "\n")
    if args.json:
        print(text)
        return 0
    print(
        f"{args.name}: preset {args.preset}, {seconds:.1f} s, {len(results)} call(s), "
        f"workdir {workdir}"
    )
    if args.preset == "smoke":
        print("smoke: claims need not hold (tiny sizes; --preset quick is the reproduction)")
    print("\n".join(_claims_table(rows)))
    print(f"Results as JSON: {workdir / 'run.json'}")
    return 0


def _dry_run_summary(args, workdir: Path, results: list[dict[str, Any]], seconds: float) -> int:
    """Writes and prints a dry run's ``run.json``: its metrics and every dataset it read."""
    datasets = [d for result in results for d in result["datasets"]]
    summary = {
        "experiment": args.name,
        "preset": args.preset,
        "dry_run": True,
        "seconds": round(seconds, 1),
        "datasets": datasets,
        "results": [result["metrics"] for result in results],
    }
    text = json.dumps(summary, indent=1, default=str)
    (workdir / "run.json").write_text(text + "\n")
    if args.json:
        print(text)
        return 0
    read = ", ".join(f"{d['name']}[{d['split']}]" for d in datasets) or "no TFDS dataset"
    print(
        f"{args.name}: paper preset dry run, {seconds:.1f} s, mock data of: {read}; "
        f"workdir {workdir}"
    )
    print(f"Results as JSON: {workdir / 'run.json'}")
    return 0


def _cpu_feasible(chosen: list, preset: str, readme_path: str = "README.md") -> list:
    """The experiments of ``chosen`` whose paper preset fits a CPU (``report.feasible``)."""
    from jaxlab.report import feasible

    if preset != "paper":
        raise SystemExit(f"jaxlab: --only-cpu-feasible goes with --preset paper, not {preset}")
    if not Path(readme_path).is_file():
        raise SystemExit(f"jaxlab: --only-cpu-feasible reads {readme_path}; run from the root")
    try:
        names = feasible.feasible_in(readme_path)
    except ValueError as error:
        raise SystemExit(f"jaxlab: {readme_path}: {error}") from error
    return [e for e in chosen if e.name in names]


def _cmd_reproduce(args) -> int:
    from jaxlab.report import markdown, paper_results, runner, workdir

    if args.jobs < 1:
        raise SystemExit(f"jaxlab: --jobs must be >= 1, got {args.jobs}")
    experiments = registry.discover()
    chosen = list(experiments.values())
    if args.paper:
        papers = registry.discover_papers()
        _check_names(args.paper, list(papers), "paper")
        chosen = [e for e in chosen if e.paper is not None and e.paper.id in args.paper]
    if args.only:
        _check_names(args.only, list(experiments), "experiment")
        chosen = [e for e in chosen if e.name in args.only]
    if args.only_cpu_feasible:
        chosen = _cpu_feasible(chosen, args.preset)
    out = Path(args.out) if args.out else runner.default_out(args.preset)
    if not chosen:
        print("No experiment is registered yet; writing an empty report.")
    if _missing_data(chosen, args.preset):
        return 2
    start = time.perf_counter()
    with workdir.claimed(out, lock=_is_primary(args)):
        records = runner.run_all(chosen, out, args.preset, jobs=args.jobs, fresh=args.fresh)
        rows = markdown.write_report(records, out, args.preset, time.perf_counter() - start)
        if args.preset == "paper":
            names = [r["experiment"].name for r in records]
            paper_results.stamp_commit(out / "results", names, paper_results.head_commit())
    print(
        f"Wrote {out / 'REPORT.md'}, one page per paper and {out / 'results.json'} "
        f"({len(rows)} claims). `jaxlab report --from {out}` updates the README."
    )
    for record in records:
        if record["error"]:
            print(f"FAILED {record['experiment'].name}:\n{record['traceback']}", file=sys.stderr)
    return 1 if any(r["error"] for r in records) else 0


def _cmd_report(args) -> int:
    from jaxlab.report import docblocks, paper_results, provenance, readme

    results_root = Path("docs") / "results"
    results_dir = results_root / args.preset
    if not Path(args.readme).is_file():
        raise SystemExit(
            f"jaxlab: no {args.readme} here; run from the repository root or pass --readme PATH"
        )
    if args.source:
        try:
            copied = readme.copy_results(args.source, results_dir)
        except FileNotFoundError as error:
            raise SystemExit(f"jaxlab: {error}") from error
        print(f"Copied results of {', '.join(copied)} into {results_dir}.")
    if args.rejudge:
        judged = readme.rejudge_results(results_dir, args.preset)
        print(f"Judged the committed samples of {len(judged)} experiments again in {results_dir}.")
    text = Path(args.readme).read_text()
    docs_dir = Path(args.readme).parent / "docs"
    docs = {p: p.read_text() for p in sorted(docs_dir.glob("*.md"))}
    # --check: the quick blocks always, the paper blocks when paper results are committed.
    presets = [args.preset]
    if args.check:
        paper = ["paper"] if (results_root / "paper").is_dir() else []
        presets = list(dict.fromkeys([args.preset, "quick", *paper]))
    failed = False
    for preset in presets:
        results = readme.load_results(results_root / preset)
        try:
            updated = paper_results.render_readme(text, preset, results_root)
        except ValueError as error:
            raise SystemExit(f"jaxlab: {error}") from error
        stale = readme.stale_claims(results)
        if not args.check:
            Path(args.readme).write_text(updated)
            changed = docblocks.rewrite_docs(docs_dir, results, preset)
            print(
                f"Rewrote the {preset} results block of {args.readme} and the results blocks "
                f"of {len(changed)} method docs from {len(results)} experiments."
            )
            for line in stale:
                print(f"warning: stale results: {line}", file=sys.stderr)
            continue
        drifted = [p.name for p, t in docs.items() if docblocks.update(t, results, preset) != t]
        fix = "jaxlab report" + ("" if preset == "quick" else f" --preset {preset}")
        if updated != text:
            print(
                f"jaxlab: {args.readme} is not the table of {results_root / preset}; run `{fix}`",
                file=sys.stderr,
            )
        for name in drifted:
            print(
                f"jaxlab: docs/{name} has results blocks that differ from "
                f"{results_root / preset}; run `{fix}`",
                file=sys.stderr,
            )
        for line in stale:
            print(f"jaxlab: stale results: {line}", file=sys.stderr)
        # Quick results must all come from this checkout; paper results that name the
        # commit they ran at instead (no provenance record) are left to that commit.
        other_code = provenance.stale(results_root / preset, preset, required=preset == "quick")
        for line in other_code:
            print(f"jaxlab: stale results: {line}", file=sys.stderr)
        failed = failed or updated != text or bool(stale or drifted or other_code)
    return 1 if failed else 0


def _cmd_bench(args) -> int:
    from jaxlab.report import accel

    available = accel.available_benchmarks()
    names = [args.name] if args.name else available
    _check_names(names, available, "benchmark")
    for name in names:
        print(f"## benchmark: {name}\n", flush=True)
        accel.run_benchmark(name, ["--quick"] if args.quick else [])
    return 0


def _cmd_accel_check(args) -> int:
    from jaxlab.report import accel

    if args.bench:
        _check_names(args.bench, accel.available_benchmarks(), "benchmark")
    ok = accel.accel_check(
        args.out, tests=not args.no_tests, benchmarks=args.bench, test_paths=args.test_path
    )
    print(f"Wrote {Path(args.out) / 'ACCEL.md'}.")
    return 0 if ok else 1


def _cmd_plan(args) -> int:
    from jaxlab.report import plans

    if args.devices < 1:
        raise SystemExit(f"jaxlab: --devices must be >= 1, got {args.devices}")
    if args.all == (args.name is not None):
        raise SystemExit("jaxlab: plan needs an experiment NAME or --all (not both)")
    if args.measure < 0 or (args.measure and args.all):
        raise SystemExit("jaxlab: --measure K (K >= 1) goes with one experiment NAME")
    if not args.all:
        if args.readme:
            raise SystemExit("jaxlab: --readme goes with --all")
        _check_names([args.name], list(registry.discover()), "experiment")
        return (
            plans.main(
                name=args.name, preset=args.preset, devices=args.devices, measure=args.measure
            )
            or 0
        )
    table = plans.markdown(plans.plan_rows(args.preset, args.devices), args.devices)
    print(table)
    if args.readme:
        try:
            plans.write_readme(args.readme, table, args.preset)
        except (OSError, ValueError) as error:
            raise SystemExit(f"jaxlab: {error}") from None
        print(f"Wrote the table into {args.readme}.")
    return 0


def _paper_tfds_datasets() -> list[str]:
    """The TFDS datasets the paper presets read (the catalog's and jaxlab's own builders)."""
    import tensorflow_datasets as tfds

    import jaxlab.data.tfds_builders  # noqa: F401  (registers jaxlab's own builders)

    names = set()
    for experiment in registry.discover().values():
        for name in experiment.get_config("paper").datasets:
            try:
                tfds.builder_cls(name.split("/")[0])
            except Exception:  # not a TFDS name: files or generated data
                continue
            names.add(name)
    return sorted(names)


def _cmd_data(args) -> int:
    from jaxlab.data import fetch

    if args.data_command == "list":
        for name in fetch.available():
            print(name)
        for name in _paper_tfds_datasets():
            print(f"{name}  (TFDS)")
        return 0
    if args.name not in fetch.available():
        from jaxlab.data import streaming

        prepared = streaming.prepare(args.name, data_dir=args.data_dir)
        print(f"{args.name}: prepared as array_record under {prepared}")
        return 0
    path = fetch.fetch(args.name, args.data_dir)
    print(f"{args.name}: verified and in place under {path}")
    return 0


_COMMANDS = {
    "list": _cmd_list,
    "run": _cmd_run,
    "reproduce": _cmd_reproduce,
    "report": _cmd_report,
    "bench": _cmd_bench,
    "accel-check": _cmd_accel_check,
    "plan": _cmd_plan,
    "data": _cmd_data,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``jaxlab`` command with ``argv`` (default: ``sys.argv[1:]``); the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    overrides = [a[len("--config.") :] for a in argv if a.startswith("--config.")]
    rest = [a for a in argv if not a.startswith("--config.")]
    args = _parser().parse_args(rest)
    args.overrides = overrides
    if overrides and args.command != "run":
        raise SystemExit("jaxlab: --config.KEY=VALUE overrides only apply to `jaxlab run`")
    if getattr(args, "data_dir", None) and args.command != "data":
        os.environ["JAXLAB_DATA_DIR"] = args.data_dir
    if getattr(args, "multihost", False) and getattr(args, "jobs", 1) > 1:
        raise SystemExit("jaxlab: --multihost runs one experiment at a time (use --jobs 1)")
    cluster = {k: getattr(args, k, None) for k in ("coordinator", "num_processes", "process_id")}
    if any(v is not None for v in cluster.values()) and not getattr(args, "multihost", False):
        raise SystemExit("jaxlab: --coordinator, --num_processes and --process_id need --multihost")
    try:
        if getattr(args, "multihost", False):
            import jax

            jax.distributed.initialize(
                cluster["coordinator"], cluster["num_processes"], cluster["process_id"]
            )
        return _COMMANDS[args.command](args)
    except BrokenPipeError:  # `jaxlab list | head`: stop quietly (Python's documented idiom)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:
        if args.debug or not _is_user_error(error):
            raise
        print(f"jaxlab: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
