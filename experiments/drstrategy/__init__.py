"""Dr. Strategy: Model-Based Generalist Agents with Strategic Dreaming (Hamed, Kim, Kim, Yoon,
Ahn, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="drstrategy",
    title="Dr. Strategy: Model-Based Generalist Agents with Strategic Dreaming",
    authors="Hamed, Kim, Kim, Yoon, Ahn",
    venue="ICML 2024",
    code="https://github.com/ahn-ml/drstrategy",
    summary="latent landmarks let a model-based agent go to the landmark nearest a goal and "
    "then achieve it locally, beating flat goal-conditioned agents (LEXA) on navigation",
)
