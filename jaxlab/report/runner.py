"""Runs registered experiments over their seeds, resumably, and collects their results.

Each call of ``train_and_evaluate`` (one seed, or all seeds batched) runs in its own folder
of the experiment's workdir, which the runner creates when that call starts, and which holds
``call.json`` (the experiment, its config and the code hash of ``jaxlab.report.codehash``)
from then on, and ``result.json`` once it has finished. A finished call is reused only when
its config and code hash both match (``fresh=False``); a folder of the same experiment with
another config or code, or any with ``fresh=True``, is emptied and run again; a workdir
holding a run of another experiment is refused. The workdir is locked while in use
(``jaxlab.report.workdir``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import ml_collections
import numpy as np

from jaxlab.data import prerequisites
from jaxlab.report import codehash, configs, registry
from jaxlab.report import workdir as workdir_lib
from jaxlab.report.registry import Experiment

CALL, RESULT = "call.json", "result.json"
#: Environment variable naming the root of ``reports/<preset>`` (default ``reports``).
REPORTS_ENV = "JAXLAB_REPORTS_DIR"
# A stalled worker process is asked for its threads' stacks with this signal.
STACKS_SIGNAL = signal.SIGUSR1


class ForeignRunError(workdir_lib.WorkdirError):
    """The workdir holds a run of another experiment."""


def jsonable(value: Any) -> Any:
    """``value`` with arrays and numpy scalars turned into lists and Python numbers."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return jsonable(np.asarray(value).tolist())
    return value


def seed_configs(config: ml_collections.ConfigDict) -> list[ml_collections.ConfigDict]:
    """One config per seed: ``seed = config.seed + i`` for ``i < config.num_seeds``.

    Raises:
      ValueError: ``num_seeds < 1``.
    """
    if config.num_seeds < 1:
        raise ValueError(f"num_seeds must be >= 1, got {config.num_seeds}")
    out = []
    for i in range(config.num_seeds):
        seeded = ml_collections.ConfigDict(config.to_dict())
        seeded.seed = config.seed + i
        out.append(seeded)
    return out


def calls(config: ml_collections.ConfigDict) -> list[tuple[str, ml_collections.ConfigDict]]:
    """The runner's calls of ``train_and_evaluate``: (folder name, config) each.

    ``batch_seeds=False``: one per seed, in ``seed_<seed>``; ``True``: one for all, in
    ``seeds_<first>-<last>``.

    Raises:
      ValueError: ``num_seeds < 1``.
    """
    seeded = seed_configs(config)
    if config.batch_seeds:
        return [(f"seeds_{config.seed}-{seeded[-1].seed}", config)]
    return [(f"seed_{c.seed}", c) for c in seeded]


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


def _prepare(run_dir: Path, name: str, stamp: dict[str, Any], fresh: bool) -> Any:
    """The saved result of ``run_dir`` when it can be reused, else ``None`` (after emptying
    ``run_dir`` when it holds a superseded run of this experiment)."""
    saved, started = _load(run_dir / RESULT), _load(run_dir / CALL)
    owner = (started or saved or {}).get("experiment")
    if fresh or (started is not None and started != stamp):
        if owner == name:
            reason = "--fresh" if fresh else "its config or code changed"
            print(f"jaxlab: {name}: running {run_dir.name} again ({reason})", file=sys.stderr)
            shutil.rmtree(run_dir)
        return None
    if saved is not None and {k: saved.get(k) for k in stamp} == stamp:
        return saved["result"]
    return None


def _check_owner(workdir: Path, name: str) -> None:
    """Refuses a workdir that holds a run of another experiment."""
    for path in sorted(workdir.glob(f"*/{CALL}")) + sorted(workdir.glob(f"*/{RESULT}")):
        owner = (_load(path) or {}).get("experiment")
        if owner is not None and owner != name:
            raise ForeignRunError(
                f"{workdir} holds a run of experiment {owner!r} ({path.parent.name}), "
                f"not of {name!r}; choose another --workdir"
            )


def _run_call(
    experiment: Experiment, config: ml_collections.ConfigDict, run_dir: Path, stamp: dict[str, Any]
) -> Any:
    new = not run_dir.exists()
    run_dir.mkdir(exist_ok=True)
    try:
        (run_dir / CALL).write_text(json.dumps(stamp, indent=1))
        result = jsonable(experiment.train_and_evaluate(config, str(run_dir)))
    except BaseException:
        if new and {p.name for p in run_dir.iterdir()} <= {CALL}:
            shutil.rmtree(run_dir)  # nothing of the run was written: leave no trace
        raise
    from jaxlab.train.metrics import log_result

    log_result(run_dir, result, hparams=stamp["config"])
    (run_dir / RESULT).write_text(json.dumps({**stamp, "result": result}, indent=1))
    return result


def run_experiment(
    experiment: Experiment,
    workdir: str | os.PathLike,
    preset: str = "quick",
    overrides: Iterable[str] = (),
    fresh: bool = False,
    lock: bool = True,
    dry_run: bool = False,
) -> tuple[list[dict[str, Any]], float]:
    """Runs every seed of ``experiment``; returns (per-call results, wall seconds).

    See the module docstring for the folders, the reuse of saved results and the lock.
    ``fresh=True`` ignores saved results and checkpoints. ``lock=False`` only for the
    secondary processes of a multi-host run, which share the primary's workdir.
    ``dry_run=True`` (``preset`` must be ``"paper"``) runs the experiment's dry-run config
    (``Experiment.dry_run_config``) on mock data of its datasets
    (``jaxlab.data.streaming.mock_datasets``), always fresh; each result gains
    ``"datasets"``, the datasets it read.

    Raises:
      KeyError, ValueError: a bad override (see ``configs.apply_overrides``).
      jaxlab.report.workdir.WorkdirError: the workdir cannot be created or written, is in
        use (``WorkdirLocked``), or holds another experiment's run (``ForeignRunError``).
    """
    if dry_run:
        import jax

        config = configs.apply_overrides(experiment.dry_run_config(jax.device_count()), overrides)
        fresh = True
    else:
        config = configs.apply_overrides(experiment.get_config(preset), overrides)
    planned = calls(config)
    code = codehash.code_hash(experiment.module, config)
    results, start = [], time.perf_counter()
    with workdir_lib.claimed(workdir, lock=lock):
        _check_owner(Path(workdir), experiment.name)
        for folder, call_config in planned:
            run_dir = Path(workdir) / folder
            stamp = {
                "experiment": experiment.name,
                "config": json.loads(call_config.to_json_best_effort()),
                "code": code,
            }
            result = _prepare(run_dir, experiment.name, stamp, fresh)
            if result is None and dry_run:
                result = _dry_run_call(experiment, call_config, run_dir, stamp)
            elif result is None:
                result = _run_call(experiment, call_config, run_dir, stamp)
            results.append(result)
    return results, time.perf_counter() - start


def _dry_run_call(
    experiment: Experiment, config: ml_collections.ConfigDict, run_dir: Path, stamp: dict[str, Any]
) -> dict[str, Any]:
    """One call of a dry run: on mock data, recording the datasets it read."""
    import jax

    from jaxlab.data import streaming

    streaming.datasets_read(clear=True)
    rows = configs.DRY_RUN_ROWS_PER_DEVICE * jax.device_count()
    with streaming.mock_datasets(num_examples=2 * rows):
        result = _run_call(experiment, config, run_dir, stamp)
    return {"metrics": result, "datasets": streaming.datasets_read(clear=True)}


def default_out(preset: str) -> Path:
    """``jaxlab reproduce``'s default ``--out``: ``$JAXLAB_REPORTS_DIR/<preset>``, where the
    variable defaults to ``reports`` (relative to the working directory)."""
    return Path(os.environ.get(REPORTS_ENV) or "reports") / preset


def load_or_run(
    name: str,
    preset: str = "quick",
    out: str | os.PathLike | None = None,
    wait_s: float = 3600.0,
    package: str = registry.EXPERIMENTS_PACKAGE,
) -> list[dict[str, Any]]:
    """Experiment ``name``'s per-call results at ``preset``: saved, or computed now.

    Uses the workdir ``jaxlab reproduce --out OUT`` writes (``OUT/workdirs/<name>``, with
    ``OUT`` defaulting to :func:`default_out`), so after ``make reproduce`` a notebook
    reads the results instantly: a saved call is reused only when its config and code hash
    match (see :func:`run_experiment`); otherwise it runs and is saved there. When another
    process holds the workdir, waits for it (polling, up to ``wait_s`` seconds) and then
    reuses what it saved.

    Returns:
      One result dict per call of ``train_and_evaluate`` (one per seed, or one holding all
      seeds when the config sets ``batch_seeds``).
    """
    experiment = registry.get_experiment(name, package)
    workdir = Path(out if out is not None else default_out(preset)) / "workdirs" / name
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return run_experiment(experiment, workdir, preset)[0]
        except workdir_lib.WorkdirLocked:
            if time.monotonic() > deadline:
                raise
            time.sleep(2.0)


def check_prerequisites(
    experiments: Sequence[Experiment],
    preset: str = "quick",
    overrides: Sequence[str] = (),
    config: ml_collections.ConfigDict | None = None,
) -> list[str]:
    """One line per missing piece of data that the ``preset`` runs of ``experiments`` read
    (empty when all is there): the quick data of ``Experiment.requires``, or a paper
    preset's ``datasets`` in its ``data_dir`` (``jaxlab.data.prerequisites``). ``config``,
    when given, is the one config of a single experiment's run."""
    problems = []
    for experiment in experiments:
        if config is None:
            run_config = configs.apply_overrides(experiment.get_config(preset), overrides)
        else:
            run_config = config
        for remedy in prerequisites.missing_for_config(experiment.requires, run_config):
            problems.append(f"{experiment.name}: {remedy}")
    return problems


def _run_record(
    experiment: Experiment, out: str | os.PathLike, preset: str, fresh: bool = False
) -> dict[str, Any]:
    record: dict[str, Any] = {"experiment": experiment, "results": [], "error": None}
    try:
        record["budget"] = float(experiment.get_config(preset).cpu_budget_s)
        record["results"], record["seconds"] = run_experiment(
            experiment, Path(out) / "workdirs" / experiment.name, preset, fresh=fresh
        )
        record["provenance"] = codehash.code_parts(experiment.module, experiment.get_config(preset))
    except Exception as error:  # one failing experiment must not stop the report
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc()
        record["seconds"] = float("nan")
    return record


def _run_by_name(
    name: str, out: str, preset: str, package: str, fresh: bool, record_path: str
) -> None:
    """A worker process's job: the record of one experiment, found again by name (an
    ``Experiment`` holds functions of its package, which a fresh process imports itself),
    pickled to ``record_path`` (a file, not a pipe: a killed worker leaves nothing torn)."""
    import faulthandler
    import pickle

    stacks = _stacks_path(out, name)
    stacks.parent.mkdir(parents=True, exist_ok=True)
    with open(stacks, "a") as stack_file:  # filled only when the parent asks (a stall)
        faulthandler.register(STACKS_SIGNAL, file=stack_file, all_threads=True)
        record = _run_record(registry.get_experiment(name, package), out, preset, fresh)
        faulthandler.unregister(STACKS_SIGNAL)
    if stacks.stat().st_size == 0:
        stacks.unlink()
    record["experiment"] = name
    Path(record_path + ".part").write_bytes(pickle.dumps(record))
    os.replace(record_path + ".part", record_path)


def _stacks_path(out: str | os.PathLike, name: str) -> Path:
    """Where a stalled worker of ``name`` writes its threads' stacks."""
    return Path(out) / "stalls" / f"{name}.txt"


def _dump_stacks(pid: int, path: Path, name: str, attempt: int) -> None:
    """Appends the stalled worker's stacks to ``path``: every Python thread's (the worker's
    ``faulthandler``, on ``STACKS_SIGNAL``) and, where ``gdb`` is installed, every native
    thread's (XLA's, the checkpointer's), so a hang can be traced to its cause."""
    import shutil
    import subprocess

    with open(path, "a") as file:
        file.write(f"\n=== {name}, attempt {attempt}: Python threads (faulthandler) ===\n")
    try:
        os.kill(pid, STACKS_SIGNAL)
    except ProcessLookupError:
        return
    time.sleep(1.0)  # faulthandler writes from a signal handler, at once
    gdb = shutil.which("gdb")
    if gdb is None:
        return
    try:
        native = subprocess.run(
            [gdb, "-batch", "-p", str(pid), "-ex", "thread apply all bt 30"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        native = f"gdb failed: {error}\n"
    with open(path, "a") as file:
        file.write(f"\n=== {name}, attempt {attempt}: native threads (gdb) ===\n{native}")


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) of process ``pid`` and its threads, from ``/proc`` (Linux);
    ``None`` where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Worker:
    """One experiment in its own process, watched for a stall (see :func:`run_all`)."""

    def __init__(self, context: Any, name: str, args: tuple, record_path: Path, stacks: Path):
        self.name, self.record_path, self.stacks, self.attempt = name, record_path, stacks, 1
        self._context, self._args = context, args
        self._start()

    def _start(self) -> None:
        self.process = self._context.Process(
            target=_run_by_name, args=(*self._args, str(self.record_path)), daemon=True
        )
        self.process.start()
        self.cpu, self.active_at = 0.0, time.monotonic()

    def stalled(self, stall_s: float) -> bool:
        """Whether the process has used no CPU for ``stall_s`` seconds."""
        cpu = _cpu_seconds(self.process.pid)
        if cpu is None or cpu > self.cpu:
            self.cpu, self.active_at = cpu or 0.0, time.monotonic()
        return time.monotonic() - self.active_at > stall_s

    def dump_stacks(self) -> None:
        """Writes the stalled process's thread stacks to ``self.stacks``."""
        _dump_stacks(self.process.pid, self.stacks, self.name, self.attempt)

    def restart(self) -> None:
        self.process.kill()
        self.process.join()
        self.attempt += 1
        self._start()


def run_all(
    experiments: Sequence[Experiment],
    out: str | os.PathLike,
    preset: str = "quick",
    progress: bool = True,
    jobs: int = 1,
    package: str = registry.EXPERIMENTS_PACKAGE,
    fresh: bool = False,
    stall_s: float = 300.0,
    poll_s: float = 2.0,
) -> list[dict[str, Any]]:
    """Runs each experiment, catching failures; returns one record per experiment.

    ``fresh=True`` ignores saved results (see ``run_experiment``).
    With ``jobs > 1`` the experiments run in that many fresh worker processes (``spawn``),
    longest declared budget first, each finding its experiment by name in ``package``;
    records come back in the order of ``experiments``. Each experiment's wall time is then
    measured while sharing the machine.

    A worker that uses no CPU for ``stall_s`` seconds is taken as hung, killed and started
    once more (it resumes from its finished seeds and checkpoints); a second stall is
    recorded as that experiment's error. Before each kill its threads' stacks, Python's and
    (with ``gdb`` installed) native, are appended to ``<out>/stalls/<experiment>.txt``.
    (XLA:CPU's Eigen thread pool can wedge, rarely, on large vmapped programs; when the
    workers fill every core, they run with ``--xla_cpu_multi_thread_eigen=false``, which
    also avoids oversubscribing the cores.)
    """
    import multiprocessing
    import tempfile

    import tqdm.auto as tqdm

    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1 or len(experiments) < 2:
        records = []
        bar = tqdm.tqdm(experiments, desc=f"reproduce [{preset}]", disable=not progress)
        for experiment in bar:
            bar.set_postfix_str(experiment.name)
            records.append(_run_record(experiment, out, preset, fresh))
        return records

    by_name = {e.name: e for e in experiments}
    queue = sorted(experiments, key=lambda e: -float(e.get_config(preset).cpu_budget_s))
    done: dict[str, dict[str, Any]] = {}
    context = multiprocessing.get_context("spawn")
    bar = tqdm.tqdm(total=len(queue), desc=f"reproduce [{preset}] x{jobs}", disable=not progress)
    flags = os.environ.get("XLA_FLAGS", "")
    if jobs >= (os.cpu_count() or 1) and "multi_thread_eigen" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_multi_thread_eigen=false".strip()
    try:
        with tempfile.TemporaryDirectory(prefix="jaxlab-records-") as records_dir:
            running: list[_Worker] = []
            while queue or running:
                while queue and len(running) < jobs:
                    name = queue.pop(0).name
                    running.append(
                        _Worker(
                            context,
                            name,
                            (name, str(out), preset, package, fresh),
                            Path(records_dir) / f"{name}.pkl",
                            _stacks_path(out, name),
                        )
                    )
                time.sleep(poll_s)
                for worker in list(running):
                    record = _finished_record(worker, stall_s)
                    if record is None:
                        continue
                    running.remove(worker)
                    record["experiment"] = by_name[worker.name]
                    done[worker.name] = record
                    bar.set_postfix_str(worker.name)
                    bar.update()
    finally:
        os.environ["XLA_FLAGS"] = flags
        if not flags:
            del os.environ["XLA_FLAGS"]
        bar.close()
    return [done[e.name] for e in experiments]


def _finished_record(worker: _Worker, stall_s: float) -> dict[str, Any] | None:
    """The worker's record once it is done (or has failed), else ``None``; restarts a
    stalled worker once."""
    import pickle

    if worker.process.is_alive():
        if not worker.stalled(stall_s):
            return None
        worker.dump_stacks()
        if worker.attempt == 1:
            print(
                f"jaxlab: {worker.name}: no CPU use for {stall_s:.0f} s; its threads' stacks "
                f"are in {worker.stacks}; killed and started again (it resumes from what it "
                "saved)",
                file=sys.stderr,
            )
            worker.restart()
            return None
        worker.process.kill()
        worker.process.join()
        error = (
            f"HangError: no CPU use for {stall_s:.0f} s, twice; killed (threads' stacks in "
            f"{worker.stacks})"
        )
        return {"results": [], "error": error, "traceback": error + "\n", "seconds": float("nan")}
    worker.process.join()
    try:
        record = pickle.loads(worker.record_path.read_bytes())
    except FileNotFoundError:  # the worker itself died (e.g. out of memory)
        error = f"WorkerError: the process exited with code {worker.process.exitcode}"
        return {"results": [], "error": error, "traceback": error + "\n", "seconds": float("nan")}
    if worker.attempt > 1:
        record["retried"] = f"restarted once after a stall (threads' stacks in {worker.stacks})"
    return record
