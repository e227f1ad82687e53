"""CurBench's benchmark loop, shared by its experiments: methods × settings, one trainer.

    runs = run_curbench(curricula, settings, make_data, init_fn, apply_fn, seeds=[0, 1],
                        num_epochs=6, workdir=workdir, teacher=teacher_fn)
    metrics, table = summarize_runs(runs, meta_methods=META_METHODS)

Every (setting, method) run trains all seeds in one program through
:class:`~jaxlab.train.curriculum.CurriculumTrainer` and is saved to
``<workdir>/runs/<setting>__<method>.json``; a killed experiment resumes at the next run.
Curricula that need a teacher (TTCL, C2F, Adaptive CL) get its logits and losses on each
setting's training labels. Hyper-parameters are the reference's, with their 200-epoch
schedules scaled to the run (:func:`scaled_curriculum`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxlab import curriculum as cl
from jaxlab.train.curriculum import CurriculumData, CurriculumTrainer, summarize_runs

META_METHODS = ("lre", "mw_net", "dds")
REFERENCE_EPOCHS = 200  # the reference's schedules are written for 200 epochs


def scaled_curriculum(name: str, num_epochs: int, lr: float, spl_start_rate: float = 0.2,
                      grow_fraction: float = 0.5) -> cl.Curriculum:
    """The curriculum ``name`` with the reference's hyper-parameters, its epoch schedules
    scaled from 200 epochs to ``num_epochs`` (each at least one epoch); SPL and TTCL's
    pacing reaches the whole set at ``grow_fraction`` of the run."""
    e = num_epochs

    def scale(epochs: int) -> int:
        return max(1, round(epochs / REFERENCE_EPOCHS * e))

    pacing = {"start_rate": spl_start_rate, "grow_epochs": max(1, round(grow_fraction * e))}
    kwargs = {
        "spl": pacing,
        "ttcl": pacing,
        "cbs": {"grow_interval": scale(5)},
        "dihcl": {"warm_epochs": scale(50)},
        "mcl": {"schedule_epochs": scale(20), "warm_epochs": scale(5)},
        "lgl": {"grow_interval": scale(20)},
        "adaptive_cl": {"pace_r": scale(15), "inv": scale(20)},
        "screener_net": {"lr": lr},
        "dds": {"lr": lr},
    }.get(name, {})
    return cl.get_curriculum(name, **kwargs)


def noisy_or_imbalanced(data: CurriculumData, setting: str, seeds: Sequence[int],
                        noise_rate: float = 0.4, imbalance_ratio: float = 50.0,
                        imbalance_seed: int = 0) -> CurriculumData:
    """A CurBench setting of a clean task: ``"standard"``; ``"noise"`` (per-seed noisy
    labels, :func:`~jaxlab.curriculum.noisy_labels` with key ``1000 + seed``);
    ``"imbalance"`` (the kept subset of :func:`~jaxlab.curriculum.imbalance`)."""
    x, y = np.asarray(data.train_inputs), np.asarray(data.train_labels)
    c = data.num_classes
    if setting == "noise":
        y = np.stack([np.asarray(cl.noisy_labels(y, noise_rate, c, jax.random.key(1000 + s)))
                      for s in seeds])
    elif setting == "imbalance":
        kept = np.asarray(cl.imbalance(y, imbalance_ratio, c, jax.random.key(imbalance_seed)))
        x, y = x[kept], y[kept]
    elif setting != "standard":
        raise ValueError(f"unknown setting {setting!r}; valid: standard, noise, imbalance")
    return data._replace(train_inputs=x, train_labels=y)


def with_teacher(trainer: CurriculumTrainer, params: Any, data: CurriculumData) -> CurriculumData:
    """``data`` with a fixed teacher's logits ``[N, C]`` and per-sample losses (``[N]``, or
    ``[S, N]`` for per-seed labels) on the setting's (possibly noisy) training labels."""
    logits = trainer.logits(params, data.train_inputs)[0]
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    labels = np.asarray(data.train_labels)
    losses = -logp[np.arange(logp.shape[0]), labels]
    return data._replace(teacher_losses=losses, teacher_logits=logits)


def train_teacher(teacher_data: CurriculumData, init_fn, apply_fn, seed: int, num_epochs: int,
                  batch_size: int, lr: float) -> tuple[CurriculumTrainer, Any]:
    """A baseline model trained on a held-out clean split: ``(trainer, params)``."""
    trainer = CurriculumTrainer(cl.baseline(), init_fn, apply_fn, batch_size=batch_size, lr=lr)
    params = trainer.run(teacher_data, [seed], num_epochs, return_params=True)["params"]
    return trainer, params


def run_curbench(curricula: dict[str, cl.Curriculum], settings: Sequence[str],
                 make_data: Callable[[str], CurriculumData], init_fn, apply_fn, *,
                 seeds: Sequence[int], num_epochs: int, batch_size: int, lr: float,
                 workdir: str, seed_batching: str = "map",
                 teacher: Callable[[], tuple[CurriculumTrainer, Any]] | None = None,
                 chunk_steps: int | None = None,
                 verbose: bool = True) -> dict[str, dict[str, dict]]:
    """Runs every curriculum in every setting; returns ``runs[setting][method]``.

    Args:
      curricula: name → curriculum (the no-op ``"baseline"`` among them).
      settings: setting names, passed to ``make_data``.
      make_data: ``setting -> CurriculumData``.
      init_fn, apply_fn: the model (see ``CurriculumTrainer``).
      seeds, num_epochs, batch_size, lr, seed_batching: the trainer's.
      workdir: finished runs are saved under ``<workdir>/runs`` and not repeated.
      teacher: ``() -> (trainer, params)`` of the teacher, called once if a curriculum
        ``uses_teacher``.
      chunk_steps: if set, each run also checkpoints every ``chunk_steps`` steps under
        ``<workdir>/checkpoints/<setting>__<method>`` and resumes mid-epoch (long runs).
    """
    runs_dir = Path(workdir) / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, dict]] = {s: {} for s in settings}
    teacher_model = None
    for method, curriculum in curricula.items():
        trainer = None
        for setting in settings:
            path = runs_dir / f"{setting}__{method}.json"
            if path.exists():
                runs[setting][method] = json.loads(path.read_text())
                continue
            if trainer is None:  # one trainer per method: settings of equal shapes share
                trainer = CurriculumTrainer(curriculum, init_fn, apply_fn,  # its programs
                                            batch_size=batch_size, lr=lr,
                                            seed_batching=seed_batching,
                                            chunk_steps=chunk_steps)
            data = make_data(setting)
            if curriculum.uses_teacher:
                if teacher is None:
                    raise ValueError(f"curriculum {method!r} needs a teacher")
                if teacher_model is None:
                    teacher_model = teacher()
                data = with_teacher(*teacher_model, data)
            checkpoints = None
            if chunk_steps is not None:
                checkpoints = str(Path(workdir).resolve() / "checkpoints" / path.stem)
            result = trainer.run(data, list(seeds), num_epochs, workdir=checkpoints)
            path.write_text(json.dumps(result))
            runs[setting][method] = result
            if verbose:
                print(f"{setting:>9} {method:>15}: test "
                      f"{100 * np.mean(result['test_acc']):.2f} ± "
                      f"{100 * np.std(result['test_acc']):.2f}  "
                      f"({result['wall_time_s']:.1f} s)", flush=True)
    return runs


def run_experiment(config, make_data: Callable[[str], CurriculumData], init_fn, apply_fn, *,
                   seeds: Sequence[int], workdir: str,
                   teacher: Callable[[], tuple[CurriculumTrainer, Any]] | None = None,
                   ) -> dict[str, Any]:
    """A CurBench experiment from its config: every curriculum of ``config.methods``
    (``scaled_curriculum`` to the config's epochs and learning rate) in every setting of
    ``config.settings``; returns ``summarize_runs``'s metrics and writes its table to
    ``<workdir>/table.md``.

    ``config`` fields: methods, settings, num_epochs, batch_size, learning_rate,
    spl_start_rate, grow_fraction, seed_batching, chunk_steps.
    """
    curricula = {m: scaled_curriculum(m, config.num_epochs, config.learning_rate,
                                      config.spl_start_rate, config.grow_fraction)
                 for m in config.methods}
    runs = run_curbench(curricula, config.settings, make_data, init_fn, apply_fn,
                        seeds=seeds, num_epochs=config.num_epochs,
                        batch_size=config.batch_size, lr=config.learning_rate,
                        workdir=workdir, seed_batching=config.seed_batching, teacher=teacher,
                        chunk_steps=config.chunk_steps)
    metrics, table = summarize_runs(runs, meta_methods=META_METHODS)
    (Path(workdir) / "table.md").write_text(table)
    print(table)
    return metrics
