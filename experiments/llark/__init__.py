"""LLark: A Multimodal Instruction-Following LM for Music (Gardner et al., ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="llark",
    title="LLark: A Multimodal Instruction-Following Language Model for Music",
    authors="Gardner, Durand, Stoller, Bittner",
    code="https://github.com/spotify-research/llark",
    summary="frozen audio-encoder features, spliced into an LLM through one linear projector "
    "and trained on metadata-generated instructions, answer music questions and caption music",
)
