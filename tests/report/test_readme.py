"""The README's results block is exactly what `jaxlab report` generates from the committed
per-experiment results, and those results' claims are the registered ones."""

from pathlib import Path

from jaxlab.report import readme

REPO = Path(__file__).resolve().parents[2]


def test_readme_results_block_matches_committed_results():
    results = readme.load_results(REPO / "docs" / "results" / "quick")
    text = (REPO / "README.md").read_text()
    expected = readme.replace_block(text, readme.results_block(results, "quick"), "quick")
    assert text == expected, "README results block is stale: run `jaxlab report`"


def test_committed_results_have_the_registered_claims():
    results = readme.load_results(REPO / "docs" / "results" / "quick")
    assert readme.stale_claims(results) == []


def test_replace_block_and_missing_markers():
    start, end = readme.markers("quick")
    text = f"head\n{start}\nold\n{end}\ntail"
    assert readme.replace_block(text, "new", "quick") == f"head\n{start}\nnew\n{end}\ntail"
    try:
        readme.replace_block("no markers", "x", "quick")
    except ValueError as error:
        assert "markers" in str(error)
    else:
        raise AssertionError("missing markers must raise")
