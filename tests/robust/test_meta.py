"""NNM, bucketing and CTMA against their definitions written in numpy."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import robust


def np_cwtm(x, f):
    s = np.sort(x, axis=0)
    return s[f : x.shape[0] - f].mean(axis=0)


def np_ctma(x, f, base):
    x0 = base(x)
    r = np.linalg.norm(x - x0, axis=1)
    kept = np.argsort(r, kind="stable")[: x.shape[0] - f]
    return x0 + (x[kept] - x0).sum(0) / (x.shape[0] - f)


def np_nnm(x, f, base):
    m = x.shape[0]
    mixed = []
    for i in range(m):
        d = np.array([np.sum((x[i] - x[j]) ** 2) for j in range(m)])
        mixed.append(x[np.argsort(d, kind="stable")[: m - f]].mean(0))
    return base(np.array(mixed))


def planted(seed, m=17, f=8, d=10, scale=1e3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(m, d))
    bad = rng.choice(m, f, replace=False)
    x[bad] = scale * (1.0 + rng.normal(size=(f, d)))
    honest = np.ones(m, bool)
    honest[bad] = False
    return x, honest


BASES = {
    "cwmed": (robust.coordinate_median, lambda x: np.median(x, axis=0)),
    "cwtm": (functools.partial(robust.trimmed_mean, num_byzantine=8), lambda x: np_cwtm(x, 8)),
    "mean": (robust.mean, lambda x: x.mean(0)),
}


@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_ctma_equals_definition(base, scale):
    jax_base, np_base = BASES[base]
    x, _ = planted(0, scale=scale)
    np.testing.assert_allclose(
        robust.ctma(x, 8, jax_base), np_ctma(x, 8, np_base), rtol=1e-5, atol=1e-5
    )


def test_ctma_corner_cases():
    # m - f = 1: CTMA returns the single vector nearest to the base output.
    x = np.array([[0.0], [10.0]])
    np.testing.assert_allclose(robust.ctma(x, 0, robust.mean), [5.0])
    x = np.array([[0.0], [1.0], [10.0]])
    np.testing.assert_allclose(robust.ctma(x, 1, robust.coordinate_median), [0.5])
    # ties in the distance are broken by the lowest index (stable)
    x = np.array([[-1.0], [1.0], [0.0], [3.0], [-3.0]])
    np.testing.assert_allclose(robust.ctma(x, 2, robust.coordinate_median), [0.0])
    x = np.array([[-1.0], [1.0], [0.0]])
    np.testing.assert_allclose(robust.ctma(x, 1, robust.coordinate_median), [-0.5])


def test_nnm_matches_numpy():
    jax_base, np_base = BASES["cwtm"]
    x, _ = planted(1, scale=5.0)
    np.testing.assert_allclose(robust.nnm(x, 8, jax_base), np_nnm(x, 8, np_base), rtol=1e-4)


def test_bucketing_matches_numpy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        x, _ = planted(2, d=3)
        key = jax.random.key(3)
        perm = np.asarray(jax.random.permutation(key, 17))
        for s in (1, 2, 3, 17):
            shuffled = x[perm]
            buckets = np.array([shuffled[i : i + s].mean(0) for i in range(0, 17, s)])
            weights = np.arange(1.0, len(buckets) + 1)  # a base that sees every bucket mean
            got = robust.bucketing(x, s, lambda b, w=weights: jnp.asarray(w) @ b, key)
            np.testing.assert_allclose(got, weights @ buckets, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("base", ["cwmed", "cwtm"])
def test_meta_aggregators_are_robust(base):
    jax_base, _ = BASES[base]
    x, honest = planted(4, scale=1e6)
    target = x[honest].mean(0)
    spread = np.max(np.linalg.norm(x[honest] - target, axis=1))
    for out in (robust.ctma(x, 8, jax_base), robust.nnm(x, 8, jax_base)):
        assert np.linalg.norm(np.asarray(out) - target) <= spread


def test_ctma_of_mean_is_robust_to_moderate_outliers():
    # CTMA on top of the (non-robust) mean still trims the far rows once they dominate r_i.
    x, honest = planted(5, f=4, scale=1e3)
    out = np.asarray(robust.ctma(x, 4, robust.mean))
    np.testing.assert_allclose(out, x[honest].mean(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad_value", [np.nan, np.inf])
def test_meta_aggregators_ignore_non_finite_rows(bad_value):
    x, honest = planted(6, scale=1.0)
    x[~honest, 1] = bad_value
    base = BASES["cwtm"][0]
    for out in (robust.ctma(x, 8, base), robust.nnm(x, 8, base)):
        out = np.asarray(out)
        assert np.all(np.isfinite(out))
    np.testing.assert_allclose(robust.ctma(x, 8, base), x[honest].mean(0), rtol=1e-5)


def test_jit_vmap_grad_and_pytree():
    base = robust.mean  # the transforms are those of the meta-aggregator, whatever the base
    x = np.random.default_rng(0).normal(size=(2, 17, 6)).astype(np.float32)
    for fn in (
        jax.jit(functools.partial(robust.ctma, num_byzantine=8, base=base)),
        jax.jit(functools.partial(robust.nnm, num_byzantine=8, base=base)),
    ):
        np.testing.assert_allclose(
            jax.vmap(fn)(x), jnp.stack([fn(xi) for xi in x]), rtol=1e-5, atol=1e-6
        )
        out = fn({"w": x[0, :, :2], "b": x[0, :, 2:]})
        np.testing.assert_allclose(jnp.concatenate([out["w"], out["b"]]), fn(x[0]), rtol=1e-6)
        g = jax.jit(jax.grad(lambda v, fn=fn: jnp.sum(fn(v))))(jnp.asarray(x[0]))
        np.testing.assert_allclose(jnp.sum(g), 6.0, rtol=1e-4)  # an average of rows
    keys = jax.random.split(jax.random.key(0), 2)
    out = jax.vmap(lambda xi, k: robust.bucketing(xi, 1, base_mean, k))(x, keys)
    np.testing.assert_allclose(out, x.mean(1), rtol=1e-5, atol=1e-6)


def base_mean(b):
    return robust.mean(b)


def test_errors():
    x = np.zeros((17, 3))
    with pytest.raises(ValueError, match="num_byzantine"):
        robust.ctma(x, 9, robust.mean)
    with pytest.raises(ValueError, match="num_byzantine"):
        robust.nnm(x, -1, robust.mean)
    for s in (0, 18, 2.5):
        with pytest.raises(ValueError, match="bucket_size"):
            robust.bucketing(x, s, robust.mean, jax.random.key(0))


@pytest.mark.parametrize("d", [1, 2, 9001])
def test_squared_distances_to_computed_point_equal_numpy(d):
    from jaxlab.robust import _stack

    rng = np.random.default_rng(d)
    x = rng.normal(size=(5, d)).astype(np.float32)
    point = rng.normal(size=d).astype(np.float32)
    x[3, d // 2] = np.nan
    x[4, -1] = np.inf
    expected = np.sum((x.astype(np.float64) - point) ** 2, axis=1)
    out = _stack.squared_distances_to_computed_point(jnp.asarray(x), jnp.asarray(point))
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    # Under vmap (the loop's predicate is then batched) and jit, with a computed point.
    batched = jax.jit(jax.vmap(
        lambda a: _stack.squared_distances_to_computed_point(a, robust.coordinate_median(a))
    ))(jnp.stack([x[:3], 2 * x[:3]]))  # fmt: skip
    for k, xk in enumerate([x[:3], 2 * x[:3]]):
        ref = np.sum((xk.astype(np.float64) - np.median(xk, axis=0)) ** 2, axis=1)
        np.testing.assert_allclose(batched[k], ref, rtol=1e-5)
    nan_point = jnp.asarray(point).at[0].set(jnp.nan)
    assert np.all(np.asarray(_stack.squared_distances_to_computed_point(x, nan_point)) == np.inf)


def test_ctma_equals_definition_for_a_long_odd_vector():
    x, _ = planted(1, d=9001, scale=3.0)
    jax_base, np_base = BASES["cwtm"]
    np.testing.assert_allclose(
        robust.ctma(x, 8, jax_base), np_ctma(x, 8, np_base), rtol=1e-5, atol=1e-5
    )
