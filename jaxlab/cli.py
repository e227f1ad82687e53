"""The ``jaxlab`` command: list, run, reproduce, bench.

    jaxlab list
    jaxlab run NAME [--preset quick|paper] [--workdir DIR] [--data_dir DIR] [--config.KEY=VALUE ...]
    jaxlab reproduce [--preset quick|paper] [--only NAME ...] [--out DIR] [--data_dir DIR]
    jaxlab bench [NAME] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from jaxlab.report import registry

PRESETS = ("quick", "paper")
BENCHMARK_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered experiments")

    run = sub.add_parser("run", help="run one experiment (all its seeds), resuming its workdir")
    run.add_argument("name")
    run.add_argument("--preset", choices=PRESETS, default="quick")
    run.add_argument("--workdir", help="default: workdirs/<name>/<preset>")
    run.add_argument("--data_dir", help="offline data directory (else $JAXLAB_DATA_DIR)")

    rep = sub.add_parser("reproduce", help="run experiments and write the report")
    rep.add_argument("--preset", choices=PRESETS, default="quick")
    rep.add_argument("--only", nargs="+", metavar="NAME", default=None)
    rep.add_argument("--out", help="default: reports/<preset>")
    rep.add_argument("--data_dir", help="offline data directory (else $JAXLAB_DATA_DIR)")

    bench = sub.add_parser("bench", help="run benchmarks/NAME.py (all when NAME is omitted)")
    bench.add_argument("name", nargs="?")
    bench.add_argument("--quick", action="store_true", help="a short run of each benchmark")
    return parser


def _check_names(names: Sequence[str], valid: Sequence[str], what: str) -> None:
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise SystemExit(
            f"jaxlab: unknown {what} {', '.join(map(repr, unknown))}; "
            f"valid: {', '.join(valid) or '(none registered)'}"
        )


def _cmd_list() -> int:
    experiments = registry.discover()
    if not experiments:
        print("No experiment is registered yet.")
    for name, experiment in experiments.items():
        print(f"{name:28s} {experiment.paper}")
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
    if args.only:
        _check_names(args.only, list(experiments), "experiment")
    chosen = [experiments[n] for n in (args.only or experiments)]
    out = Path(args.out or os.path.join("reports", args.preset))
    if not chosen:
        print("No experiment is registered yet; writing an empty report.")
    start = time.perf_counter()
    records = runner.run_all(chosen, out, args.preset)
    rows = markdown.write_report(records, out, args.preset, time.perf_counter() - start)
    failed = [r["experiment"].name for r in records if r["error"]]
    print(f"Wrote {out / 'REPORT.md'} and {out / 'results.json'} ({len(rows)} claims).")
    for record in records:
        if record["error"]:
            print(f"FAILED {record['experiment'].name}:\n{record['traceback']}", file=sys.stderr)
    return 1 if failed else 0


def _cmd_bench(args) -> int:
    available = sorted(p.stem for p in BENCHMARK_DIR.glob("*.py") if not p.stem.startswith("_"))
    names = [args.name] if args.name else available
    _check_names(names, available, "benchmark")
    for name in names:
        print(f"## benchmark: {name}\n", flush=True)
        saved = sys.argv
        sys.argv = [str(BENCHMARK_DIR / f"{name}.py")] + (["--quick"] if args.quick else [])
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        finally:
            sys.argv = saved
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    overrides = [a[len("--config."):] for a in argv if a.startswith("--config.")]
    rest = [a for a in argv if not a.startswith("--config.")]
    args = _parser().parse_args(rest)
    if overrides and args.command != "run":
        raise SystemExit("jaxlab: --config.KEY=VALUE overrides only apply to `jaxlab run`")
    if getattr(args, "data_dir", None):
        os.environ["JAXLAB_DATA_DIR"] = args.data_dir
    if args.command == "list":
        return _cmd_list()
    if args.command == "run":
        return _cmd_run(args, overrides)
    if args.command == "reproduce":
        return _cmd_reproduce(args)
    return _cmd_bench(args)


if __name__ == "__main__":
    sys.exit(main())
