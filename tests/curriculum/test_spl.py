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


@pytest.mark.parametrize("weighting", ["hard", "linear", "logarithmic", "logistic",
                                       "polynomial"])
@pytest.mark.parametrize("rate", [0.1, 0.35, 0.7])
def test_weights_match_reference(weighting, rate):
    got = np.asarray(spl_weights(LOSSES, rate, weighting, t=3.0))
    np.testing.assert_allclose(got, numpy_reference(LOSSES, rate, weighting, 3.0),
                               rtol=1e-5, atol=1e-6)


def test_hard_selects_exactly_ceil_rate_n_with_ties():
    w = np.asarray(spl_weights(np.zeros(7), 0.5))
    assert w.sum() == 4 and w[:4].sum() == 4


def test_pacing_functions():
    assert pacing(0, 0.2, 10) == pytest.approx(0.2)
    assert pacing(5, 0.2, 10) == pytest.approx(0.6)
    assert pacing(5, 0.25, 10, "geom") == pytest.approx(0.5)
    assert pacing(5, 0.2, 10, "root", p=2) == pytest.approx(math.sqrt(0.04 + 0.96 * 0.5))
    assert pacing(30, 0.2, 10, "geom") == 1.0


def test_curriculum_hook_grows_the_subset():
    c = spl(start_rate=0.2, grow_epochs=4)
    s = CurriculumState(weights=np.ones(10, np.float32))
    sizes = [int(c.data_curriculum(s, e, LOSSES).weights.sum()) for e in range(5)]
    assert sizes == [4, 6, 8, 10, 10]


def test_bad_inputs():
    with pytest.raises(ValueError, match="rate"):
        spl_weights(LOSSES, 0.0)
    with pytest.raises(ValueError, match="start_rate"):
        spl(start_rate=0.0)
    with pytest.raises(ValueError, match="weighting"):
        spl_weights(LOSSES, 0.5, "cubic")
    with pytest.raises(ValueError, match="losses"):
        spl_weights(np.zeros((2, 2)), 0.5)
