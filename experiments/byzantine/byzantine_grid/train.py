"""byzantine_grid: train every (cell, attack, seed) lane of the grid, one program per optimiser."""

from __future__ import annotations

import functools
import os
import time

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import tqdm
from matplotlib.figure import Figure

from jaxlab.robust.compose import make_aggregator
from jaxlab.train import atomic_write_json, log_history, mesh_from_config, resumable
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.timing import time_min_of_k
from jaxlab.trainers import byzantine

ROBUST_BASES = ("cwmed", "cwtm", "gm", "krum")


def _parse_cells(cells) -> list[tuple[str, str]]:
    return [tuple(cell.split("+")) for cell in cells]


def _model_dim(spec) -> int:
    params = spec.init_params(jax.random.key(0))
    return sum(int(np.size(leaf)) for leaf in jax.tree_util.tree_leaves(params))


def _aggregator_seconds(
    aggregates: dict, num_workers: int, dim: int, seed: int, k: int
) -> dict[str, float]:
    """Fastest of ``k`` interleaved calls (``time_min_of_k``) of each jitted
    ``aggregate(rows [m, dim], key)`` of ``aggregates`` (name → rule), in seconds, all on
    the same rows, drawn from ``seed``."""
    key = jax.random.key(seed)
    rows = jax.random.normal(jax.random.fold_in(key, 0), (num_workers, dim), jnp.float32)
    agg_key = jax.random.fold_in(key, 1)
    fns = {name: jax.jit(rule) for name, rule in aggregates.items()}
    return time_min_of_k(
        {name: functools.partial(fn, rows, agg_key) for name, fn in fns.items()}, k=k
    )


def _plot(acc: dict[str, np.ndarray], cells, attacks, path: str) -> None:
    fig = Figure(figsize=(5 * len(acc), 0.4 * len(cells) + 1.5))
    axes = fig.subplots(1, len(acc))
    for ax, (opt, values) in zip(np.atleast_1d(axes), acc.items(), strict=True):
        mean = values.mean(axis=-1)
        ax.imshow(mean, vmin=0, vmax=100, cmap="viridis")
        ax.set_xticks(range(len(attacks)), attacks)
        ax.set_yticks(range(len(cells)), cells)
        for (i, j), v in np.ndenumerate(mean):
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", color="w", fontsize=7)
        ax.set_title(f"test accuracy (%), {opt}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """The grid on each of ``config.datasets``; the first dataset's results keep plain keys
    (the claims read them), a later dataset's are prefixed ``"<dataset>/"``."""
    os.makedirs(workdir, exist_ok=True)
    mesh = mesh_from_config(config, RUNS_AXIS)
    results: dict[str, float | list[float]] = {}
    curves: dict[str, np.ndarray] = {}
    pieces: dict[str, dict[str, np.ndarray]] = {}
    final_loss: dict[str, list] = {}
    for i, dataset in enumerate(config.datasets):
        prefix = "" if i == 0 else f"{dataset}/"
        out, loss = _grid(
            config, workdir, dataset, "" if i == 0 else f"{dataset}-", mesh, curves, pieces
        )
        results.update({prefix + k: v for k, v in out.items()})
        final_loss.update({prefix + k: v.tolist() for k, v in loss.items()})
    log_history(workdir, curves, step_axis=1, every=10)
    byzantine.checkpoint_pieces(workdir, pieces)
    atomic_write_json(
        os.path.join(workdir, "byzantine_grid.json"),
        {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "config": config.to_dict(),
            "results": results,
            "final_train_loss": final_loss,
        },
    )
    return results


def _grid(
    config: ml_collections.ConfigDict,
    workdir: str,
    dataset: str,
    tag: str,
    mesh,
    curves: dict,
    pieces: dict,
) -> tuple[dict, dict[str, np.ndarray]]:
    """Every (cell, attack, seed) lane on ``dataset``: ``(results, final train losses)``.

    Adds each call's loss curves to ``curves`` and its outputs to ``pieces`` (keys prefixed
    by ``tag``)."""
    train, test = byzantine.load_dataset(dataset, config.data_dir or None)
    cells = _parse_cells(config.cells)
    cell_names = list(config.cells)
    attacks = list(config.attacks)
    num_seeds = config.num_seeds
    seeds = [config.seed * 1000 + s for s in range(num_seeds)]

    # ------------------------------------------------------------------ training
    # One compiled program per optimiser; each cell is one call of it (the aggregator index
    # is shared by the call's lanes, so only that rule runs), lanes = attacks × seeds, split
    # over the mesh's runs axis. A finished call is kept in the workdir (a killed run,
    # started again, redoes only the calls it had not finished).
    lanes = [(a, s) for a in range(len(attacks)) for s in seeds]
    acc: dict[str, np.ndarray] = {}
    loss: dict[str, np.ndarray] = {}
    spec = None
    for opt in tqdm.tqdm(config.optimizers, desc=f"byzantine_grid {dataset} optimisers"):
        spec = byzantine.make_run_spec(
            optimizer=opt,
            cells=cells,
            attack_names=attacks,
            image_shape=train[0].shape[1:],
            **byzantine.spec_kwargs(config, dataset),
        )
        outs = [
            resumable(
                workdir,
                f"{tag}{opt}-{cell_names[c]}",
                config,
                lambda c=c, spec=spec: byzantine.run_batch(
                    spec,
                    seeds=[s for _, s in lanes],
                    aggregator_indices=c,
                    attack_indices=[a for a, _ in lanes],
                    learning_rates=[config.learning_rate] * len(lanes),
                    train=train,
                    test=test,
                    mesh=mesh,
                ),
            )
            for c in range(len(cells))
        ]
        pieces.update({f"{tag}{opt}-{cell}": o for cell, o in zip(cell_names, outs, strict=True)})
        curves.update(
            {
                f"{tag.replace('-', '/')}loss/{opt}/{cell}": o["loss"]
                for cell, o in zip(cell_names, outs, strict=True)
            }
        )
        accuracy = np.stack([o["accuracy"] for o in outs])
        acc[opt] = 100.0 * accuracy.reshape(len(cells), len(attacks), num_seeds)
        final = np.stack([o["loss"][:, -10:].mean(axis=1) for o in outs])
        loss[opt] = final.reshape(len(cells), len(attacks), -1)

    # ------------------------------------------------------------------ timing
    # Per cell at the model's size: one min-of-k sample per run, every cell interleaved on
    # the same rows (for the plots and tables; no claim reads them).
    dim = _model_dim(spec)
    agg_s = _aggregator_seconds(
        {
            name: make_aggregator(b, m, config.num_workers, config.num_byzantine)
            for name, (b, m) in zip(cell_names, cells, strict=True)
        },
        config.num_workers,
        dim,
        config.seed,
        config.timing_k,
    )
    agg_ms = {name: 1e3 * agg_s[name] for name in cell_names}

    # ------------------------------------------------------------------ metrics
    results: dict[str, float | list[float]] = {"model_dim": float(dim)}
    for opt, values in acc.items():
        for ci, cell in enumerate(cell_names):
            for ai, attack in enumerate(attacks):
                results[f"acc/{cell}/{attack}/{opt}"] = values[ci, ai].tolist()
    for cell, ms in agg_ms.items():
        results[f"agg_ms/{cell}"] = ms
    attacked = [i for i, a in enumerate(attacks) if a != "none"]

    def cell_acc(opt: str, cell: str) -> np.ndarray:
        """``[S]`` accuracy of ``cell`` averaged over the attacks (not 'none')."""
        return acc[opt][cell_names.index(cell)][attacked].mean(axis=0)

    paired = [b for b in ROBUST_BASES if f"{b}+plain" in cell_names and f"{b}+ctma" in cell_names]
    per_combo = {}
    for opt in acc:
        for meta in ("plain", "ctma"):
            per_combo[(meta, opt)] = np.mean([cell_acc(opt, f"{b}+{meta}") for b in paired], 0)
            results[f"acc_{meta}_{opt}"] = per_combo[(meta, opt)].tolist()
        robust_cells = [i for i, c in enumerate(cell_names) if not c.startswith("mean+")]
        worst = acc[opt][robust_cells][:, attacked].min(axis=1).mean(axis=0)
        results[f"worst_attack_acc_{opt}"] = worst.tolist()
    for meta in ("plain", "ctma"):
        results[f"acc_{meta}"] = np.mean([per_combo[(meta, o)] for o in acc], 0).tolist()
    if "cwtm+nnm" in cell_names and "cwtm+ctma" in cell_names:
        diff = np.mean([cell_acc(o, "cwtm+ctma") - cell_acc(o, "cwtm+nnm") for o in acc], 0)
        results["acc_ctma_minus_nnm"] = diff.tolist()
    # Cost at a realistic model size d = timing_dim, one min-of-k sample per seed: CWTM
    # alone, with CTMA and with NNM, interleaved on rows drawn from that seed.
    rules = {
        "base" if meta == "plain" else meta: make_aggregator(
            "cwtm", meta, config.num_workers, config.num_byzantine
        )
        for meta in ("plain", "ctma", "nnm")
    }
    per_seed = [
        _aggregator_seconds(rules, config.num_workers, config.timing_dim, s, config.timing_k)
        for s in seeds
    ]
    for name in rules:
        results[f"agg_ms_{name}"] = [1e3 * t[name] for t in per_seed]
    if set(acc) == {"momentum", "mu2sgd"}:
        others = [per_combo[k] for k in per_combo if k != ("ctma", "mu2sgd")]
        results["acc_best_other_combination"] = np.max(others, axis=0).tolist()

    # ------------------------------------------------------------------ artefacts
    _plot(
        acc,
        cell_names,
        attacks,
        os.path.join(workdir, f"byzantine_grid_accuracy{'_' + dataset if tag else ''}.png"),
    )
    return results, loss


def plan_program(config: ml_collections.ConfigDict, mesh) -> byzantine.PlanSpec:
    """For ``jaxlab plan``: one step of a cell's call (attacks × seeds runs), on the last
    (largest) dataset; every dataset's grid counted at it."""
    lanes = len(config.attacks) * config.num_seeds
    return byzantine.plan_spec(
        config,
        mesh,
        _parse_cells(config.cells),
        lanes,
        lanes * len(config.cells) * len(config.optimizers) * len(config.datasets),
    )
