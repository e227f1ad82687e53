"""DPO on a frozen-embedding, trainable-unembedding model: learning order by distinguishability."""

import math

from jaxlab.report import Claim, Experiment

_SETTING = (
    "the paper's theoretical model with synthetic embeddings (d = 64, K = 4, "
    "δ = 0.5…4, Laplace noise b = 0.15), SGD, β = 0.1; the paper reports orderings "
    "(figures), no numbers"
)

EXPERIMENT = Experiment(
    name="dpo_dynamics",
    claims=(
        Claim(
            name="the most distinguishable behaviour reaches 90 % preference accuracy "
            "before the least distinguishable (equal mixture)",
            metric="steps90_dpo_delta4",
            bounds=(0.0, math.inf),
            baseline="steps90_dpo_delta0p5",
            paper=None,
            higher_is_better=False,
            unit=" steps",
            paired=True,
            setting=_SETTING + "; both behaviours of the same runs (paired by seed)",
            power=0.17,
        ),
        Claim(
            name="the ordering survives an unequal mixture with most data on the least "
            "distinguishable behaviour",
            metric="steps90_unequal_delta4",
            bounds=(0.0, math.inf),
            baseline="steps90_unequal_delta0p5",
            paper=None,
            higher_is_better=False,
            unit=" steps",
            paired=True,
            setting=_SETTING + "; weights 0.4/0.3/0.2/0.1 from δ = 0.5 to 4",
            power=0.11,
        ),
        Claim(
            name="early growth of the margin direction along u_k is faster for larger δ_k",
            metric="early_slope_delta4",
            bounds=(-math.inf, math.inf),
            baseline="early_slope_delta0p5",
            paper=None,
            higher_is_better=True,
            paired=True,
            setting=_SETTING + "; slope over the first 10 steps",
            power=0.12,
        ),
        Claim(
            name="early growth is about linear (R² of a line over the first steps above "
            "that over the whole run)",
            metric="early_r2",
            bounds=(-math.inf, 1.0),
            baseline="full_r2",
            paper=None,
            higher_is_better=True,
            paired=True,
            setting=_SETTING,
            power=1.0,
        ),
        Claim(
            name="an aligned head is misaligned (flipped preferences win) faster than a fresh head",
            metric="misalign_steps_aligned",
            bounds=(0.0, math.inf),
            diagnostic=True,
            baseline="misalign_steps_fresh",
            paper=None,
            higher_is_better=False,
            unit=" steps",
            paired=True,
            setting="diagnostic: says nothing about the paper's claim: with frozen "
            "embeddings alignment cannot raise their distinguishability, the mechanism the "
            "paper invokes (it used a chat LLM), and the aligned head's count is censored "
            "at the stage length (500 steps); win = the policy prefers the flipped answer "
            "on ≥ 90 % of held-out prompts (an untrained head: about 50 %); see docs",
        ),
        Claim(
            name="an untrained head does not meet the win threshold (chance check)",
            metric="misalign_start_accuracy_fresh",
            bounds=(0.0, 1.0),
            threshold=0.9,
            threshold_source="the win threshold of the row above",
            test="at_most",
            higher_is_better=False,
            diagnostic=True,
            setting="policy accuracy on the flipped preferences before any step; 0.9 is "
            "the win threshold above, not a paper number",
        ),
    ),
)
