"""byzantine_lr_sensitivity: μ²-SGD vs momentum across learning rates (Dahan & Levy 2024)."""

from jaxlab.report import Claim, Experiment

_SETTING = "digits + MLP (d = 4810), CWTM+CTMA, ALIE, 200 steps (paper: MNIST figure)"

EXPERIMENT = Experiment(
    name="byzantine_lr_sensitivity",
    claims=(
        Claim(
            name="μ²-SGD is less sensitive to the learning rate (max − min accuracy over lrs)",
            metric="acc_range_mu2sgd",
            power=0.09,
            bounds=(0.0, 100.0),
            baseline="acc_range_momentum",
            paired=True,
            higher_is_better=False,
            setting=_SETTING,
            unit=" pts",
        ),
        Claim(
            name="μ²-SGD's accuracy averaged over the learning-rate sweep beats momentum's",
            metric="mean_acc_mu2sgd",
            power=0.09,
            bounds=(0.0, 100.0),
            baseline="mean_acc_momentum",
            paired=True,
            setting=_SETTING,
            unit="%",
        ),
    ),
)
