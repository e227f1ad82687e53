"""``make_aggregator`` (names → rules) against numpy references of every base and meta rule."""

import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.robust import aggregators
from jaxlab.robust.compose import (
    BASES,
    METAS,
    base_aggregator,
    default_bucket_size,
    make_aggregator,
)

M, F, D = 9, 2, 5


def rows(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(M, D))
    x[-F:] += 20.0 * rng.normal(size=(F, D))  # the Byzantine rows are far away
    return x.astype(np.float32)


def np_base(name, x, f):
    if name == "mean":
        return x.mean(0)
    if name == "cwmed":
        return np.median(x, 0)
    if name == "cwtm":
        return np.sort(x, 0)[f : len(x) - f].mean(0)
    if name == "krum":
        d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
        np.fill_diagonal(d2, np.inf)
        scores = np.sort(d2, 1)[:, : len(x) - f - 1].sum(1)
        return x[np.argmin(scores)]
    raise ValueError(name)


def np_nnm(x, f, base):
    d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    mixed = np.stack(
        [x[np.argsort(d2[i], kind="stable")[: len(x) - f]].mean(0) for i in range(len(x))]
    )
    return base(mixed)


def np_ctma(x, f, base):
    center = base(x)
    kept = np.argsort(((x - center) ** 2).sum(1), kind="stable")[: len(x) - f]
    return x[kept].mean(0)


def np_bucketing(x, s, base, key):
    perm = np.asarray(jax.random.permutation(key, len(x)))
    return base(np.stack([x[perm[k : k + s]].mean(0) for k in range(0, len(x), s)]))


NP_BASES = ("mean", "cwmed", "cwtm", "krum")  # gm: a smoothed Weiszfeld, checked below


@pytest.mark.parametrize("base", NP_BASES)
@pytest.mark.parametrize("meta", METAS)
def test_every_cell_matches_numpy(base, meta):
    x = rows(1)
    key = jax.random.key(3)
    agg = jax.jit(make_aggregator(base, meta, M, F, bucket_size=3 if meta == "bucketing" else None))
    out = agg(jnp.asarray(x), key)
    chex.assert_shape(out, (D,))
    x64 = x.astype(np.float64)
    if meta == "plain":
        ref = np_base(base, x64, F)
    elif meta == "nnm":
        ref = np_nnm(x64, F, lambda v: np_base(base, v, F))
    elif meta == "ctma":
        ref = np_ctma(x64, F, lambda v: np_base(base, v, F))
    else:  # 3 buckets of 3 tolerate min(f, (3 − 1) // 2) = 1 bad bucket
        ref = np_bucketing(x64, 3, lambda v: np_base(base, v, 1), key)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_geometric_median_cell_is_the_smoothed_weiszfeld():
    x = rows(2)
    out = make_aggregator("gm", "plain", M, F, gm_iters=50, gm_smoothing=1e-6)(jnp.asarray(x), None)
    # The geometric median minimises the sum of distances: compare the objective.
    objective = lambda z: np.linalg.norm(x - z, axis=1).sum()  # noqa: E731
    best = min(objective(np.asarray(out) + 1e-3 * e) for e in np.eye(D))
    assert objective(np.asarray(out)) <= best + 1e-4
    default = make_aggregator("gm", "plain", M, F)(jnp.asarray(x), None)
    np.testing.assert_allclose(
        default, aggregators.geometric_median(jnp.asarray(x), num_iters=3, smoothing=0.1), rtol=1e-6
    )


def test_robust_cells_ignore_the_byzantine_rows():
    x = rows(4)
    honest_mean = x[:-F].mean(0)
    cells = [(b, m) for b in ("cwmed", "cwtm", "gm", "krum") for m in ("plain", "nnm", "ctma")]
    outs = jax.jit(lambda v: [make_aggregator(b, m, M, F)(v, None) for b, m in cells])(x)
    for cell, out in zip(cells, outs, strict=True):
        assert np.linalg.norm(out - honest_mean) < 2.0, cell
    assert np.linalg.norm(make_aggregator("mean", "plain", M, F)(x, None) - honest_mean) > 2.0


def test_default_bucket_size():
    assert default_bucket_size(17, 8) == 1  # the reference code's s = ⌊m / (2f)⌋
    assert default_bucket_size(64, 8) == 4
    assert default_bucket_size(5, 0) == 1
    for m, f in ((17, 8), (64, 8), (10, 1)):
        s = default_bucket_size(m, f)
        assert s == max(1, math.floor(m / (2 * f)))


def test_vmap_over_rows_and_keys():
    xs = jnp.stack([jnp.asarray(rows(s)) for s in range(3)])
    keys = jax.random.split(jax.random.key(0), 3)
    agg = jax.jit(make_aggregator("cwtm", "bucketing", M, F, bucket_size=3))
    batched = jax.vmap(agg)(xs, keys)
    chex.assert_shape(batched, (3, D))
    for i in range(3):
        np.testing.assert_allclose(batched[i], agg(xs[i], keys[i]), rtol=1e-6)


def test_bad_names():
    assert set(BASES) == {"mean", "cwmed", "cwtm", "gm", "krum"}
    with pytest.raises(ValueError, match="base aggregator"):
        make_aggregator("median", "plain", M, F)
    with pytest.raises(ValueError, match="meta-aggregator"):
        make_aggregator("cwtm", "trim", M, F)
    with pytest.raises(ValueError, match="base aggregator"):
        base_aggregator("avg", F)
