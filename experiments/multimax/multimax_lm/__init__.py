"""Character-level LM on Shakespeare: softmax vs MultiMax at the output and in attention."""

import math

from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="multimax_lm",
    requires=("shakespeare",),
    claims=(
        Claim(
            name="MultiMax reaches lower validation perplexity than softmax",
            metric="val_perplexity_multimax",
            power=0.13,
            bounds=(1.0, math.inf),
            baseline="val_perplexity_softmax",
            paired=True,
            higher_is_better=False,
            setting="char-level 2-block width-64 LM on Shakespeare, 500 steps; "
            "paper: word-level WikiText-103",
        ),
    ),
)
