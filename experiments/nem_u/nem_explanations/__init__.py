"""NEM-U vs RELAX (N = 1000) vs gradient saliency: locality and cost of explanations of a
SimCLR encoder, on Fashion-MNIST items pasted on textured 48×48 canvases."""

import math

from jaxlab.report import Claim, Experiment

_SETTING = (
    "Fashion-MNIST items on textured 48×48 canvases, a 4-stage CNN trained with "
    "SimCLR on CPU, instead of natural images and ResNet encoders; no paper number "
    "at this scale (the paper's tables were not available)"
)

EXPERIMENT = Experiment(
    name="nem_explanations",
    paper="nem_u",
    requires=("fashion_mnist",),
    claims=(
        Claim(
            name="NEM's pointing game is no worse than RELAX's by more than 0.1 "
            "(non-inferiority: NEM + 0.1 beats RELAX, paired over seeds)",
            metric="nem_pointing_game_plus_margin",
            power=0.11,
            bounds=(0.0, 1.1),
            baseline="relax_pointing_game",
            unit="",
            paired=True,
            setting=_SETTING + "; margin 0.1 fixed before the run",
        ),
        Claim(
            name="NEM's mass inside the object is no worse than RELAX's by more than 0.05 "
            "(non-inferiority, paired over seeds)",
            metric="nem_mass_inside_plus_margin",
            power=0.11,
            bounds=(0.0, 1.05),
            baseline="relax_mass_inside",
            unit="",
            paired=True,
            setting=_SETTING + "; margin 0.05 fixed before the run",
        ),
        Claim(
            name="NEM explains faster than RELAX (log10 explanations per second, same "
            "encoder, same images; speed-up reported as speedup_nem_over_relax)",
            metric="nem_log10_explanations_per_s",
            bounds=(-math.inf, math.inf),
            timing=True,
            baseline="relax_log10_explanations_per_s",
            unit="",
            paired=True,
            power=0.99,
            setting=_SETTING + "; per seed, on that seed's 8 test canvases, encoder and "
            "decoder: the fastest of k = 3 interleaved calls of each method "
            "(jaxlab.train.timing.time_min_of_k) on the run's CPU, NEM timed as encoder + "
            "decoder pass; log scale, as speed-ups are ratios",
        ),
    ),
)
