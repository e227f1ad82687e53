"""Every registered experiment: its presets load, and its ``smoke`` run returns every metric
its claims name (the same ``train_and_evaluate`` that ``jaxlab reproduce`` calls), under the
suite's ``jax_numpy_rank_promotion="raise"``, on one device (through
``tests/experiments/smoke.py``: a subprocess with the suite's XLA flags; the
8-device runs are compared with it in ``test_devices.py``).
"""

import math

import numpy as np
import pytest

from jaxlab.data import prerequisites
from jaxlab.report import PRESETS, registry
from tests.experiments.smoke import smoke_results

EXPERIMENTS = registry.discover()


def test_every_paper_has_experiments_and_names_are_unique():
    papers = registry.discover_papers()
    assert papers, "no paper registered"
    for paper_id, (paper, experiments) in papers.items():
        assert paper.id == paper_id and paper.title and paper.authors
        assert experiments, f"paper {paper_id} has no experiment"
    assert sum(len(e) for _, e in papers.values()) == len(EXPERIMENTS)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_presets_load(name):
    experiment = EXPERIMENTS[name]
    configs = {p: experiment.get_config(p) for p in PRESETS}
    for preset, config in configs.items():
        assert config.preset == preset and config.num_seeds >= 1
    assert configs["smoke"].cpu_budget_s <= configs["quick"].cpu_budget_s
    assert prerequisites.missing(()) == []
    for requirement in experiment.requires:
        assert requirement in prerequisites.CHECKS
    assert experiment.claims, f"{name} declares no claim"


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_smoke_run_returns_every_claimed_metric(name):
    experiment = EXPERIMENTS[name]
    missing = prerequisites.missing(experiment.requires)
    assert not missing, f"{name}: data missing on this machine: {missing}"
    results = smoke_results(name)  # saved where its notebook finds it (tests/conftest.py)
    for claim in experiment.claims:
        for key in filter(None, (claim.metric, claim.baseline)):
            for result in results:
                assert key in result, f"{name}: claim {claim.name!r} needs {key!r}"
                values = np.ravel(np.asarray(result[key], dtype=np.float64))
                assert values.size and all(not math.isnan(v) for v in values), (name, key)
