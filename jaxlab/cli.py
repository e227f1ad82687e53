"""The ``jaxlab`` command: list, run, reproduce, report, bench, accel-check.

    jaxlab list                                  papers and their experiments
    jaxlab run NAME [--preset smoke|quick|paper] [--workdir DIR] [--data_dir DIR]
                    [--multihost] [--config.KEY=VALUE ...]
    jaxlab reproduce [--preset smoke|quick|paper] [--paper ID ...] [--only NAME ...]
                     [--out DIR] [--jobs N] [--data_dir DIR] [--multihost]
    jaxlab report [--from reports/quick] [--preset quick] [--check]
    jaxlab bench [NAME] [--quick]
    jaxlab accel-check [--out reports/accel] [--no-tests]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from jaxlab.report import registry
from jaxlab.report.configs import PRESETS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the papers and their experiments")

    run = sub.add_parser("run", help="run one experiment (all its seeds), resuming its workdir")
    run.add_argument("name")
    run.add_argument("--preset", choices=PRESETS, default="quick")
    run.add_argument("--workdir", help="default: workdirs/<name>/<preset>")
    run.add_argument("--data_dir", help="offline data directory (else $JAXLAB_DATA_DIR)")
    run.add_argument("--multihost", action="store_true",
                     help="call jax.distributed.initialize() first (TPU pods, SLURM, ...)")

    rep = sub.add_parser("reproduce", help="run experiments and write the report")
    rep.add_argument("--preset", choices=PRESETS, default="quick")
    rep.add_argument("--paper", nargs="+", metavar="ID", default=None,
                     help="only the experiments of these papers")
    rep.add_argument("--only", nargs="+", metavar="NAME", default=None,
                     help="only these experiments")
    rep.add_argument("--out", help="default: reports/<preset>")
    rep.add_argument("--jobs", type=int, default=1,
                     help="experiments run at once, each in its own process (default 1)")
    rep.add_argument("--data_dir", help="offline data directory (else $JAXLAB_DATA_DIR)")
    rep.add_argument("--multihost", action="store_true",
                     help="call jax.distributed.initialize() first (TPU pods, SLURM, ...)")

    report = sub.add_parser("report", help="regenerate the README's results from the "
                            "committed per-experiment results (docs/results/<preset>/)")
    report.add_argument("--from", dest="source", metavar="DIR",
                        help="first copy DIR/results/*.json (a reproduce run) into them")
    report.add_argument("--preset", choices=PRESETS, default="quick")
    report.add_argument("--readme", default="README.md")
    report.add_argument("--check", action="store_true",
                        help="exit 1 if the README or the committed results are stale")

    bench = sub.add_parser("bench", help="run benchmarks/NAME.py (all when NAME is omitted)")
    bench.add_argument("name", nargs="?")
    bench.add_argument("--quick", action="store_true", help="a short run of each benchmark")

    accel = sub.add_parser("accel-check", help="kernel tests + every benchmark --quick on "
                           "this backend; a table in reports/accel/")
    accel.add_argument("--out", default=os.path.join("reports", "accel"))
    accel.add_argument("--no-tests", action="store_true", help="benchmarks only")
    accel.add_argument("--bench", nargs="*", metavar="NAME", default=None,
                       help="only these benchmarks")
    return parser


def _check_names(names: Sequence[str], valid: Sequence[str], what: str) -> None:
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise SystemExit(
            f"jaxlab: unknown {what} {', '.join(map(repr, unknown))}; "
            f"valid: {', '.join(valid) or '(none registered)'}"
        )


def _cmd_list() -> int:
    papers = registry.discover_papers()
    if not papers:
        print("No experiment is registered yet.")
    for paper_id, (paper, experiments) in papers.items():
        print(f"{paper_id}: {paper.citation}")
        for name, experiment in experiments.items():
            budget = experiment.get_config("quick").cpu_budget_s
            print(f"    {name:30s} {len(experiment.claims):2d} claims, quick ≈ {budget:.0f} s")
    return 0


def _cmd_run(args, overrides: list[str]) -> int:
    from jaxlab.report import runner

    experiments = registry.discover()
    _check_names([args.name], list(experiments), "experiment")
    workdir = args.workdir or os.path.join("workdirs", args.name, args.preset)
    try:
        results, seconds = runner.run_experiment(
            experiments[args.name], workdir, args.preset, overrides
        )
    except (KeyError, ValueError) as error:
        raise SystemExit(f"jaxlab: {error.args[0] if error.args else error}") from error
    print(json.dumps({"experiment": args.name, "seconds": round(seconds, 1),
                      "results": results}, indent=1))
    return 0


def _cmd_reproduce(args) -> int:
    from jaxlab.report import markdown, runner

    experiments = registry.discover()
    chosen = list(experiments.values())
    if args.paper:
        papers = registry.discover_papers()
        _check_names(args.paper, list(papers), "paper")
        chosen = [e for e in chosen if e.paper.id in args.paper]
    if args.only:
        _check_names(args.only, list(experiments), "experiment")
        chosen = [e for e in chosen if e.name in args.only]
    out = Path(args.out or os.path.join("reports", args.preset))
    if not chosen:
        print("No experiment is registered yet; writing an empty report.")
    problems = runner.check_prerequisites(chosen)
    if problems:
        print("jaxlab: data missing before the first experiment starts:\n  "
              + "\n  ".join(problems), file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.jobs < 1:
        raise SystemExit(f"jaxlab: --jobs must be >= 1, got {args.jobs}")
    records = runner.run_all(chosen, out, args.preset, jobs=args.jobs)
    rows = markdown.write_report(records, out, args.preset, time.perf_counter() - start)
    failed = [r["experiment"].name for r in records if r["error"]]
    print(f"Wrote {out / 'REPORT.md'}, one page per paper and {out / 'results.json'} "
          f"({len(rows)} claims). `jaxlab report --from {out}` updates the README.")
    for record in records:
        if record["error"]:
            print(f"FAILED {record['experiment'].name}:\n{record['traceback']}", file=sys.stderr)
    return 1 if failed else 0


def _cmd_report(args) -> int:
    from jaxlab.report import readme

    results_dir = Path("docs") / "results" / args.preset
    if args.source:
        copied = readme.copy_results(args.source, results_dir)
        print(f"Copied results of {', '.join(copied)} into {results_dir}.")
    results = readme.load_results(results_dir)
    text = Path(args.readme).read_text()
    updated = readme.replace_block(text, readme.results_block(results, args.preset), args.preset)
    stale = readme.stale_claims(results)
    if args.check:
        if updated != text:
            print(f"jaxlab: {args.readme} is not the table of {results_dir}; run `jaxlab "
                  "report`", file=sys.stderr)
        for line in stale:
            print(f"jaxlab: stale results: {line}", file=sys.stderr)
        return 1 if updated != text or stale else 0
    Path(args.readme).write_text(updated)
    print(f"Rewrote the results block of {args.readme} from {len(results)} experiments.")
    for line in stale:
        print(f"warning: stale results: {line}", file=sys.stderr)
    return 0


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
    ok = accel.accel_check(args.out, tests=not args.no_tests, benchmarks=args.bench)
    print(f"Wrote {Path(args.out) / 'ACCEL.md'}.")
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    overrides = [a[len("--config."):] for a in argv if a.startswith("--config.")]
    rest = [a for a in argv if not a.startswith("--config.")]
    args = _parser().parse_args(rest)
    if overrides and args.command != "run":
        raise SystemExit("jaxlab: --config.KEY=VALUE overrides only apply to `jaxlab run`")
    if getattr(args, "data_dir", None):
        os.environ["JAXLAB_DATA_DIR"] = args.data_dir
    if getattr(args, "multihost", False) and getattr(args, "jobs", 1) > 1:
        raise SystemExit("jaxlab: --multihost runs one experiment at a time (use --jobs 1)")
    if getattr(args, "multihost", False):
        import jax

        jax.distributed.initialize()
    if args.command == "list":
        return _cmd_list()
    if args.command == "run":
        return _cmd_run(args, overrides)
    if args.command == "reproduce":
        return _cmd_reproduce(args)
    if args.command == "report":
        return _cmd_report(args)
    if args.command == "accel-check":
        return _cmd_accel_check(args)
    return _cmd_bench(args)


if __name__ == "__main__":
    sys.exit(main())
