"""Aggregators against independent numpy references, robustness bounds, jit/vmap/grad, errors."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab import robust
from jaxlab.robust import _stack

# ----------------------------------------------------------------------------- references


def np_median(x):
    return np.median(x, axis=0)


def np_trimmed_mean(x, f):
    s = np.sort(x, axis=0)
    return s[f : x.shape[0] - f].mean(axis=0)


def np_weiszfeld(x, iters, nu):
    z = np.zeros(x.shape[1])
    for _ in range(iters):
        w = np.array([1.0 / max(nu, np.linalg.norm(xi - z)) for xi in x])
        z = (w[:, None] * x).sum(0) / w.sum()
    return z


def np_krum_scores(x, f):
    m = x.shape[0]
    scores = []
    for i in range(m):
        d = sorted(float(np.sum((x[i] - x[j]) ** 2)) for j in range(m) if j != i)
        scores.append(sum(d[: m - f - 1]))
    return np.array(scores)


def np_krum(x, f):
    return x[int(np.argmin(np_krum_scores(x, f)))]


def np_multi_krum(x, f, q):
    order = np.argsort(np_krum_scores(x, f), kind="stable")[:q]
    return x[order].mean(0)


def np_centered_clipping(x, c, tau, iters):
    v = c.copy()
    for _ in range(iters):
        acc = np.zeros_like(v)
        for xi in x:
            diff = xi - v
            n = np.linalg.norm(diff)
            acc += diff * min(1.0, tau / n) if n > 0 else diff
        v = v + acc / x.shape[0]
    return v


def planted(seed, m=17, f=8, d=12, scale=1e3):
    """Honest Gaussian rows plus ``f`` far outliers in random rows; returns (x, honest_mask)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(m, d))
    bad = rng.choice(m, f, replace=False)
    x[bad] = scale * rng.normal(size=(f, d)) + scale
    mask = np.ones(m, bool)
    mask[bad] = False
    return x, mask


# ----------------------------------------------------------------------------- values


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 16, 17, 18])
def test_coordinate_median_matches_numpy(m):
    x = np.random.default_rng(m).normal(size=(m, 33))
    np.testing.assert_allclose(robust.coordinate_median(x), np_median(x), rtol=1e-6, atol=1e-6)


def test_coordinate_median_large_m_falls_back_to_sort():
    x = np.random.default_rng(0).normal(size=(70, 9))
    np.testing.assert_allclose(robust.coordinate_median(x), np_median(x), rtol=1e-6)


@pytest.mark.parametrize("m,f", [(17, 8), (17, 0), (5, 2), (3, 1), (4, 1), (64, 31)])
def test_trimmed_mean_matches_numpy(m, f):
    x, _ = planted(m + f, m=m, f=f)
    np.testing.assert_allclose(robust.trimmed_mean(x, f), np_trimmed_mean(x, f), rtol=1e-5)


def test_coordinatewise_rules_with_ties():
    x = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 0.0], [3.0, 2.0], [1.0, 5.0]])
    np.testing.assert_allclose(robust.coordinate_median(x), np_median(x))
    np.testing.assert_allclose(robust.trimmed_mean(x, 2), np_trimmed_mean(x, 2))


@pytest.mark.parametrize("iters,nu", [(3, 0.1), (10, 1e-3)])
def test_geometric_median_matches_numpy(iters, nu):
    x, _ = planted(1, d=5, scale=10.0)
    np.testing.assert_allclose(
        robust.geometric_median(x, num_iters=iters, smoothing=nu),
        np_weiszfeld(x, iters, nu),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize("m,f", [(17, 8), (5, 2), (3, 1), (9, 0)])
def test_krum_and_multi_krum_match_numpy(m, f):
    x, _ = planted(m, m=m, f=f, d=6, scale=5.0)
    np.testing.assert_allclose(robust.krum(x, f), np_krum(x, f), rtol=1e-6)
    for q in (1, m - f, m):
        np.testing.assert_allclose(
            robust.multi_krum(x, f, q), np_multi_krum(x, f, q), rtol=1e-5, atol=1e-6
        )


def test_blocked_gram_and_krum_on_long_vectors():
    # d above one column block (40 rows × 30 000 columns: three blocks of 13 107).
    x, _ = planted(3, m=40, f=12, d=30_000, scale=5.0)
    x64 = np.asarray(x, np.float64)
    np.testing.assert_allclose(
        _stack.gram_matrix(jnp.asarray(x)), x64 @ x64.T, rtol=1e-4, atol=1e-2
    )
    np.testing.assert_allclose(robust.krum(x, 12), np_krum(x, 12), rtol=1e-6)


def test_krum_with_duplicate_rows():
    x = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [0.5, 0.5]])
    np.testing.assert_allclose(robust.krum(x, 1), np_krum(x, 1))


@pytest.mark.parametrize("iters", [1, 3])
def test_centered_clipping_matches_numpy(iters):
    x, _ = planted(2, d=4, scale=20.0)
    c = np.random.default_rng(3).normal(size=4)
    np.testing.assert_allclose(
        robust.centered_clipping(x, c, radius=2.0, num_iters=iters),
        np_centered_clipping(x, c, 2.0, iters),
        rtol=1e-4,
        atol=1e-5,
    )


def test_mean_matches_numpy():
    x = np.random.default_rng(0).normal(size=(7, 3))
    np.testing.assert_allclose(robust.mean(x), x.mean(0), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- robustness

ROBUST = {
    "cwmed": robust.coordinate_median,
    "cwtm": functools.partial(robust.trimmed_mean, num_byzantine=8),
    "gm": functools.partial(robust.geometric_median, num_iters=20, smoothing=1e-3),
    "krum": functools.partial(robust.krum, num_byzantine=8),
    "multikrum": functools.partial(robust.multi_krum, num_byzantine=8),
}


@pytest.mark.parametrize("name", sorted(ROBUST))
@pytest.mark.parametrize("scale", [1e2, 1e6])
def test_robust_rules_stay_near_honest_mean(name, scale):
    x, honest = planted(4, scale=scale)
    honest_rows = x[honest]
    spread = np.max(np.linalg.norm(honest_rows - honest_rows.mean(0), axis=1))
    err = np.linalg.norm(np.asarray(ROBUST[name](x)) - honest_rows.mean(0))
    assert err <= 2.0 * spread, (name, err, spread)


def test_mean_is_not_robust():
    x, honest = planted(4, scale=1e6)
    assert np.linalg.norm(np.asarray(robust.mean(x)) - x[honest].mean(0)) > 1e5


@pytest.mark.parametrize("name", sorted(ROBUST))
@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
def test_non_finite_rows_are_outliers(name, bad_value):
    x, honest = planted(5, scale=1.0)
    x = x.copy()
    x[~honest, ::3] = bad_value
    out = np.asarray(ROBUST[name](x))
    assert np.all(np.isfinite(out)), name
    spread = np.max(np.linalg.norm(x[honest] - x[honest].mean(0), axis=1))
    assert np.linalg.norm(out - x[honest].mean(0)) <= 2.0 * spread


def test_centered_clipping_ignores_non_finite_rows():
    x = np.array([[1.0, 1.0], [1.0, 1.0], [np.nan, np.inf]])
    out = np.asarray(robust.centered_clipping(x, radius=10.0))
    np.testing.assert_allclose(out, [2.0 / 3.0, 2.0 / 3.0], rtol=1e-6)


@pytest.mark.parametrize("m", [5, 70])  # m > 64: the masked matrix-vector product path
def test_centered_clipping_with_non_finite_rows_matches_numpy_on_the_finite_ones(m):
    x, _ = planted(4, m=m, f=2, d=6, scale=20.0)
    c = np.random.default_rng(5).normal(size=6)
    bad = x.copy()
    bad[1, 2], bad[-1, 0] = np.nan, -np.inf
    finite = np.delete(x, [1, m - 1], axis=0)
    # np_centered_clipping averages over its rows: rescale to the m rows of the jax call.
    v = c.copy()
    for _ in range(2):
        v = v + (np_centered_clipping(finite, v, 3.0, 1) - v) * (m - 2) / m
    np.testing.assert_allclose(
        robust.centered_clipping(bad, c, radius=3.0, num_iters=2), v, rtol=1e-4, atol=1e-5
    )


def test_mean_propagates_non_finite():
    x = np.array([[1.0], [np.nan]])
    assert np.isnan(np.asarray(robust.mean(x))).all()


# ----------------------------------------------------------------------------- transforms

ALL = {
    "mean": robust.mean,
    **ROBUST,
    "cc": functools.partial(robust.centered_clipping, radius=1.0, num_iters=2),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_jit_vmap_and_pytree(name):
    fn = jax.jit(ALL[name])
    x = np.random.default_rng(0).normal(size=(3, 17, 10)).astype(np.float32)
    batched = jax.vmap(fn)(x)
    jitted = jnp.stack([fn(xi) for xi in x])
    np.testing.assert_allclose(batched, jitted, rtol=1e-5, atol=1e-6)
    tree = {"a": x[0, :, :4].reshape(17, 2, 2), "b": x[0, :, 4:]}
    out = fn(tree)
    chex.assert_shape(out["a"], (2, 2))
    chex.assert_shape(out["b"], (6,))
    np.testing.assert_allclose(
        jnp.concatenate([out["a"].reshape(-1), out["b"]]), fn(x[0]), rtol=1e-5, atol=1e-6
    )


def test_no_retrace_for_repeated_shapes():
    import chex

    @jax.jit
    @chex.assert_max_traces(n=1)
    def agg(x):
        return robust.trimmed_mean(x, 8)

    for seed in range(3):
        agg(jnp.asarray(np.random.default_rng(seed).normal(size=(17, 5)), jnp.float32))


@pytest.mark.parametrize("name", ["cwmed", "cwtm", "gm", "multikrum"])
def test_gradients(name):
    x = jnp.asarray(np.random.default_rng(7).normal(size=(17, 4)))
    check_grads(lambda v: jnp.sum(ROBUST[name](v) ** 2), (x,), order=1, modes=["rev"])


def test_gradient_of_median_is_a_selection():
    x = jnp.asarray([[0.0, 5.0], [1.0, 4.0], [2.0, 3.0]])
    g = jax.grad(lambda v: jnp.sum(robust.coordinate_median(v)))(x)
    np.testing.assert_allclose(g, [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "fn", [robust.trimmed_mean, robust.krum, robust.multi_krum], ids=["cwtm", "krum", "mkrum"]
)
@pytest.mark.parametrize("f", [-1, 9, 17, 1.5])
def test_impossible_num_byzantine(fn, f):
    with pytest.raises(ValueError, match="num_byzantine"):
        fn(np.zeros((17, 3)), f)


def test_bad_shapes_and_parameters():
    with pytest.raises(ValueError, match="leading worker axis"):
        robust.coordinate_median(np.float32(1.0))
    with pytest.raises(ValueError, match="at least one worker"):
        robust.mean(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="same leading"):
        robust.mean({"a": np.zeros((3, 2)), "b": np.zeros((4, 2))})
    with pytest.raises(ValueError, match="num_selected"):
        robust.multi_krum(np.zeros((5, 2)), 1, 6)
    with pytest.raises(ValueError, match="smoothing"):
        robust.geometric_median(np.zeros((5, 2)), smoothing=0.0)
    with pytest.raises(ValueError, match="radius"):
        robust.centered_clipping(np.zeros((5, 2)), radius=-1.0)
    with pytest.raises(ValueError, match="center"):
        robust.centered_clipping(np.zeros((5, 2)), center=np.zeros(3))
