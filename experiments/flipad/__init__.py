"""Single-Model Attribution of Generative Models Through Final-Layer Inversion
(Laszkiewicz, Ricker, Lederer, Fischer, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="flipad",
    title="Single-Model Attribution of Generative Models Through Final-Layer Inversion",
    authors="Laszkiewicz, Ricker, Lederer, Fischer",
    venue="ICML 2024",
    code="https://github.com/MikeLasz/flipad",
    summary="Deep SAD on the generator's inverted penultimate activations (FLIPAD) attributes "
    "samples to one generator, against real data and other generators, better than on raw "
    "inputs.",
)
