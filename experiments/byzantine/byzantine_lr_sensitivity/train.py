"""byzantine_lr_sensitivity: every (learning rate, attack, seed) lane, one program per optimiser."""

from __future__ import annotations

import os

import ml_collections
import tqdm
from matplotlib.figure import Figure

from jaxlab.train import atomic_write_json, log_history, mesh_from_config, resumable
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.trainers import byzantine


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Every lane on each of ``config.datasets``; the first dataset's results keep plain keys
    (the claims read them), a later dataset's are prefixed ``"<dataset>/"``."""
    os.makedirs(workdir, exist_ok=True)
    lrs = list(config.learning_rates)
    attacks = list(config.attacks)
    seeds = [config.seed * 1000 + s for s in range(config.num_seeds)]
    lanes = [(lr, a, s) for lr in lrs for a in range(len(attacks)) for s in seeds]
    base, meta = config.cell.split("+")
    mesh = mesh_from_config(config, RUNS_AXIS)  # the lanes split over the runs axis

    acc, curves, pieces = {}, {}, {}
    for i, dataset in enumerate(config.datasets):
        tag = "" if i == 0 else f"{dataset}/"
        train, test = byzantine.load_dataset(dataset, config.data_dir or None)
        for opt in tqdm.tqdm(config.optimizers, desc=f"byzantine_lr_sensitivity {dataset}"):
            spec = byzantine.make_run_spec(
                optimizer=opt,
                cells=[(base, meta)],
                attack_names=attacks,
                image_shape=train[0].shape[1:],
                **byzantine.spec_kwargs(config, dataset),
            )
            name = f"{tag.replace('/', '-')}{opt}"
            out = resumable(
                workdir,
                name,
                config,
                lambda spec=spec, train=train, test=test: byzantine.run_batch(
                    spec,
                    seeds=[s for _, _, s in lanes],
                    aggregator_indices=0,
                    attack_indices=[a for _, a, _ in lanes],
                    learning_rates=[lr for lr, _, _ in lanes],
                    train=train,
                    test=test,
                    mesh=mesh,
                ),
            )
            pieces[name] = out
            curves[f"{tag}loss/{opt}"] = out["loss"]  # [lanes, steps]
            # [lr, attack, seed] in %
            acc[tag + opt] = 100.0 * out["accuracy"].reshape(len(lrs), len(attacks), len(seeds))

    log_history(workdir, curves, step_axis=1, every=10)
    byzantine.checkpoint_pieces(workdir, pieces)
    results: dict[str, float | list[float]] = {}
    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    for opt, values in acc.items():
        per_lr = values.mean(axis=1)  # [lr, seed], averaged over attacks
        tag, _, name = opt.rpartition("/")
        prefix = f"{tag}/" if tag else ""
        for i, lr in enumerate(lrs):
            results[f"{prefix}acc/{name}/lr={lr:g}"] = per_lr[i].tolist()
        results[f"{prefix}acc_range_{name}"] = (per_lr.max(axis=0) - per_lr.min(axis=0)).tolist()
        results[f"{prefix}mean_acc_{name}"] = per_lr.mean(axis=0).tolist()
        ax.errorbar(lrs, per_lr.mean(1), yerr=per_lr.std(1), marker="o", label=opt, capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"{config.cell}, attacks {'/'.join(attacks)}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(workdir, "byzantine_lr_sensitivity.png"), dpi=120)
    atomic_write_json(
        os.path.join(workdir, "byzantine_lr_sensitivity.json"),
        {"config": config.to_dict(), "results": results},
    )
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> byzantine.PlanSpec:
    """For ``jaxlab plan``: one step of an optimiser's call (lrs × attacks × seeds runs)."""
    lanes = len(config.learning_rates) * len(config.attacks) * config.num_seeds
    return byzantine.plan_spec(
        config,
        mesh,
        [tuple(config.cell.split("+"))],
        lanes,
        lanes * len(config.optimizers) * len(config.datasets),
    )
