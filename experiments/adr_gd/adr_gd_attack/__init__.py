"""L∞ attacks on a digits MLP: ADR-GD vs PGD on the best wrong-class margin, same step budget."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "scikit-learn digits (8×8, [0, 1]) MLP [64, 64, 64, 10], 5 classifier seeds, "
    "correctly classified test images; paper: MNIST/CIFAR/ImageNet CNNs (not retrieved)"
)

EXPERIMENT = Experiment(
    name="adr_gd_attack",
    claims=(
        Claim(
            name="ADR-GD attacks succeed more often than PGD (ε = 0.1)",
            metric="adr_success_eps0.1",
            undecided=(
                "5 classifier seeds at every preset: paired success rates take the exact sign test "
                "over seeds, whose smallest two-sided p over 5 pairs is 0.0625"
            ),
            bounds=(0.0, 1.0),
            samples="proportion",
            baseline="pgd_success_eps0.1",
            paper=None,
            higher_is_better=True,
            unit="",
            paired=True,
            setting=f"success rate per classifier seed, both attacks on the same images; "
            f"per-target margin maximisation, 9 targets × T steps each for both; {_SETTING}",
        ),
        Claim(
            name="ADR-GD attacks succeed more often than PGD (ε = 0.2)",
            metric="adr_success_eps0.2",
            undecided=(
                "5 classifier seeds at every preset: paired success rates take the exact sign test "
                "over seeds, whose smallest two-sided p over 5 pairs is 0.0625"
            ),
            bounds=(0.0, 1.0),
            samples="proportion",
            baseline="pgd_success_eps0.2",
            paper=None,
            higher_is_better=True,
            unit="",
            paired=True,
            setting="success rate per classifier seed, same images for both; " + _SETTING,
        ),
    ),
)
