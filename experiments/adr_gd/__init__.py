"""Activation-Descent Regularization for Input Optimization of ReLU Networks (Yu, Gao, 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="adr_gd",
    title="Activation-Descent Regularization for Input Optimization of ReLU Networks",
    authors="Yu, Gao",
    venue="ICML 2024",
    code="https://github.com/hoy021/ADR-GD",
    summary="optimising relaxed activation patterns beside the input finds larger maxima of "
    "ReLU networks and stronger adversarial examples than gradient ascent",
)
