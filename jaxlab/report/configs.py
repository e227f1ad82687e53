"""Experiment configs: the shared base of every preset, and ``--config.KEY=VALUE`` overrides."""

from __future__ import annotations

import ast
from collections.abc import Iterable

import ml_collections

PRESETS = ("smoke", "quick", "paper")


def base_config(preset: str) -> ml_collections.ConfigDict:
    """The fields every experiment config starts from.

    Presets: ``smoke`` (seconds: the real run's code path and shapes of arrays, tiny sizes,
    used by the registry-wide test and the notebooks' test), ``quick`` (the reproduction
    ``make reproduce`` runs on a 2-core CPU), ``paper`` (the paper's scale).

    Fields:
      preset: the preset name.
      seed: the first seed; runs use ``seed .. seed + num_seeds - 1``.
      num_seeds: the number of seeds (the one name for "runs", "repeats", "seeds").
      batch_seeds: ``False``: the runner calls ``train_and_evaluate`` once per seed;
        ``True``: once, and the experiment runs all ``num_seeds`` seeds itself (batched
        with ``vmap``) and returns a list per metric.
      cpu_budget_s: the expected wall time of this preset on a 2-core CPU.
      data_dir: offline data directory ("" = ``--data_dir``, ``$JAXLAB_DATA_DIR`` or
        ``../shared/data``).
      fast_compile: compile with XLA's cheapest settings (``jaxlab.train.jit_run``); on
        at ``smoke`` only, whose tiny runs are compile-bound.
      datasets: the datasets the preset reads, by their TFDS names (``("cifar10",)``) or,
        for data that is no TFDS dataset, a short name of its source (``"generated"``,
        ``"qm9pack"``); ``docs/paper_presets.md`` lists them.
      data_workers: worker processes that decode and augment a streamed input.
      matmul_precision: the precision of float32 matrix products and convolutions
        (``"highest"``, ``"high"`` or ``"default"``; ``jaxlab.train.precision``):
        ``"highest"`` at smoke and quick, so CPU and GPU results agree; a paper preset
        names the paper's choice.
      compute_dtype: the models' activation and matrix-product dtype (``"float32"``;
        ``"bfloat16"`` where the paper trained in mixed precision).
      param_dtype: the parameters' and optimiser state's dtype (float32 master weights).
      dry_run: set by ``jaxlab run --dry-run`` (see :func:`dry_run_config`): the paper
        program at its real model shapes, 2 steps a phase, one evaluation batch, on mock
        data.

    Raises:
      ValueError: an unknown preset.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    config = ml_collections.ConfigDict()
    config.preset = preset
    config.seed = 0
    config.num_seeds = 1
    config.batch_seeds = False
    config.cpu_budget_s = 60.0
    config.data_dir = ""
    config.fast_compile = preset == "smoke"
    config.datasets = ()
    config.data_workers = 0
    config.matmul_precision = "highest"
    config.compute_dtype = "float32"
    config.param_dtype = "float32"
    config.dry_run = False
    return config


#: ``--dry-run``: steps of each phase, and the largest global batch per device.
DRY_RUN_STEPS = 2
DRY_RUN_ROWS_PER_DEVICE = 8


def dry_run_config(
    config: ml_collections.ConfigDict, shrink, devices: int
) -> ml_collections.ConfigDict:
    """The ``paper`` config of a dry run: ``shrink(config, devices)`` (the experiment's
    ``config.dry_run``) on a copy with ``dry_run=True``, one seed, at most 1 data worker and
    XLA's cheapest compile (``fast_compile``: a dry run's 2 steps are compile-bound).

    ``shrink`` keeps the model shapes and sets every phase to :data:`DRY_RUN_STEPS` steps,
    every global batch to at most :data:`DRY_RUN_ROWS_PER_DEVICE` rows per device, and
    evaluation to one batch.

    Raises:
      ValueError: ``config`` is not a ``paper`` config.
    """
    if config.preset != "paper":
        raise ValueError(f"--dry-run runs the paper preset, got preset {config.preset!r}")
    config = ml_collections.ConfigDict(config.to_dict())
    config.dry_run = True
    config.num_seeds = 1
    config.data_workers = min(config.data_workers, 1)
    config.fast_compile = True
    return shrink(config, devices)


def _leaf_keys(config: ml_collections.ConfigDict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in config.items():
        if isinstance(value, ml_collections.ConfigDict):
            keys.extend(_leaf_keys(value, f"{prefix}{key}."))
        else:
            keys.append(f"{prefix}{key}")
    return keys


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(
    config: ml_collections.ConfigDict, overrides: Iterable[str]
) -> ml_collections.ConfigDict:
    """Applies ``KEY=VALUE`` overrides (dotted keys) to a copy of ``config``.

    Values are Python literals (``0.1``, ``(1, 2)``, ``'adam'``) or bare strings.

    Raises:
      KeyError: an unknown key; the message lists the valid ones.
      ValueError: a malformed override or a value of the wrong type.
    """
    config = ml_collections.ConfigDict(config.to_dict(), type_safe=True)
    valid = _leaf_keys(config)
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"config override {item!r} is not KEY=VALUE")
        key, text = item.split("=", 1)
        if key not in valid:
            raise KeyError(f"unknown config key {key!r}; valid keys: {', '.join(valid)}")
        *parents, leaf = key.split(".")
        node = config
        for parent in parents:
            node = node[parent]
        value = _parse_value(text)
        old = node[leaf]
        if isinstance(old, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(old, tuple) and isinstance(value, list):
            value = tuple(value)
        try:
            node[leaf] = value
        except TypeError as error:
            raise ValueError(f"config key {key!r}: {error}") from error
    return config
