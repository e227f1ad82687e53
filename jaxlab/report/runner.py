"""Runs registered experiments over their seeds, resumably, and collects their results."""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import ml_collections
import numpy as np

from jaxlab.data import prerequisites
from jaxlab.report import configs, registry
from jaxlab.report.registry import Experiment


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return _jsonable(np.asarray(value).tolist())
    return value


def seed_configs(config: ml_collections.ConfigDict) -> list[ml_collections.ConfigDict]:
    """One config per seed: ``seed = config.seed + i`` for ``i < config.num_seeds``."""
    if config.num_seeds < 1:
        raise ValueError(f"num_seeds must be >= 1, got {config.num_seeds}")
    out = []
    for i in range(config.num_seeds):
        seeded = ml_collections.ConfigDict(config.to_dict())
        seeded.seed = config.seed + i
        out.append(seeded)
    return out


def run_experiment(
    experiment: Experiment,
    workdir: str | os.PathLike,
    preset: str = "quick",
    overrides: Iterable[str] = (),
) -> tuple[list[dict[str, Any]], float]:
    """Runs every seed of ``experiment``; returns (per-call results, wall seconds).

    With ``batch_seeds=False`` each seed runs in ``<workdir>/seed_<seed>``; with
    ``batch_seeds=True`` one call runs them all in ``<workdir>/seeds_<first>-<last>``. A
    finished call leaves ``result.json`` there and is not run again for the same config (a
    killed ``reproduce`` resumes).
    """
    config = configs.apply_overrides(experiment.get_config(preset), overrides)
    if config.num_seeds < 1:
        raise ValueError(f"num_seeds must be >= 1, got {config.num_seeds}")
    if config.batch_seeds:
        last = config.seed + config.num_seeds - 1
        calls = [(f"seeds_{config.seed}-{last}", config)]
    else:
        calls = [(f"seed_{c.seed}", c) for c in seed_configs(config)]
    results, start = [], time.perf_counter()
    for folder, call_config in calls:
        run_dir = Path(workdir) / folder
        run_dir.mkdir(parents=True, exist_ok=True)
        cache = run_dir / "result.json"
        config_json = json.loads(call_config.to_json_best_effort())
        if cache.exists():
            saved = json.loads(cache.read_text())
            if saved.get("config") == config_json:
                results.append(saved["result"])
                continue
        result = _jsonable(experiment.train_and_evaluate(call_config, str(run_dir)))
        cache.write_text(json.dumps({"config": config_json, "result": result}, indent=1))
        results.append(result)
    return results, time.perf_counter() - start


def check_prerequisites(experiments: Sequence[Experiment]) -> list[str]:
    """One line per experiment whose offline data is missing (empty when all is there)."""
    problems = []
    for experiment in experiments:
        for remedy in prerequisites.missing(experiment.requires):
            problems.append(f"{experiment.name}: {remedy}")
    return problems


def _run_record(experiment: Experiment, out: str | os.PathLike, preset: str) -> dict[str, Any]:
    record: dict[str, Any] = {"experiment": experiment, "results": [], "error": None}
    try:
        record["budget"] = float(experiment.get_config(preset).cpu_budget_s)
        record["results"], record["seconds"] = run_experiment(
            experiment, Path(out) / "workdirs" / experiment.name, preset
        )
    except Exception as error:  # one failing experiment must not stop the report
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc()
        record["seconds"] = float("nan")
    return record


def _run_by_name(name: str, out: str, preset: str, package: str) -> dict[str, Any]:
    """A worker process's job: the record of one experiment, found again by name (an
    ``Experiment`` holds functions of its package, which a fresh process imports itself)."""
    record = _run_record(registry.get_experiment(name, package), out, preset)
    record["experiment"] = name
    return record


def run_all(
    experiments: Sequence[Experiment],
    out: str | os.PathLike,
    preset: str = "quick",
    progress: bool = True,
    jobs: int = 1,
    package: str = registry.EXPERIMENTS_PACKAGE,
) -> list[dict[str, Any]]:
    """Runs each experiment, catching failures; returns one record per experiment.

    With ``jobs > 1`` the experiments run in that many fresh worker processes (``spawn``),
    longest declared budget first, each finding its experiment by name in ``package``;
    records come back in the order of ``experiments``.
    Each experiment's wall time is then measured while sharing the machine.
    """
    import tqdm.auto as tqdm

    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1 or len(experiments) < 2:
        records = []
        bar = tqdm.tqdm(experiments, desc=f"reproduce [{preset}]", disable=not progress)
        for experiment in bar:
            bar.set_postfix_str(experiment.name)
            records.append(_run_record(experiment, out, preset))
        return records

    import concurrent.futures
    import multiprocessing

    by_name = {e.name: e for e in experiments}
    order = sorted(experiments, key=lambda e: -float(e.get_config(preset).cpu_budget_s))
    done: dict[str, dict[str, Any]] = {}
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        futures = {pool.submit(_run_by_name, e.name, str(out), preset, package): e.name
                   for e in order}
        bar = tqdm.tqdm(total=len(futures), desc=f"reproduce [{preset}] x{jobs}",
                        disable=not progress)
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            try:
                record = future.result()
            except Exception as error:  # the worker itself died (e.g. out of memory)
                record = {"results": [], "error": f"{type(error).__name__}: {error}",
                          "traceback": traceback.format_exc(), "seconds": float("nan")}
            record["experiment"] = by_name[name]
            done[name] = record
            bar.set_postfix_str(name)
            bar.update()
        bar.close()
    return [done[e.name] for e in experiments]
