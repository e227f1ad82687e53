"""Graph Adversarial Diffusion Convolution (Liu et al., ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="gadc",
    title="Graph Adversarial Diffusion Convolution",
    authors="Liu, Chen, Fu, Lin, Zitnik, Wu",
    code="https://github.com/SongtaoLiu0823/GADC",
    summary="a min-max graph-signal-denoising diffusion, robust to structure attacks "
    "and feature noise, that also helps on heterophilic graphs",
)
