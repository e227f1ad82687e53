"""GADC(I) on heterophilic graphs, directed (paper) vs symmetrised convention."""

from jaxlab.report import Claim, Experiment
from jaxlab.report.power import PowerAt

_REASON = (
    "at quick's 10 splits the split-to-split spread (pilot sd 5.7-7.1 points) cannot show "
    "equivalence within ±3"
)

EXPERIMENT = Experiment(
    name="gadc_heterophily",
    requires=("graphs",),
    claims=(
        Claim(
            name="Texas, directed: GADC(I) ε=1",
            metric="texas_directed_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            paper=77.8,
            paper_source="Table 14, Texas, ε = 1.0",
            tolerance=3.0,
            unit="%",
            test="matches",
            decided_at=("paper",),
            decided_at_reason=_REASON,
            paper_power=PowerAt(
                "tost", 100, 0.0, "pilot, splits 1000-1009: sd 7.1", sd=7.1, tolerance=3.0
            ),
            setting="Geom-GCN directed graph, one seed = one random split",
        ),
        Claim(
            name="Wisconsin, directed: GADC(I) ε=1",
            metric="wisconsin_directed_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            paper=78.2,
            paper_source="Table 14, Wisconsin, ε = 1.0",
            tolerance=3.0,
            unit="%",
            test="matches",
            decided_at=("paper",),
            decided_at_reason=_REASON,
            paper_power=PowerAt(
                "tost", 100, 0.0, "pilot, splits 1000-1009: sd 5.7", sd=5.7, tolerance=3.0
            ),
            setting="Geom-GCN directed graph, one seed = one random split",
        ),
        Claim(
            name="Texas, directed: ε=1 beats ε=0",
            metric="texas_directed_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="texas_directed_eps0",
            unit="%",
            paired=True,
            test="better",
            setting="paired over the same splits; paper: 74.9 -> 77.8 (100 random splits)",
            power=0.13,
        ),
        Claim(
            name="Wisconsin, directed: ε=1 beats ε=0",
            metric="wisconsin_directed_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="wisconsin_directed_eps0",
            unit="%",
            paired=True,
            test="better",
            setting="paired over the same splits; paper: 73.2 -> 78.2 (100 random splits)",
            power=0.98,
        ),
        Claim(
            name="Cornell, directed: ε=1 beats ε=0",
            metric="cornell_directed_eps1",
            power=0.2,
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="cornell_directed_eps0",
            unit="%",
            paired=True,
            test="better",
            setting="the paper's direction; its per-dataset numbers are not in our spec",
        ),
        Claim(
            name="Actor, directed: ε=1 beats ε=0",
            metric="film_directed_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="film_directed_eps0",
            unit="%",
            paired=True,
            test="better",
            setting="the paper's direction; its per-dataset numbers are not in our spec",
            power=1.0,
        ),
        Claim(
            name="Texas, symmetrised: ε=1 beats ε=0",
            metric="texas_symmetric_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="texas_symmetric_eps0",
            unit="%",
            paired=True,
            test="better",
            diagnostic=True,
            setting="diagnostic: symmetrised graph (not the paper's setting)",
        ),
        Claim(
            name="Wisconsin, symmetrised: ε=1 beats ε=0",
            metric="wisconsin_symmetric_eps1",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            baseline="wisconsin_symmetric_eps0",
            unit="%",
            paired=True,
            test="better",
            diagnostic=True,
            setting="diagnostic: symmetrised graph (not the paper's setting)",
        ),
    ),
)
