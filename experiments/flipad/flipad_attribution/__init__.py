"""FLIPAD vs RawPAD on a tabular miniature of the paper's Table 5 (dense tanh last layer)."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "breast-cancer data (sklearn) and MMD-trained MLP generators with a dense tanh "
    "last layer instead of CTGAN/TVAE/KL-WGAN on census data; no paper number at "
    "this scale"
)

EXPERIMENT = Experiment(
    name="flipad_attribution",
    paper="flipad",
    claims=(
        Claim(
            name="FLIPAD beats RawPAD on mean AUC over outsiders (real, same arch, other arch)",
            metric="flipad_auc_mean",
            bounds=(0.0, 1.0),
            baseline="rawpad_auc_mean",
            unit="",
            setting=_SETTING,
            paired=True,
            power=1.0,
        ),
        Claim(
            name="FLIPAD beats RawPAD against the same architecture with another seed",
            metric="flipad_auc_same_arch",
            bounds=(0.0, 1.0),
            baseline="rawpad_auc_same_arch",
            unit="",
            setting=_SETTING,
            paired=True,
            power=1.0,
        ),
        Claim(
            name="FLIPAD beats RawPAD with Gaussian noise on the queries",
            metric="flipad_noisy_auc_mean",
            bounds=(0.0, 1.0),
            baseline="rawpad_noisy_auc_mean",
            unit="",
            setting=_SETTING + "; noise std 0.01 on queries in (-1, 1)",
            paired=True,
            power=1.0,
        ),
    ),
)
