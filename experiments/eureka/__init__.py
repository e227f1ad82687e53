"""Eureka-Moments in Transformers: Multi-Step Tasks Reveal Softmax Induced Optimization Problems (Hoffmann, Schrodi, Bratulić, Behrmann, Fischer, Brox, ICML 2024)."""  # noqa: E501

from jaxlab.report import Paper

PAPER = Paper(
    id="eureka",
    title="Eureka-Moments in Transformers: Multi-Step Tasks Reveal Softmax Induced "
    "Optimization Problems",
    authors="Hoffmann, Schrodi, Bratulić, Behrmann, Fischer, Brox",
    venue="ICML 2024",
    code="https://github.com/boschresearch/eurekaMoments",
    summary="softmax attention makes ViTs plateau on multi-step tasks; NormSoftmax and heat "
    "treatment reach 95 % of the baseline's accuracy in 20 % of the steps and solve the "
    "task more often",
)
