"""Dr. Strategy (landmark, then achieve) vs a LEXA-like flat achiever in a state-based maze."""

from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="drstrategy_maze",
    claims=(
        Claim(
            name="going to the landmark nearest the goal, then achieving, beats the flat "
            "achiever on far goals",
            metric="success_far_drstrategy",
            undecided=(
                "5 seeds at every preset: paired success rates take the exact sign test over "
                "seeds, whose smallest two-sided p over 5 pairs is 0.0625"
            ),
            bounds=(0.0, 1.0),
            samples="proportion",
            baseline="success_far_flat",
            unit="",
            paired=True,
            setting="state-based four-room point maze, RSSM world model (GRU state, Gaussian "
            "stochastic state, KL balancing), "
            "goals two rooms away, equal environment steps (shared explorer data, world model "
            "and TDP); the paper uses pixels, an RSSM and 9/25-room mazes; no paper number "
            "(its success rates were not read)",
        ),
    ),
)
