"""MCL: centrality, schedule and sampling against numpy loops on fixed inputs."""

import math

import jax
import numpy as np
import pytest

from jaxlab.curriculum import EpochInputs, mcl, mcl_centrality, mcl_sample
from jaxlab.curriculum.mcl import mcl_schedule

FEATURES = np.array(
    [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.9, 0.05, 0.05], [0.0, 0.5, 0.5]]
)


def reference_centrality(f, alpha, beta, gamma):
    f = np.clip(np.array(f, float), 1e-10, 1e10)
    n, d = f.shape
    top = [max(f[i][j] for i in range(n)) for j in range(d)]
    g = [[0.0] * d for _ in range(n)]
    for i in range(n):
        for j in range(d):
            v = f[i][j] / top[j]
            s = 1 / (1 + (v ** (1 / math.log2(beta)) - 1) ** alpha) if v > 1e-30 else 0.0
            g[i][j] = s**gamma * top[j]
    gram = [[sum(g[i][k] * g[j][k] for k in range(d)) for j in range(n)] for i in range(n)]
    c = [sum(row) for row in gram]
    return np.array(c) / sum(c)


@pytest.mark.parametrize("alpha,beta,gamma", [(2.0, 0.75, 0.9), (1.0, 0.5, 1.0), (3.0, 0.25, 0.5)])
def test_centrality_matches_gram_loop(alpha, beta, gamma):
    np.testing.assert_allclose(
        mcl_centrality(FEATURES, alpha, beta, gamma),
        reference_centrality(FEATURES, alpha, beta, gamma),
        rtol=1e-10,
    )


def test_schedule_matches_episode_loop():
    n, epochs, s = 1000, 200, 20
    size, lam = 0.1 * n, 1.0
    delta = int((n - size) / int(epochs / s))
    for e in range(epochs):
        if e % s == 0 and e:
            lam, size = max(lam * 0.9, 0.2), min(size + delta, n)
        got = mcl_schedule(e, n, epochs, s, 1.0, 0.2, 0.1, 0.1)
        assert got[0] == int(size) and got[1] == pytest.approx(lam)


def test_sampling_frequencies_follow_scores():
    losses, cent = np.array([1.0, 0.0, 3.0, 0.5]), np.array([0.25, 0.25, 0.25, 0.25])
    score = losses + 2.0 * cent
    draws = np.array([mcl_sample(losses, cent, 1, 2.0, jax.random.key(i))[0] for i in range(4000)])
    freq = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(freq, score / score.sum(), atol=0.03)
    chosen = mcl_sample(losses, cent, 3, 2.0, jax.random.key(0))
    assert len(set(chosen.tolist())) == 3
    with pytest.raises(ValueError, match="size"):
        mcl_sample(losses, cent, 5, 1.0, jax.random.key(0))


def test_hook_warmup_then_growing_subsets():
    c = mcl(schedule_epochs=2, warm_epochs=2, initial_size=0.2)
    n = 50
    state = c.model_prepare(c.data_prepare(n, 3, jax.random.key(0)), None, 8)
    rng = np.random.default_rng(1)
    sizes = []
    for e in range(8):
        logits = rng.normal(size=(n, 3))
        inputs = EpochInputs(np.zeros(n, int), rng.uniform(size=n), logits)
        old = np.asarray(state.extra["centrality"]).copy()
        state = c.data_curriculum(state, e, inputs)
        if e % 2:  # centralities change only at an episode's start
            np.testing.assert_array_equal(state.extra["centrality"], old)
        sizes.append(int(state.weights.sum()))
    assert sizes == [50, 50, 20, 20, 30, 30, 40, 40]
    with pytest.raises(ValueError, match="logits"):
        c.data_curriculum(state, 0, EpochInputs(np.zeros(n, int)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="features"):
        mcl_centrality(np.zeros(3))
    with pytest.raises(ValueError, match="beta"):
        mcl_centrality(FEATURES, beta=1.5)
    with pytest.raises(ValueError, match="schedule_epochs"):
        mcl(schedule_epochs=0)
    with pytest.raises(ValueError, match="initial_size"):
        mcl(initial_size=0.0)
