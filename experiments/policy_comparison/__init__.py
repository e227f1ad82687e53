"""Predictive Performance Comparison of Decision Policies Under Confounding (ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="policy_comparison",
    title="Predictive Performance Comparison of Decision Policies Under Confounding",
    authors="Guerdan, Coston, Holstein, Wu",
    venue="ICML 2024",
    code="https://github.com/lguerdan/policy_comparison_under_confounding",
    summary="δ-regret intervals, where the cells on which the policies agree cancel, are "
    "never wider than difference-of-bounds intervals and can decide which policy is better",
)
