"""SPL's pacing and weights against a numpy reference on a fixed loss vector."""

import math

import numpy as np
import pytest

from jaxlab.curriculum import CurriculumState, spl, spl_weights
from jaxlab.curriculum.spl import pacing

LOSSES = np.array([0.9, 0.05, 0.4, 1.7, 0.3, 0.6, 0.2, 2.5, 0.1, 0.8], np.float32)


def numpy_reference(losses, rate, weighting, t=2.0):
    k = math.ceil(rate * len(losses))
    easiest = sorted(range(len(losses)), key=lambda i: (losses[i], i))[:k]
    thr = max(losses[i] for i in easiest)
    out = []
    for i, loss in enumerate(losses):
        if weighting == "hard":
            out.append(1.0 if i in easiest else 0.0)
        elif weighting == "linear":
            out.append(1 - loss / thr if loss < thr else 0.0)
        elif weighting == "logarithmic":
            out.append(math.log(loss + 1 - thr) / math.log(1 - thr) if loss < thr else 0.0)
        elif weighting == "logistic":
            out.append((1 + math.exp(-thr)) / (1 + math.exp(loss - thr)))
        elif weighting == "polynomial":
            out.append((1 - loss / thr) ** (1 / (t - 1)) if loss < thr else 0.0)
    return np.array(out)


@pytest.mark.parametrize("weighting", ["hard", "linear", "logarithmic", "logistic", "polynomial"])
@pytest.mark.parametrize("rate", [0.1, 0.35, 0.7])
def test_weights_match_reference(weighting, rate):
    got = np.asarray(spl_weights(LOSSES, rate, weighting, t=3.0))
    np.testing.assert_allclose(
        got, numpy_reference(LOSSES, rate, weighting, 3.0), rtol=1e-5, atol=1e-6
    )


def test_hard_selects_exactly_ceil_rate_n_with_ties():
    w = np.asarray(spl_weights(np.zeros(7), 0.5))
    assert w.sum() == 4 and w[:4].sum() == 4


def test_pacing_functions():
    assert pacing(0, 0.2, 10) == pytest.approx(0.2)
    assert pacing(5, 0.2, 10) == pytest.approx(0.6)
    assert pacing(5, 0.25, 10, "geom") == pytest.approx(0.5)
    assert pacing(5, 0.2, 10, "root", p=2) == pytest.approx(math.sqrt(0.04 + 0.96 * 0.5))
    assert pacing(30, 0.2, 10, "geom") == 1.0


def reference_linear_count(n, epoch, start_rate, grow_epochs):
    """CurBench SPL's sample count, written out: ⌈N · min(1, λ₀ + (1 − λ₀)/E · e)⌉."""
    rate = min(1.0, start_rate + (1.0 - start_rate) / grow_epochs * epoch)
    return int(math.ceil(n * rate))


def test_linear_pacing_count_matches_the_reference_where_rate_n_is_just_above_an_integer():
    # λ₀ = 0.2, E = 15, N = 100 (the spec's defaults): at e = 12 the reference's rate·N is
    # 84.00000000000001, so it keeps 85 samples (a ceil with slack would keep 84).
    assert 100 * (0.2 + 0.8 / 15 * 12) > 84.0
    losses = np.random.default_rng(0).permutation(100).astype(np.float32)
    c = spl(start_rate=0.2, grow_epochs=15)
    s = CurriculumState(weights=np.ones(100, np.float32))
    for epoch in range(1, 17):  # the hook is called with the 0-based epoch, paces at e + 1
        got = int(c.data_curriculum(s, epoch - 1, losses).weights.sum())
        assert got == reference_linear_count(100, epoch, 0.2, 15), epoch
    assert int(c.data_curriculum(s, 11, losses).weights.sum()) == 85


def test_curriculum_hook_grows_the_subset():
    c = spl(start_rate=0.2, grow_epochs=4)
    s = CurriculumState(weights=np.ones(10, np.float32))
    sizes = [int(c.data_curriculum(s, e, LOSSES).weights.sum()) for e in range(5)]
    # 6.000000000000001 samples at e = 2 in the reference's arithmetic: it keeps 7.
    assert sizes == [reference_linear_count(10, e + 1, 0.2, 4) for e in range(5)]
    assert sizes == [4, 7, 8, 10, 10]


def test_bad_inputs():
    with pytest.raises(ValueError, match="rate"):
        spl_weights(LOSSES, 0.0)
    with pytest.raises(ValueError, match="start_rate"):
        spl(start_rate=0.0)
    with pytest.raises(ValueError, match="weighting"):
        spl_weights(LOSSES, 0.5, "cubic")
    with pytest.raises(ValueError, match="losses"):
        spl_weights(np.zeros((2, 2)), 0.5)
