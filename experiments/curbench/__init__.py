"""CurBench: Curriculum Learning Benchmark (Zhou et al., ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="curbench",
    title="CurBench: Curriculum Learning Benchmark",
    authors="Zhou, Pan, Wang, Chen, Li, Huang, Xiong, Xiong, Xu, et al.",
    venue="ICML 2024",
    code="https://github.com/THUMNLab/CurBench",
    summary="one five-hook protocol for 15 curricula; they help mostly under label noise, "
            "no method wins everywhere, and the meta-gradient ones cost several times more",
)
