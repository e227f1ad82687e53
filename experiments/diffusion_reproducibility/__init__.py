"""The Emergence of Reproducibility and Consistency in Diffusion Models (Zhang et al., ICML
2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="diffusion_reproducibility",
    title="The Emergence of Reproducibility and Consistency in Diffusion Models",
    authors="Zhang, Zhou, Lu, Guo, Wang, Shen, Qu",
    venue="ICML 2024",
    code="https://github.com/huijieZH/Diffusion-Model-Generalizability",
    summary="Different diffusion models trained on the same data map the same noise to nearly "
    "the same sample, both when they memorize (small n, the optimal denoiser's samples) and "
    "when they generalize (large n), with a dip between.",
)
