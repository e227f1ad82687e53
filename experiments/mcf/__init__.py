"""Swallowing the Bitter Pill: Simplified Scalable Conformer Generation (Wang et al., ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="mcf",
    title="Swallowing the Bitter Pill: Simplified Scalable Conformer Generation",
    authors="Wang, Elhag, Jaitly, Susskind, Bautista",
    code="https://github.com/apple/ml-mcf",
    summary="a diffusion model over conformer fields, with no equivariance built in, "
    "generates state-of-the-art molecular conformers",
)
