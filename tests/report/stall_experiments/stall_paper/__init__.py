from jaxlab.report import Paper

PAPER = Paper(
    id="stall_paper",
    title="Stall paper",
    authors="A. Author",
    code="https://example.org",
    summary="the first run hangs",
)
