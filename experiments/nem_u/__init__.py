"""Finding NEM-U: Explaining unsupervised representation learning through neural network
generated explanation masks (Møller, Igel, Wickstrøm, Sporring, Jenssen, Ibragimov, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="nem_u",
    title="Finding NEM-U: Explaining unsupervised representation learning through neural "
    "network generated explanation masks",
    authors="Møller, Igel, Wickstrøm, Sporring, Jenssen, Ibragimov",
    venue="ICML 2024",
    code="https://github.com/baerminator/NEM_T",
    summary="A U-Net masking network on a frozen representation model explains embeddings "
    "faster than sampling-based explainers (RELAX) while keeping their locality.",
)
