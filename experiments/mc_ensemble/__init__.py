"""Out-of-Distribution Detection via Deep Multi-Comprehension Ensemble (Xu et al., ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="mc_ensemble",
    title="Out-of-Distribution Detection via Deep Multi-Comprehension Ensemble",
    authors="Xu, Yu, Xu, Inkawhich, Chen",
    venue="ICML 2024",
    code="",
    summary="members trained on different tasks (CE, SupCon, SimCLR) are less coupled than "
    "seed ensembles and detect OOD inputs better than a Deep Ensemble or a wider model",
)
