"""CurBench vision: each curriculum × setting through ``jaxlab.train.curriculum``.

Every (setting, method) run trains all seeds in one program and is saved to
``<workdir>/runs/<setting>__<method>.json``; a killed experiment resumes at the next run.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab import curriculum as cl
from jaxlab.data.images import load_images
from jaxlab.data.paths import resolve_data_dir
from jaxlab.nn.lenet import LeNet
from jaxlab.train.curriculum import CurriculumData, CurriculumTrainer, summarize_runs

NUM_CLASSES = 10
META_METHODS = ("lre", "mw_net", "dds")


def _pool(images: np.ndarray, size: int) -> np.ndarray:
    if size == images.shape[1]:
        return images
    f = images.shape[1] // size
    return images.reshape(-1, size, f, size, f, images.shape[-1]).mean(axis=(2, 4))


def load_splits(config) -> dict[str, np.ndarray]:
    """Fixed subsets of Fashion-MNIST: train/val from the train split, test from test."""
    data_dir = resolve_data_dir(config.data_dir or None)
    x, y = load_images("fashion_mnist", "train", data_dir)
    xt, yt = load_images("fashion_mnist", "test", data_dir)
    order = np.random.default_rng(2024).permutation(len(x))
    tr, va = order[: config.num_train], order[config.num_train: config.num_train + config.num_val]
    # The teacher of TTCL, C2F and Adaptive CL learns on a disjoint clean split.
    held = order[config.num_train + config.num_val:][: config.num_teacher]
    te = np.random.default_rng(2025).permutation(len(xt))[: config.num_test]
    size = config.image_size
    return {"x": _pool(x[tr], size), "y": y[tr], "val_x": _pool(x[va], size), "val_y": y[va],
            "test_x": _pool(xt[te], size), "test_y": yt[te],
            "teacher_x": _pool(x[held], size), "teacher_y": y[held]}


def make_curriculum(name: str, config) -> cl.Curriculum:
    """The curriculum ``name`` with the reference's hyper-parameters, epochs scaled from
    its 200-epoch schedules to ``config.num_epochs``."""
    e = config.num_epochs
    grow = max(1, round(config.grow_fraction * e))
    pacing = {"start_rate": config.spl_start_rate, "grow_epochs": grow}
    kwargs = {
        "spl": pacing,
        "ttcl": pacing,
        "cbs": {"grow_interval": max(1, round(5 / 200 * e))},
        "dihcl": {"warm_epochs": max(1, round(50 / 200 * e))},
        "mcl": {"schedule_epochs": max(1, round(20 / 200 * e)),
                "warm_epochs": max(1, round(5 / 200 * e))},
        "lgl": {"grow_interval": max(1, round(20 / 200 * e))},
        "adaptive_cl": {"pace_r": max(1, round(15 / 200 * e)),
                        "inv": max(1, round(20 / 200 * e))},
        "screener_net": {"lr": config.learning_rate},
        "dds": {"lr": config.learning_rate},
    }.get(name, {})
    return cl.get_curriculum(name, **kwargs)


def with_teacher(trainer: CurriculumTrainer, params, data: CurriculumData) -> CurriculumData:
    """``data`` with a fixed teacher's logits and per-sample losses on the setting's
    (possibly noisy) labels."""
    logits = trainer.logits(params, data.train_inputs)[0]
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    labels = np.asarray(data.train_labels)
    losses = -logp[np.arange(logp.shape[0]), labels]  # [N] or [S, N]
    return data._replace(teacher_losses=losses, teacher_logits=logits)


def setting_data(splits, setting: str, config, seeds) -> CurriculumData:
    """The task of one setting: clean, per-seed noisy labels, or an imbalanced subset."""
    x, y = splits["x"], splits["y"]
    if setting == "noise":
        y = np.stack([np.asarray(cl.noisy_labels(y, config.noise_rate, NUM_CLASSES,
                                                 jax.random.key(1000 + s))) for s in seeds])
    elif setting == "imbalance":
        kept = cl.imbalance(y, config.imbalance_ratio, NUM_CLASSES,
                            jax.random.key(config.seed))
        x, y = x[kept], y[kept]
    elif setting != "standard":
        raise ValueError(f"unknown setting {setting!r}")
    return CurriculumData(x, y, splits["val_x"], splits["val_y"], splits["test_x"],
                          splits["test_y"], NUM_CLASSES)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    seeds = list(range(config.seed, config.seed + config.num_seeds))
    splits = load_splits(config)
    model = LeNet(num_classes=NUM_CLASSES)
    dummy = jnp.zeros((1, *splits["x"].shape[1:]), jnp.float32)

    def init_fn(key):
        return model.init(key, dummy)["params"]

    def apply_fn(params, x, model_args):
        return model.apply({"params": params}, x, model_args.get("sigma"))

    teacher = None
    if any(make_curriculum(m, config).uses_teacher for m in config.methods):
        teacher_trainer = CurriculumTrainer(cl.baseline(), init_fn, apply_fn,
                                            batch_size=config.batch_size,
                                            lr=config.learning_rate)
        teacher_data = CurriculumData(splits["teacher_x"], splits["teacher_y"],
                                      splits["val_x"], splits["val_y"], splits["val_x"],
                                      splits["val_y"], NUM_CLASSES)
        teacher = teacher_trainer.run(teacher_data, [config.seed + 10_000], config.num_epochs,
                                      return_params=True)["params"]

    runs_dir = Path(workdir) / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, dict]] = {s: {} for s in config.settings}
    for method in config.methods:
        trainer = None
        for setting in config.settings:
            path = runs_dir / f"{setting}__{method}.json"
            if path.exists():
                runs[setting][method] = json.loads(path.read_text())
                continue
            if trainer is None:  # one trainer per method: settings of equal shapes share
                trainer = CurriculumTrainer(  # its compiled programs
                    make_curriculum(method, config), init_fn, apply_fn,
                    batch_size=config.batch_size, lr=config.learning_rate,
                    seed_batching=config.seed_batching)
            data = setting_data(splits, setting, config, seeds)
            if trainer.curriculum.uses_teacher:
                data = with_teacher(teacher_trainer, teacher, data)
            result = trainer.run(data, seeds, config.num_epochs)
            path.write_text(json.dumps(result))
            runs[setting][method] = result
            print(f"{setting:>9} {method:>15}: test "
                  f"{100 * np.mean(result['test_acc']):.2f} ± "
                  f"{100 * np.std(result['test_acc']):.2f}  "
                  f"({result['wall_time_s']:.1f} s)", flush=True)
    metrics, table = summarize_runs(runs, meta_methods=META_METHODS)
    (Path(workdir) / "table.md").write_text(table)
    print(table)
    return metrics
