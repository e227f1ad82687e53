"""MultiMax: Sparse and Multi-Modal Attention Learning (Zhou, Fritz, Keuper, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="multimax",
    title="MultiMax: Sparse and Multi-Modal Attention Learning",
    authors="Zhou, Fritz, Keuper",
    code="https://github.com/ZhouYuxuanYX/MultiMax",
    summary="a learned piecewise modulator before softmax gives sparse yet multi-modal "
    "attention and better ViTs and LMs",
)
