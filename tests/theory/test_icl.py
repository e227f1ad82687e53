"""ICL data model, the one-layer nonlinear transformer and magnitude pruning."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.theory import (
    ICLParams,
    icl_attention,
    icl_forward,
    icl_hinge_loss,
    init_icl_params,
    magnitude_prune,
    make_icl_patterns,
    sample_icl_prompt,
    weighted_vote,
)

RNG = np.random.default_rng(0)


def np_forward(p, demos, query):
    p = [np.asarray(a, np.float64) for a in p]
    w_q, w_k, w_v, w_o, a = p
    logits = (demos @ w_k.T) @ (w_q @ query)
    attn = np.exp(logits - logits.max())
    attn /= attn.sum()
    mixed = sum(attn[s] * (w_v @ demos[s]) for s in range(len(demos)))
    return float(a @ np.maximum(w_o @ mixed, 0.0)), attn


def test_patterns_orthonormal():
    mu, nu = make_icl_patterns(jax.random.key(0), 7, 3, 4)
    both = np.concatenate([mu, nu])
    np.testing.assert_allclose(both @ both.T, np.eye(7), atol=1e-5)
    with pytest.raises(ValueError, match="dim"):
        make_icl_patterns(jax.random.key(0), 5, 3, 4)


@pytest.mark.parametrize("alpha,length", [(0.3, 10), (1.0, 4)])
def test_prompt_structure(alpha, length):
    mu, nu = make_icl_patterns(jax.random.key(1), 10, 2, 4)
    p = sample_icl_prompt(jax.random.key(2), mu[0], mu[1], nu, alpha, length, kappa=0.5)
    demos, query = np.asarray(p.demos), np.asarray(p.query)
    assert int(p.same.sum()) == int(np.round(alpha * length))
    assert query[-1] == 0
    y = demos[:, -1]
    np.testing.assert_array_equal(y[np.asarray(p.same)], float(p.label))
    np.testing.assert_array_equal(y[~np.asarray(p.same)], -float(p.label))
    # Without noise each input is its label's pattern plus κν with |κ| ≤ 0.5.
    x = np.concatenate([demos[:, :-1], query[None, :-1]])
    labels = np.concatenate([y, [float(p.label)]])
    rel = np.where(labels[:, None] > 0, np.asarray(mu[0]), np.asarray(mu[1]))
    np.testing.assert_allclose(np.einsum("sd,sd->s", x, rel), 1.0, atol=1e-5)
    residual = x - rel
    assert (np.linalg.norm(residual, axis=1) <= 0.5 + 1e-5).all()
    np.testing.assert_allclose(residual @ np.asarray(mu).T, 0.0, atol=1e-5)


def test_forward_attention_and_vote_against_numpy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        params = init_icl_params(jax.random.key(3), 6, 4, init_scale=1.0)
        demos = RNG.normal(size=(5, 6))
        query = RNG.normal(size=6)
        want, attn = np_forward(params, demos, query)
        d32, q32 = jnp.asarray(demos, jnp.float32), jnp.asarray(query, jnp.float32)
        np.testing.assert_allclose(icl_forward(params, d32, q32), want, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(icl_attention(params, d32, q32), attn, rtol=1e-4, atol=1e-7)
        vote = sum(demos[s, -1] * demos[s, :-1] @ query[:-1] for s in range(5))
        np.testing.assert_allclose(weighted_vote(d32, q32), vote, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(params.a), [0.25, 0.25, -0.25, -0.25])
        assert float(icl_hinge_loss(params, d32, q32, 1.0)) == pytest.approx(
            max(0, 1 - want), rel=1e-4
        )


def test_hinge_gradients_and_fixed_output_weights():
    params = init_icl_params(jax.random.key(4), 5, 4, init_scale=2.0)
    demos = jnp.asarray(RNG.normal(size=(3, 5)))
    query = jnp.asarray(RNG.normal(size=5))

    def loss(w_q, w_o):
        p = params._replace(w_q=w_q, w_o=w_o)
        return icl_hinge_loss(p, demos, query, -1.0)

    with jax.enable_x64():
        args = tuple(jnp.asarray(np.asarray(x), jnp.float64) for x in (params.w_q, params.w_o))
        check_grads(loss, args, order=1, modes=("rev",), eps=1e-5)
    g = jax.grad(icl_hinge_loss)(params, demos, query, -1.0)
    assert float(jnp.abs(g.a).max()) == 0.0


def test_jit_vmap_over_prompts():
    params = init_icl_params(jax.random.key(5), 5, 4)
    demos = jnp.asarray(RNG.normal(size=(3, 4, 5)), jnp.float32)
    query = jnp.asarray(RNG.normal(size=(3, 5)), jnp.float32)
    batched = jax.jit(jax.vmap(icl_forward, (None, 0, 0)))(params, demos, query)
    for i in range(3):
        np.testing.assert_allclose(
            batched[i], icl_forward(params, demos[i], query[i]), rtol=1e-5, atol=1e-7
        )
    with pytest.raises(ValueError, match="demos"):
        icl_forward(params, jnp.ones((3, 4)), jnp.ones(5))


@pytest.mark.parametrize("order", ["smallest", "largest", "random"])
@pytest.mark.parametrize("rate", [0.0, 0.25, 0.5, 1.0])
def test_magnitude_prune_against_numpy(order, rate):
    w_o = RNG.normal(size=(8, 3)) * np.arange(1, 9)[:, None]
    params = ICLParams(None, None, None, jnp.asarray(w_o, jnp.float32), jnp.ones(8))
    pruned = np.asarray(magnitude_prune(params, rate, order, key=jax.random.key(0)).w_o)
    removed = np.all(pruned == 0, axis=1)
    assert removed.sum() == int(np.floor(rate * 8))
    np.testing.assert_allclose(pruned[~removed], w_o[~removed], rtol=1e-6)
    norms = np.linalg.norm(w_o, axis=1)
    if 0 < removed.sum() < 8 and order != "random":
        if order == "smallest":
            assert norms[removed].max() < norms[~removed].min()
        else:
            assert norms[removed].min() > norms[~removed].max()
    traced = jax.jit(lambda r: magnitude_prune(params, r, order, key=jax.random.key(0)).w_o)
    np.testing.assert_array_equal(traced(rate), pruned)


def test_prune_and_sampler_bad_inputs():
    params = ICLParams(None, None, None, jnp.ones((4, 2)), jnp.ones(4))
    with pytest.raises(ValueError, match="rate"):
        magnitude_prune(params, 1.5)
    with pytest.raises(ValueError, match="rate"):
        magnitude_prune(params, -0.1)
    with pytest.raises(ValueError, match="order"):
        magnitude_prune(params, 0.1, order="median")
    with pytest.raises(ValueError, match="key"):
        magnitude_prune(params, 0.1, order="random")
    with pytest.raises(ValueError, match="alpha"):
        sample_icl_prompt(jax.random.key(0), jnp.ones(3), jnp.ones(3), jnp.ones((2, 3)), 1.2, 4)
