"""Method docs agree with the committed results: every experiment's table is generated."""

from pathlib import Path

from jaxlab.report import docblocks, readme, registry

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def test_render_rewrites_only_marked_blocks():
    rows = [
        {
            "claim": "c",
            "paper": 1.0,
            "ours_mean": 2.0,
            "ours_std": 0.5,
            "num_seeds": 3,
            "baseline": None,
            "unit": "%",
            "verdict": "supports",
        }
    ]
    text = "intro 7.5\n<!-- results:e -->\nold 9.9\n<!-- /results:e -->\nafter 3.3\n"
    out = docblocks.render(text, {"e": rows})
    assert out.startswith("intro 7.5\n<!-- results:e -->\n") and out.endswith("after 3.3\n")
    assert "old 9.9" not in out and "| c | matches | 1% | 2 ± 0.5% (n=3) | — | supports |" in out
    assert docblocks.render(out, {"e": rows}) == out
    assert "No committed" in docblocks.render(text, {})


def test_docs_blocks_match_committed_results():
    results = readme.load_results(DOCS / "results" / "quick")
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text()
        assert docblocks.render(text, results) == text, (
            f"{path.name}: a results block differs from docs/results/quick; run `jaxlab report`"
        )


def test_every_experiment_has_one_block():
    found: dict[str, list[str]] = {}
    for path in sorted(DOCS.glob("*.md")):
        for name in docblocks.blocks_in(path.read_text()):
            found.setdefault(name, []).append(path.name)
    registered = set(registry.discover())
    assert {n: f for n, f in found.items() if len(f) > 1} == {}
    assert sorted(registered - set(found)) == [], "experiments without a results block"
    assert sorted(set(found) - registered) == [], "blocks for unregistered experiments"
