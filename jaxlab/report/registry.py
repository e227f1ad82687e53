"""The registry: papers, their experiments and the claims each experiment checks.

Experiments live in the ``jaxlab_experiments`` package (the repository's ``experiments/``
folder, installed under that name), grouped by paper::

    experiments/<paper_id>/__init__.py         PAPER = Paper(id, title, authors, code, ...)
    experiments/<paper_id>/<name>/__init__.py  EXPERIMENT = Experiment(name, claims=(...))
    experiments/<paper_id>/<name>/config.py    get_config(preset) -> ml_collections.ConfigDict
    experiments/<paper_id>/<name>/train.py     train_and_evaluate(config, workdir) -> dict

Grouping by folder (rather than a paper field on a flat registry) declares each paper
exactly once, keeps a paper's experiments side by side, and makes ``--paper ID`` a folder.
Every config starts from ``jaxlab.report.base_config`` (``preset``, ``seed``,
``num_seeds``, ``batch_seeds``, ``cpu_budget_s``, ``data_dir``). A value in the returned
dict is one number or a list of numbers (runs batched inside one call, e.g. ``vmap`` over
seeds); the report pools them over the runner's seeds.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import pkgutil
from collections.abc import Callable
from typing import Any

import ml_collections

from jaxlab.report.power import PowerAt

EXPERIMENTS_PACKAGE = "jaxlab_experiments"
REQUIRED_CONFIG_KEYS = (
    "preset",
    "seed",
    "num_seeds",
    "batch_seeds",
    "cpu_budget_s",
    "datasets",
    "data_workers",
    "dry_run",
    "matmul_precision",
    "compute_dtype",
    "param_dtype",
)
TESTS = ("better", "matches", "at_least", "at_most", "draw")
SAMPLES = ("continuous", "binary", "proportion")
LOW_POWER = 0.8


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
        title = self.title if self.title[-1:] in "?!." else f"{self.title}."
        return f"{self.authors.rstrip('.')}. {title} {self.venue}"


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked by one metric of an experiment.

    Attributes:
      name: the claim in a few words ("MultiMax beats softmax on test accuracy").
      metric: key of the value in ``train_and_evaluate``'s result.
      paper: the number the paper reports for this metric, and nothing else (``None`` when
        the paper gives none at our scale); where it comes from goes in ``paper_source``.
        The report prints it beside the row.
      higher_is_better: direction of the metric.
      setting: how our setting differs from the paper's, in one line.
      baseline: optional key of the metric the claim is compared against (the method
        beats the baseline). Without it the claim is "ours matches ``threshold`` within
        ``tolerance``".
      tolerance: absolute tolerance (≥ 0): the equivalence band of ``"matches"`` and the
        margin of ``"draw"`` (required there, fixed before the run); for ``"at_least"`` /
        ``"at_most"`` without a ``threshold``, the shift of the paper's number that makes
        the bound.
      unit: printed after numbers ("%", "Å", "").
      paired: the metric and its baseline are measured on the same seeds/splits in the same
        order (e.g. ε = 0 and ε = 1 on each split), so the verdict tests the per-sample
        differences (a paired test) instead of two independent means.
      test: which statistical question the verdict answers (``None``: ``"better"`` when a
        ``baseline`` is named, else ``"matches"``):
        ``"better"`` — ours differs from the baseline in the claim's direction;
        ``"matches"`` — ours equals ``threshold`` within ``tolerance`` (equivalence);
        ``"at_least"`` / ``"at_most"`` — ours is ≥ / ≤ the bound (``bound``);
        ``"draw"`` — ``threshold`` (one value, e.g. a reference run's single draw) is
        equivalent to a typical draw of ours within ``tolerance`` (the exact sign TOST of
        our median; distribution-free).
      deterministic: the metric is an exact, seed-free quantity (an oracle recovery, a
        count of CI tests): compared exactly, without a test, once two runs agree bit for
        bit; one run is *inconclusive*, runs that differ make the row *failed*.
      diagnostic: a quantity the paper does not claim (an ablation, a sanity check): it
        is reported beside the claims, never counted in the tally. Only a diagnostic may
        name neither a baseline nor a number to compare with.
      threshold: the number the test compares with, fixed before the run: the centre of
        the band of ``"matches"``, the bound of ``"at_least"`` / ``"at_most"``. ``None``:
        the paper's number (shifted by ``tolerance`` for a bound). Its origin (the paper's
        lower bound, a nominal level, the smallest effect worth reporting) goes in
        ``threshold_source``.
      threshold_source: where ``threshold`` comes from, in a few words.
      paper_source: the table or figure ``paper`` is read from ("Table 2").
      bounds: the metric's feasible range (``(0, 100)`` for a percentage, ``(0, 1)`` for a
        rate, ``(0, cap)`` for a count that stops at the run's cap, ``(-math.inf, math.inf)``
        declared for an unbounded one); samples outside it make the row *failed*,
        continuous samples on a finite edge are censored (no t-test: the sign or
        Mann–Whitney test, ``jaxlab.report.verdict``), and the can-fail test shifts the
        committed samples only within it (and requires every tallied claim to declare it).
        ``None``: not declared (unbounded).
      cap: the value a sample takes when the run's cap stops it, from the preset's config
        (a step count that never reached its level counts as the run length:
        ``lambda config: config.num_steps + 1``); such samples are censored like those on
        an edge of ``bounds`` (no t-test). ``None``: the metric has no cap.
      samples: what one sample is: ``"continuous"`` (t-tests; samples that are all 0/1 are
        refused), ``"binary"`` (a 0/1 outcome:
        exact sign/McNemar test when paired, Fisher's exact test otherwise, exact binomial
        test against a bound), or ``"proportion"`` (a share of ``trials`` trials: exact
        binomial tests on the counts).
      trials: for ``"proportion"``: the number of independent trials behind each sample;
        ``None`` counts each sample as one trial (its trials share data), which is
        conservative.
      by_construction: the claim holds by construction of the code (a nested set, a sign
        forced by the estimator): it cannot fail, so it is reported as a diagnostic. A
        ``setting`` that says "by construction" must set it.
      unit_of_replication: what one sample is a replication of: ``"seeds"`` (one sample per
        seed, the default), or a named unit ("networks", "splits", "timing rounds") when a
        seed holds several samples; the report prints it.
      timing: the metric is a wall-clock time or a ratio of times.
      decided_at: the presets whose setting can decide the claim (``None``: every preset);
        at any other preset the row is a diagnostic. Only ``("paper",)`` is used, and it
        needs ``decided_at_reason`` and ``paper_power``.
      decided_at_reason: why the other presets cannot decide the claim, in one line.
      undecided: why no preset can decide the claim (its test cannot reach α at any
        preset's sample count, e.g. a sign test over 5 seeds when the samples are censored
        or sit at a floor): a non-empty reason makes the row a diagnostic that says it.
      paper_power: the power calculation at the paper preset (``PowerAt``: the test, the
        paper preset's sample count, the effect worth reporting and the pilot's spread);
        below ``LOW_POWER`` the diagnostic row says so.
      power: the power, at the quick preset, of the test the verdict runs for the effect
        worth reporting (from the config's power calculation, ``jaxlab.report.power``);
        below ``LOW_POWER``, or missing, the row's setting says so.

    Every other claim must name a baseline or a number to compare with (``ValueError``
    otherwise).
    """

    name: str
    metric: str
    paper: float | None = None
    higher_is_better: bool = True
    setting: str = ""
    baseline: str | None = None
    tolerance: float | None = None
    unit: str = ""
    paired: bool = False
    test: str | None = None
    deterministic: bool = False
    diagnostic: bool = False
    threshold: float | None = None
    threshold_source: str = ""
    paper_source: str = ""
    bounds: tuple[float, float] | None = None
    cap: Callable[[ml_collections.ConfigDict], float] | None = None
    samples: str = "continuous"
    trials: int | None = None
    by_construction: bool = False
    unit_of_replication: str = "seeds"
    timing: bool = False
    decided_at: tuple[str, ...] | None = None
    decided_at_reason: str = ""
    undecided: str = ""
    paper_power: PowerAt | None = None
    power: float | None = None

    def __post_init__(self) -> None:
        """Refuses a claim the verdict could not tally (see the class docstring)."""
        if self.test not in (None, *TESTS):
            raise ValueError(f"claim {self.name!r}: test must be one of {TESTS}, got {self.test!r}")
        if self.samples not in SAMPLES:
            raise ValueError(
                f"claim {self.name!r}: samples must be one of {SAMPLES}, got {self.samples!r}"
            )
        if self.trials is not None and (self.samples != "proportion" or self.trials < 1):
            raise ValueError(f"claim {self.name!r}: trials (≥ 1) is for samples='proportion'")
        low, high = self.feasible
        if not low < high:
            raise ValueError(f"claim {self.name!r}: bounds must be (low, high) with low < high")
        if "by construction" in self.setting.lower() and not self.by_construction:
            raise ValueError(
                f"claim {self.name!r}: its setting says 'by construction'; set "
                "by_construction=True (it is then a diagnostic)"
            )
        number = self.paper is not None or self.threshold is not None
        if self.baseline is None and not number and not self.diagnostic:
            raise ValueError(
                f"claim {self.name!r} has neither a baseline nor a paper number, "
                "so it cannot be tallied; name one, or mark it diagnostic=True"
            )
        if self.kind == "better" and self.baseline is None:
            raise ValueError(f"claim {self.name!r}: test 'better' needs a baseline")
        if self.kind != "better" and not number and not self.diagnostic:
            raise ValueError(
                f"claim {self.name!r}: test {self.kind!r} needs a paper number or a threshold"
            )
        if self.kind == "draw" and self.deterministic:
            raise ValueError(
                f"claim {self.name!r}: test 'draw' compares with a spread; a "
                "deterministic claim has none"
            )
        if self.kind in ("matches", "draw") and number and self.tolerance is None:
            raise ValueError(
                f"claim {self.name!r}: test {self.kind!r} needs a tolerance (its margin)"
            )
        if self.decided_at is not None and (not self.decided_at_reason or not self.paper_power):
            raise ValueError(
                f"claim {self.name!r}: decided_at needs decided_at_reason and paper_power "
                "(the power calculation at the paper preset)"
            )
        if self.tolerance is not None and self.tolerance < 0:
            raise ValueError(f"claim {self.name!r}: tolerance must be >= 0, got {self.tolerance}")
        if self.power is not None and not 0 <= self.power <= 1:
            raise ValueError(f"claim {self.name!r}: power must be in [0, 1], got {self.power}")

    @property
    def kind(self) -> str:
        """The test the verdict runs: ``test``, or its default (see the class docstring)."""
        if self.test is not None:
            return self.test
        return "better" if self.baseline is not None else "matches"

    @property
    def feasible(self) -> tuple[float, float]:
        """``bounds``, or ``(-inf, inf)`` when undeclared."""
        return self.bounds if self.bounds is not None else (-math.inf, math.inf)

    @property
    def bound(self) -> float | None:
        """The number the test compares with (``None`` for ``"better"`` or when there is
        none): ``threshold``, else the paper's number — shifted by ``tolerance`` to
        ``paper − tolerance`` for ``"at_least"`` and ``paper + tolerance`` for
        ``"at_most"``; the band's centre for ``"matches"``."""
        if self.kind == "better":
            return None
        if self.threshold is not None:
            return float(self.threshold)
        if self.paper is None:
            return None
        paper, tol = float(self.paper), float(self.tolerance or 0.0)
        return {"matches": paper, "draw": paper, "at_least": paper - tol, "at_most": paper + tol}[
            self.kind
        ]

    @property
    def setting_with_power(self) -> str:
        """``setting``, with a note when the power at quick is below ``LOW_POWER`` or was
        not calculated (a tallied claim only)."""
        if (
            self.is_diagnostic()
            or self.decided_at is not None
            or (self.power is not None and self.power >= LOW_POWER)
        ):
            return self.setting
        if self.power is None:
            note = "no power calculation from a pilot"
        else:
            note = (
                f"power at quick {self.power:.2f} (< {LOW_POWER:g}) for the effect worth "
                "reporting: an inconclusive verdict there is expected"
            )
        return f"{self.setting}; {note}" if self.setting else note

    def diagnostic_reason(self, preset: str | None = None) -> str:
        """Why the claim is reported apart ('' when it is tallied at ``preset``)."""
        if self.by_construction:
            return "holds by construction of the code"
        if self.undecided:
            return f"no preset can decide it: {self.undecided}"
        if self.diagnostic:
            return "not a claim of the paper (an ablation, a sanity check or bookkeeping)"
        if not self.is_diagnostic(preset):
            return ""
        power = self.paper_power.value if self.paper_power is not None else 0.0
        low = f" (< {LOW_POWER:g}: inconclusive expected there too)" if power < LOW_POWER else ""
        return (
            f"decided at the paper preset only: {self.decided_at_reason}; power there "
            f"{power:.2f}{low}"
        )

    def is_diagnostic(self, preset: str | None = None) -> bool:
        """Reported apart, never tallied: ``diagnostic``, ``by_construction``,
        ``undecided``, or measured at a preset outside ``decided_at``."""
        undecided = (
            self.decided_at is not None and preset is not None and preset not in self.decided_at
        )
        return self.diagnostic or self.by_construction or bool(self.undecided) or undecided


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment: its name, its claims and (filled in by ``discover``) its paper.

    Attributes:
      name: unique identifier (``jaxlab run NAME``).
      claims: the paper's claims this experiment checks.
      requires: offline data its smoke and quick presets read, checked before ``run`` and
        ``reproduce`` start (names of ``jaxlab.data.prerequisites.CHECKS``); a paper
        preset is checked against its config's ``datasets`` instead.
      paper: the ``Paper`` of the folder it sits in.
      module: its import path.
    """

    name: str
    claims: tuple[Claim, ...]
    requires: tuple[str, ...] = ()
    paper: Paper | None = None
    module: str = ""

    def get_config(self, preset: str = "quick") -> ml_collections.ConfigDict:
        config = importlib.import_module(f"{self.module}.config").get_config(preset)
        missing = [k for k in REQUIRED_CONFIG_KEYS if k not in config]
        if missing:
            raise ValueError(
                f"experiment {self.name!r}: config lacks keys {missing}; start it from "
                "jaxlab.report.base_config(preset)"
            )
        return config

    @property
    def paper_setting(self) -> Any:
        """The paper's setting (``PAPER_SETTING`` of its ``config.py``, a
        ``jaxlab.report.paper_presets.PaperSetting``).

        Raises:
          ValueError: the config module declares none.
        """
        setting = getattr(importlib.import_module(f"{self.module}.config"), "PAPER_SETTING", None)
        if setting is None:
            raise ValueError(
                f"experiment {self.name!r}: its config.py declares no PAPER_SETTING "
                "(jaxlab.report.PaperSetting)"
            )
        return setting

    def dry_run_config(self, devices: int) -> ml_collections.ConfigDict:
        """The ``paper`` config shrunk for ``jaxlab run --dry-run`` on ``devices`` devices
        (its ``config.py``'s ``dry_run(config, devices)``; see
        ``jaxlab.report.configs.dry_run_config``).

        Raises:
          ValueError: the config module has no ``dry_run``.
        """
        from jaxlab.report.configs import dry_run_config

        module = importlib.import_module(f"{self.module}.config")
        shrink = getattr(module, "dry_run", None)
        if shrink is None:
            raise ValueError(
                f"experiment {self.name!r} has no dry run: its config.py defines no "
                "dry_run(config, devices)"
            )
        return dry_run_config(self.get_config("paper"), shrink, devices)

    @property
    def train_and_evaluate(self) -> Callable[[ml_collections.ConfigDict, str], dict[str, Any]]:
        """The experiment's ``train_and_evaluate``, traced at the config's numerics
        (``jaxlab.train.precision.numerics_scope``: its ``matmul_precision``)."""
        function = importlib.import_module(f"{self.module}.train").train_and_evaluate

        @functools.wraps(function)
        def at_config_precision(config: ml_collections.ConfigDict, workdir: str) -> dict[str, Any]:
            from jaxlab.train.precision import numerics_scope

            with numerics_scope(config):
                return function(config, workdir)

        return at_config_precision


def _subpackages(module) -> list[str]:
    return sorted(i.name for i in pkgutil.iter_modules(module.__path__) if i.ispkg)


PaperEntry = tuple[Paper, dict[str, Experiment]]


def discover_papers(package: str = EXPERIMENTS_PACKAGE) -> dict[str, PaperEntry]:
    """Every paper folder under ``package``: id → (its ``Paper``, its experiments by name)."""
    try:
        root = importlib.import_module(package)
    except ModuleNotFoundError:
        return {}
    found: dict[str, PaperEntry] = {}
    for folder in _subpackages(root):
        module = importlib.import_module(f"{package}.{folder}")
        paper = getattr(module, "PAPER", None)
        if paper is None:
            continue
        if paper.id != folder:
            raise ValueError(f"{package}.{folder}: PAPER.id is {paper.id!r}, not the folder name")
        experiments = {}
        for sub in _subpackages(module):
            module_name = f"{package}.{folder}.{sub}"
            experiment = getattr(importlib.import_module(module_name), "EXPERIMENT", None)
            if experiment is not None:
                experiments[experiment.name] = dataclasses.replace(
                    experiment, paper=paper, module=module_name
                )
        found[paper.id] = (paper, experiments)
    return found


def discover(package: str = EXPERIMENTS_PACKAGE) -> dict[str, Experiment]:
    """Every ``EXPERIMENT`` under ``package``, by name, sorted; duplicate names are errors."""
    found: dict[str, Experiment] = {}
    for _, experiments in discover_papers(package).values():
        for name, experiment in experiments.items():
            if name in found:
                raise ValueError(f"experiment name {name!r} is registered twice")
            found[name] = experiment
    return dict(sorted(found.items()))


def get_experiment(name: str, package: str = EXPERIMENTS_PACKAGE) -> Experiment:
    """Returns the experiment ``name``; an unknown name lists the valid ones."""
    experiments = discover(package)
    if name not in experiments:
        valid = ", ".join(experiments) or "(none registered)"
        raise KeyError(f"unknown experiment {name!r}; valid experiments: {valid}")
    return experiments[name]
