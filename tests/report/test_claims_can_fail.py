"""Every registered claim can fail: fed synthetic per-seed samples (n = 10, small noise) on
either side of its threshold, the verdict rule returns *supports* on one side and
*contradicts* on the other. Diagnostics are exempt (they are never tallied).

A claim that fails here cannot be decided by the rule whatever the experiment measures
(e.g. "matches" with tolerance 0 and real noise, or a metric compared with itself)."""

import numpy as np
import pytest

from jaxlab.report import registry, verdict
from jaxlab.report.registry import Claim

N, NOISE, GAP = 10, 0.01, 1.0

CLAIMS = [(name, claim) for name, experiment in registry.discover().items()
          for claim in experiment.claims if not claim.diagnostic]


def _both_sides(claim: Claim) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Samples meant to support and to contradict ``claim``: (ours, baseline); exact values
    (no noise) for a deterministic claim."""
    noise = 0.0 if claim.deterministic else NOISE

    def _samples(center: float, seed: int) -> np.ndarray:
        return center + noise * np.random.default_rng(seed).standard_normal(N)

    if claim.kind == "better":
        sign = 1.0 if claim.higher_is_better else -1.0
        base = _samples(1.0, 0)
        return {"supports": (_samples(1.0 + sign * GAP, 1), base),
                "contradicts": (_samples(1.0 - sign * GAP, 2), base)}
    paper, tol = float(claim.paper), float(claim.tolerance or 0.0)
    if claim.kind == "matches":
        spread = 0.0 if claim.deterministic else (tol / 10 if tol > 0 else NOISE)
        return {"supports": (paper + spread * np.random.default_rng(3).standard_normal(N),
                             None),
                "contradicts": (_samples(paper + tol + GAP, 4), None)}
    sign = 1.0 if claim.kind == "at_least" else -1.0
    threshold = paper - sign * tol
    return {"supports": (_samples(threshold + sign * GAP, 5), None),
            "contradicts": (_samples(threshold - sign * GAP, 6), None)}


@pytest.mark.parametrize("name,claim", CLAIMS, ids=[f"{n}:{c.metric}" for n, c in CLAIMS])
def test_claim_can_support_and_contradict(name, claim):
    assert claim.metric != claim.baseline, f"{name}: {claim.name!r} compares a metric with itself"
    for word, (ours, base) in _both_sides(claim).items():
        result = verdict.verdict(claim, ours, base)
        assert result.word == word, (
            f"{name}: {claim.name!r} ({claim.kind}) gives {result.word} on samples meant to "
            f"{word[:-1]} it ({result.reason or result.test})"
        )


def test_the_registry_has_claims():
    assert len(CLAIMS) > 100
