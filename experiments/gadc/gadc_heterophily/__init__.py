"""GADC(I) on heterophilic graphs, directed (paper) vs symmetrised convention."""

from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="gadc_heterophily",
    requires=("graphs",),
    claims=(
        Claim(name="Texas, directed: GADC(I) ε=1", metric="texas_directed_eps1", bounds=(0.0,
        100.0), unit_of_replication="splits", paper=77.8,
              tolerance=3.0, unit="%", test="matches",
              decided_at=("paper",),
              setting="Geom-GCN directed graph, one seed = one random split; decided at the "
              "paper preset only (its 100 splits): at quick's 10, the split-to-split spread "
              "(sd ≈ 9-11 points) cannot show equivalence within ±3"),
        Claim(name="Wisconsin, directed: GADC(I) ε=1", metric="wisconsin_directed_eps1",
        bounds=(0.0, 100.0), unit_of_replication="splits",
              paper=78.2, tolerance=3.0, unit="%", test="matches",
              decided_at=("paper",),
              setting="Geom-GCN directed graph, one seed = one random split; decided at the "
              "paper preset only (its 100 splits): at quick's 10, the split-to-split spread "
              "(sd ≈ 9-11 points) cannot show equivalence within ±3"),
        Claim(name="Texas, directed: ε=1 beats ε=0", metric="texas_directed_eps1", bounds=(0.0,
        100.0), unit_of_replication="splits",
              baseline="texas_directed_eps0", unit="%", paired=True, test="better",
              setting="paired over the same splits; paper: 74.9 -> 77.8 (100 random splits)"),
        Claim(name="Wisconsin, directed: ε=1 beats ε=0", metric="wisconsin_directed_eps1",
        bounds=(0.0, 100.0), unit_of_replication="splits",
              baseline="wisconsin_directed_eps0", unit="%", paired=True, test="better",
              setting="paired over the same splits; paper: 73.2 -> 78.2 (100 random splits)"),
        Claim(name="Cornell, directed: ε=1 beats ε=0", metric="cornell_directed_eps1", power=0.17,
        bounds=(0.0, 100.0), unit_of_replication="splits",
              baseline="cornell_directed_eps0", unit="%", paired=True, test="better",
              setting="the paper's direction; its per-dataset numbers are not in our spec"),
        Claim(name="Actor, directed: ε=1 beats ε=0", metric="film_directed_eps1", bounds=(0.0,
        100.0), unit_of_replication="splits",
              baseline="film_directed_eps0", unit="%", paired=True, test="better",
              setting="the paper's direction; its per-dataset numbers are not in our spec"),
        Claim(name="Texas, symmetrised: ε=1 beats ε=0", metric="texas_symmetric_eps1",
        bounds=(0.0, 100.0), unit_of_replication="splits",
              baseline="texas_symmetric_eps0", unit="%", paired=True,
              test="better", diagnostic=True,
              setting="diagnostic: symmetrised graph (not the paper's setting)"),
        Claim(name="Wisconsin, symmetrised: ε=1 beats ε=0", metric="wisconsin_symmetric_eps1",
        bounds=(0.0, 100.0), unit_of_replication="splits",
              baseline="wisconsin_symmetric_eps0", unit="%", paired=True,
              test="better", diagnostic=True,
              setting="diagnostic: symmetrised graph (not the paper's setting)"),
    ),
)
