"""Causal Discovery with Fewer CI Tests (Shiragur, Zhang, Uhler, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="ccpg",
    title="Causal Discovery with Fewer Conditional Independence Tests",
    authors="Shiragur, Zhang, Uhler",
    venue="ICML 2024",
    code="https://github.com/uhlerlab/CCPG",
    summary="a causally consistent partition graph (the DAG when identifiable) is learned "
    "with O(n^5) CI tests, where PC needs exponentially many",
)
