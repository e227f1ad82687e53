"""CurBench on images: the curricula vs the baseline on Fashion-MNIST, three settings."""

from jaxlab.report import Claim, Experiment

from .. import meta_cost_claims

_SMALL = "Fashion-MNIST subset, LeNet, few epochs (quick); "
_MODEL = "LeNet on a Fashion-MNIST subset"
EXPERIMENT = Experiment(
    name="curbench_vision",
    paper="curbench",
    requires=("fashion_mnist",),
    claims=(
        Claim(
            name="curricula help clearly under label noise (noise-0.4)",
            metric="noise_best_cl_test_acc",
            power=0.29,
            bounds=(0.0, 100.0),
            baseline="noise_baseline_test_acc",
            unit="%",
            paired=True,
            setting=_SMALL + "best of the curricula chosen by validation accuracy, paired by "
            "seed; paper: ResNet-18/CIFAR-10 82.75 -> 86.92 (Table 3)",
        ),
        Claim(
            name="curricula help little in the standard setting",
            metric="standard_best_cl_test_acc",
            power=0.15,
            bounds=(0.0, 100.0),
            baseline="standard_baseline_test_acc",
            unit="%",
            paired=True,
            setting=_SMALL + "best curriculum by validation accuracy; paper: "
            "ResNet-18/CIFAR-10 92.33 -> 92.88 (Table 3)",
        ),
        Claim(
            name="curricula help little under imbalance (imbalance-50)",
            metric="imbalance_best_cl_test_acc",
            power=0.07,
            bounds=(0.0, 100.0),
            baseline="imbalance_baseline_test_acc",
            unit="%",
            paired=True,
            setting=_SMALL + "best curriculum by validation accuracy; paper: "
            "ResNet-18/CIFAR-10 75.49 -> 76.43 (Table 3)",
        ),
        Claim(
            name="the gain under noise exceeds the gain in the standard setting",
            metric="noise_gain",
            power=0.20,
            bounds=(-100.0, 100.0),
            baseline="standard_gain",
            unit="%",
            paired=True,
            setting=_SMALL + "gain = best curriculum minus baseline, per seed; paper: "
            "+4.17 vs +0.55 points (Table 3, CIFAR-10)",
        ),
        *meta_cost_claims(_MODEL, power=0.61),
    ),
)
