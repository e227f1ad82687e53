from jaxlab.report import Paper

PAPER = Paper(
    id="toy_paper",
    title="Toy paper",
    authors="A. Author",
    code="https://example.org",
    summary="toys work",
)
