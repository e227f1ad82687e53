"""Small ViT on Fashion-MNIST: softmax vs MultiMax in attention and at the output."""

from jaxlab.report import Claim, Experiment

_SETTING = "2-block width-64 ViT on Fashion-MNIST, 600 steps; paper: DeiT-S on ImageNet-1K"

EXPERIMENT = Experiment(
    name="multimax_vit",
    requires=("fashion_mnist",),
    claims=(
        Claim(
            name="MultiMax beats softmax on test accuracy",
            metric="test_accuracy_multimax",
            power=0.38,
            bounds=(0.0, 100.0),
            baseline="test_accuracy_softmax",
            paired=True,
            setting=_SETTING,
            unit="%",
        ),
        Claim(
            name="MultiMax attention is sparser than softmax attention (share of weights < 1e-3)",
            metric="attention_sparsity_multimax",
            power=0.1,
            bounds=(0.0, 1.0),
            baseline="attention_sparsity_softmax",
            paired=True,
            setting=_SETTING + "; mean over layers",
        ),
    ),
)
