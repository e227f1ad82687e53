"""The experiment registry: what an experiment declares and how it is found.

An experiment is a package ``experiments/<name>/`` with three pieces::

    config.py     get_config(preset="quick") -> ml_collections.ConfigDict
    train.py      train_and_evaluate(config, workdir) -> dict[str, float | list[float]]
    __init__.py   EXPERIMENT = Experiment(name, paper, claims=(Claim(...), ...))

Every config carries ``seed`` (int), ``num_seeds`` (int, the runner's seed loop) and
``cpu_budget_s`` (the expected wall time of the preset on a 2-core CPU). A value in the
returned dict is either one number or a list of numbers (runs batched inside one call,
e.g. ``vmap`` over runs); the report pools them over the runner's seeds.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import ml_collections

REQUIRED_CONFIG_KEYS = ("seed", "num_seeds", "cpu_budget_s")


@dataclasses.dataclass(frozen=True)
class Paper:
    """A paper, declared once in ``experiments/<id>/__init__.py`` as ``PAPER``.

    Attributes:
      id: short identifier, the folder name (``"multimax"``); ``--paper ID`` selects it.
      title: the paper's title.
      authors: "Surname, Surname, Surname" (as many as the paper lists, or "X et al.").
      venue: "ICML 2024".
      code: URL of the reference implementation ("" when there is none).
      summary: the paper's claim in one line.
    """

    id: str
    title: str
    authors: str
    venue: str = "ICML 2024"
    code: str = ""
    summary: str = ""

    @property
    def citation(self) -> str:
        """``Authors. Title. Venue`` — the one format the report prints."""
        return f"{self.authors}. {self.title}. {self.venue}"


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked by one metric of an experiment.

    Attributes:
      name: the claim in a few words ("MultiMax beats softmax on test accuracy").
      metric: key of the value in ``train_and_evaluate``'s result.
      paper: the paper's number for this metric, or ``None`` when the paper has none at
        our scale.
      higher_is_better: direction of the metric.
      setting: how our setting differs from the paper's, in one line.
      baseline: optional key of the metric the claim is compared against (the method
        beats the baseline). Without it the claim is "ours matches the paper's number
        within ``tolerance``".
      tolerance: absolute tolerance for claims without a baseline.
      unit: printed after numbers ("%", "Å", "").
    """

    name: str
    metric: str
    paper: float | None = None
    higher_is_better: bool = True
    setting: str = ""
    baseline: str | None = None
    tolerance: float | None = None
    unit: str = ""


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment: its name, the paper it reproduces and its claims."""

    name: str
    paper: str
    claims: tuple[Claim, ...]
    module: str = ""

    def get_config(self, preset: str = "quick") -> ml_collections.ConfigDict:
        config = importlib.import_module(f"{self.module}.config").get_config(preset)
        missing = [k for k in REQUIRED_CONFIG_KEYS if k not in config]
        if missing:
            raise ValueError(f"experiment {self.name!r}: config lacks keys {missing}")
        return config

    @property
    def train_and_evaluate(self) -> Callable[[ml_collections.ConfigDict, str], dict[str, Any]]:
        return importlib.import_module(f"{self.module}.train").train_and_evaluate


def discover(package: str = "experiments") -> dict[str, Experiment]:
    """Finds every ``EXPERIMENT`` under ``package``; returns them by name, sorted."""
    try:
        root = importlib.import_module(package)
    except ModuleNotFoundError:
        return {}
    found: dict[str, Experiment] = {}
    for info in pkgutil.iter_modules(root.__path__):
        if not info.ispkg:
            continue
        module_name = f"{package}.{info.name}"
        module = importlib.import_module(module_name)
        experiment = getattr(module, "EXPERIMENT", None)
        if experiment is None:
            continue
        found[experiment.name] = dataclasses.replace(experiment, module=module_name)
    return dict(sorted(found.items()))


def get_experiment(name: str, package: str = "experiments") -> Experiment:
    """Returns the experiment ``name``; an unknown name lists the valid ones."""
    experiments = discover(package)
    if name not in experiments:
        valid = ", ".join(experiments) or "(none registered)"
        raise KeyError(f"unknown experiment {name!r}; valid experiments: {valid}")
    return experiments[name]
