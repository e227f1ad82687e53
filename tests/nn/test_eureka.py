"""NormSoftmax, heat treatment and the callable-normaliser attention.

Comparisons with a reference run under ``jax.default_matmul_precision("highest")``
(``docs/precision.md``): a GPU's default TF32 products miss them by ~1e-3.
"""

import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.nn import (
    MultiHeadAttention,
    ViT,
    attention_weights,
    heat_treatment_schedule,
    norm_softmax,
    normalize,
)

from .test_attention import X, hand_attention, np_softmax


def np_norm_softmax(a, gamma, spread="variance", mask=None):
    """The reference code's formula row by row in float64 (torch semantics)."""
    a = np.asarray(a, np.float64)
    out = np.zeros_like(a)
    for idx in np.ndindex(a.shape[:-1]):
        row = a[idx]
        keep = np.ones(row.shape, bool) if mask is None else np.asarray(mask)[idx]
        if not keep.any():
            continue
        r = row[keep]
        s = (
            np.mean((r - r.mean()) ** 2)
            if spread == "variance"
            else (np.std(r, ddof=1) if r.size > 1 else 0.0)
        )
        d = min(gamma, s)
        if d == 0:
            w = np.full(r.shape, 1.0 / r.size)
        else:
            z = r / d
            e = np.exp(z - z.max())
            w = e / e.sum()
        out[idx][keep] = w
    return out


RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 4, 7)) * np.array([0.01, 0.5, 3.0, 30.0])[None, :, None]


@pytest.mark.parametrize("spread", ["variance", "std"])
@pytest.mark.parametrize("gamma", [0.3, 8.0])
def test_matches_numpy_reference(spread, gamma):
    got = norm_softmax(jnp.asarray(A, jnp.float32), gamma, spread=spread)
    np.testing.assert_allclose(got, np_norm_softmax(A, gamma, spread), rtol=2e-5, atol=1e-6)


def test_axis_argument_and_spreads_differ():
    a = jnp.asarray(A, jnp.float32)
    got = norm_softmax(jnp.moveaxis(a, -1, 0), 8.0, axis=0)
    np.testing.assert_allclose(jnp.moveaxis(got, 0, -1), norm_softmax(a, 8.0), rtol=1e-6)
    assert not np.allclose(norm_softmax(a, 8.0), norm_softmax(a, 8.0, spread="std"))


def test_constant_rows_and_extreme_logits_are_finite():
    a = jnp.array([[3.0, 3.0, 3.0, 3.0], [1e4, -1e4, 0.0, 1e4], [0.0, 0.0, 0.0, 1e-30]])
    for spread in ("variance", "std"):
        w = norm_softmax(a, 8.0, spread=spread)
        assert np.isfinite(np.asarray(w)).all()
        np.testing.assert_allclose(w[0], 0.25, rtol=1e-6)
        np.testing.assert_allclose(w[1], [0.5, 0.0, 0.0, 0.5], atol=1e-6)
        np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)
        g = jax.grad(lambda x, s=spread: norm_softmax(x, 8.0, spread=s)[:, 0].sum())(a)
        assert np.isfinite(np.asarray(g)).all()


@pytest.mark.parametrize("spread", ["variance", "std"])
def test_mask_matches_reference_on_kept_entries(spread):
    mask = RNG.random(A.shape) < 0.7
    mask[0, 0] = False  # a fully masked row: zeros
    mask[0, 1] = [True] + [False] * 6  # one kept entry: weight 1
    got = norm_softmax(jnp.asarray(A, jnp.float32), 2.0, spread=spread, where=mask)
    np.testing.assert_allclose(got, np_norm_softmax(A, 2.0, spread, mask), rtol=2e-5, atol=1e-6)
    assert (np.asarray(got)[~mask] == 0).all()


@pytest.mark.parametrize("spread", ["variance", "std"])
def test_gradients_finite_differences(spread):
    a = RNG.normal(size=(2, 5)) * np.array([[0.5], [3.0]])  # one row below γ, one above
    with jax.enable_x64():
        check_grads(
            lambda x: norm_softmax(x, 1.5, spread=spread),
            (jnp.asarray(a),),
            order=1,
            modes=("rev",),
            eps=1e-5,
        )


def test_jit_vmap_and_traced_gamma():
    a = jnp.asarray(A, jnp.float32)
    ref = norm_softmax(a, 2.0)
    np.testing.assert_allclose(jax.jit(norm_softmax)(a, 2.0), ref, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(norm_softmax, (0, None))(a, 2.0), ref, rtol=1e-6)
    gammas = jnp.array([0.3, 2.0, 8.0])
    got = jax.vmap(lambda g: norm_softmax(a, g))(gammas)
    for g, w in zip([0.3, 2.0, 8.0], got, strict=True):
        np.testing.assert_allclose(w, np_norm_softmax(A, g), rtol=2e-5, atol=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="gamma"):
        norm_softmax(jnp.ones(3), 0.0)
    with pytest.raises(ValueError, match="gamma"):
        norm_softmax(jnp.ones(3), jnp.ones(2))
    with pytest.raises(ValueError, match="spread"):
        norm_softmax(jnp.ones(3), 1.0, spread="mad")
    with pytest.raises(ValueError, match="axis"):
        norm_softmax(jnp.ones(3), 1.0, axis=2)
    with pytest.raises(ValueError, match="init_scale"):
        heat_treatment_schedule(0.0, 0.125, 10)
    with pytest.raises(ValueError, match="transition_steps"):
        heat_treatment_schedule(3.0, 0.125, 0)


def test_heat_treatment_schedule_closed_form():
    sched = heat_treatment_schedule(3.0, 0.125, 40)
    for t in [0, 1, 13, 20, 39, 40, 41, 500]:
        want = 0.125 + (3.0 - 0.125) * 0.5 * (1 + math.cos(math.pi * min(t, 40) / 40))
        np.testing.assert_allclose(float(sched(t)), want, rtol=1e-6)
    steps = jnp.arange(50)
    vals = jax.jit(jax.vmap(sched))(steps)
    assert (np.diff(np.asarray(vals)) <= 1e-7).all()


# --- attention with a callable normaliser and an explicit score scale -----------------


def test_callable_normalizer_equals_name():
    layer = MultiHeadAttention(num_heads=2)
    variables = layer.init(jax.random.key(0), X)
    by_name = layer.apply(variables, X)
    by_callable = MultiHeadAttention(
        num_heads=2, normalizer=lambda s, where=None: jax.nn.softmax(s, axis=-1)
    ).apply(variables, X)
    np.testing.assert_allclose(by_callable, by_name, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,spread", [("norm_softmax", "variance"), ("norm_softmax_std", "std")])
def test_norm_softmax_attention_against_hand_written(name, spread):
    with jax.default_matmul_precision("highest"):
        layer = MultiHeadAttention(num_heads=2, normalizer=name)
        variables = layer.init(jax.random.key(1), X)
        got = layer.apply(variables, X)
        depth = X.shape[-1] // 2

        def normalise(scores, mask):  # hand_attention passes q·kᵀ/√d; undo it, γ = √d
            return np_norm_softmax(scores * np.sqrt(depth), np.sqrt(depth), spread)

        want = hand_attention(variables["params"], X, normalise)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_call_time_scale_softmax_and_norm_softmax():
    with jax.default_matmul_precision("highest"):
        q = jnp.asarray(RNG.normal(size=(2, 5, 2, 4)), jnp.float32)
        k = jnp.asarray(RNG.normal(size=(2, 6, 2, 4)), jnp.float32)
        logits = np.einsum("bqhd,bkhd->bhqk", np.asarray(q, np.float64), np.asarray(k, np.float64))
        for scale in (3.0, 0.125):
            got = attention_weights(q, k, "softmax", scale=scale)
            np.testing.assert_allclose(got, np_softmax(scale * logits, None), rtol=1e-5, atol=1e-6)
            got = attention_weights(q, k, "norm_softmax", scale=scale)
            want = np_norm_softmax(logits, 1.0 / scale)  # reference: γ = 1/scale under HT
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
        with pytest.raises(ValueError, match="scale"):
            attention_weights(q, k, scale=jnp.ones(2))


def test_normalize_registry_with_axis():
    s = jnp.asarray(A, jnp.float32)
    got = normalize(jnp.moveaxis(s, -1, 1), "norm_softmax", axis=1, scale=1.0)
    np.testing.assert_allclose(jnp.moveaxis(got, 1, -1), norm_softmax(s, 1.0), rtol=1e-6)
    with pytest.raises(ValueError, match="scale"):
        normalize(s, "norm_softmax")


def test_vit_heat_treatment_scale_is_traced_without_recompiling():
    model = ViT(
        num_classes=3,
        patch_size=4,
        dim=8,
        depth=1,
        num_heads=2,
        mlp_dim=8,
        attention_normalizer="norm_softmax",
    )
    images = jnp.asarray(RNG.normal(size=(2, 8, 8, 1)), jnp.float32)
    variables = model.init(jax.random.key(0), images)
    sched = heat_treatment_schedule(3.0, 0.125, 10)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def forward(step):
        return model.apply(variables, images, attention_scale=sched(step))

    outs = [forward(jnp.asarray(t)) for t in (0, 10)]
    assert not np.allclose(outs[0], outs[1])
    np.testing.assert_allclose(
        outs[1], model.apply(variables, images, attention_scale=0.125), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("spread", ["variance", "std"])
def test_gradients_with_mask_and_gamma(spread):
    # Rows of small and large spread, so γ is the divisor in some rows and s in others.
    a = RNG.normal(size=(3, 6)) * np.array([[0.3], [2.0], [6.0]])
    mask = np.ones((3, 6), bool)
    mask[0, :2] = False
    mask[2, 4:] = False
    with jax.enable_x64():
        check_grads(
            lambda x, g: norm_softmax(x, g, spread=spread, where=mask),
            (jnp.asarray(a), jnp.asarray(1.5)),
            order=1,
            modes=("rev",),
            eps=1e-5,
        )
        g = jax.grad(lambda x: norm_softmax(x, 1.5, spread=spread, where=mask)[:, 0].sum())(
            jnp.asarray(a)
        )
        assert (np.asarray(g)[~mask] == 0).all()
