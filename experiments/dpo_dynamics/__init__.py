"""Understanding the Learning Dynamics of Alignment with Human Feedback (Im, Li, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="dpo_dynamics",
    title="Understanding the Learning Dynamics of Alignment with Human Feedback",
    authors="Im, Li",
    venue="ICML 2024",
    code="",
    summary="DPO learns behaviours with more distinguishable preference data first and "
    "faster; the margin direction grows linearly early on",
)
