"""How Do Nonlinear Transformers Learn and Generalize in In-Context Learning? (Li, Wang, Lu, Cui, Chen, ICML 2024)."""  # noqa: E501

from jaxlab.report import Paper

PAPER = Paper(
    id="icl_pruning",
    title="How Do Nonlinear Transformers Learn and Generalize in In-Context Learning?",
    authors="Li, Wang, Lu, Cui, Chen",
    venue="ICML 2024",
    code="",
    summary="a one-layer nonlinear transformer trained on some binary pattern tasks learns "
    "them in context, generalises to unseen and OOD tasks, and survives magnitude pruning",
)
