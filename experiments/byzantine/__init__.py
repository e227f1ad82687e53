"""Fault Tolerant ML: Efficient Meta-Aggregation and Synchronous Training (Dahan, Levy,
ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="byzantine",
    title="Fault Tolerant ML: Efficient Meta-Aggregation and Synchronous Training",
    authors="Dahan, Levy",
    code="https://github.com/dahan198/synchronous-fault-tolerant-ml",
    summary="CTMA makes any robust aggregator robust at a fraction of NNM's cost, and μ²-SGD "
    "is robust and insensitive to the learning rate",
)
