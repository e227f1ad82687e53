import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl.imagination import actor_critic_loss, imagine, lambda_returns, return_scale


def _np_lambda(r, d, v, lam):
    g = np.zeros_like(r)
    nxt = v[-1]
    for t in reversed(range(len(r))):
        nxt = r[t] + d[t] * ((1 - lam) * v[t] + lam * nxt)
        g[t] = nxt
    return g


def test_lambda_returns_match_numpy_loop_batched_and_jit():
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    d = rng.uniform(0.5, 1.0, size=(7, 3))
    got = jax.jit(lambda a, b, c: lambda_returns(a, b, c, 0.8))(r, d, v)
    want = np.stack([_np_lambda(r[:, i], d[:, i], v[:, i], 0.8) for i in range(3)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # λ = 0: one-step TD targets; λ = 1: discounted Monte Carlo with a bootstrap.
    np.testing.assert_allclose(lambda_returns(r, d, v, 0.0), r + d * v, rtol=1e-5, atol=1e-6)


def test_imagine_shapes_and_dynamics():
    # transition h' = h + a, policy always a = 1: h_t = h_0 + t.
    policy = lambda h, k: (
        jnp.ones(h.shape[0], jnp.int32),
        jnp.zeros(h.shape[0]),  # noqa: E731
        jnp.zeros(h.shape[0]),
    )
    hs, acts, logp, ent = imagine(
        lambda h, a: h + a[:, None], policy, jnp.zeros((2, 3)), jax.random.key(0), 4
    )
    assert hs.shape == (5, 2, 3) and acts.shape == (4, 2)
    np.testing.assert_allclose(hs[:, 0, 0], np.arange(5))
    with pytest.raises(ValueError, match="h0"):
        imagine(lambda h, a: h, policy, jnp.zeros(3), jax.random.key(0), 4)


def test_actor_critic_gradients():
    rng = np.random.default_rng(1)
    h, b = 5, 4
    r = jnp.asarray(rng.normal(size=(h, b)), jnp.float32)
    v0 = jnp.asarray(rng.normal(size=(h + 1, b)), jnp.float32)
    lp0 = jnp.asarray(rng.normal(size=(h, b)), jnp.float32)

    def loss(v, lp):
        return actor_critic_loss(r, v, lp, jnp.zeros((h, b)), discount=0.9, lambda_=0.7)[0]

    gv, glp = jax.grad(loss, argnums=(0, 1))(v0, lp0)
    g = _np_lambda(np.asarray(r), np.full((h, b), 0.9), np.asarray(v0[1:]), 0.7)
    # critic: d/dv_t ½ mean (v_t − G_t)², last value (bootstrap) gets no gradient.
    np.testing.assert_allclose(gv[:-1], (np.asarray(v0[:-1]) - g) / (h * b), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gv[-1], 0.0)
    s = max(1.0, np.percentile(g, 95) - np.percentile(g, 5))
    np.testing.assert_allclose(glp, -(g - np.asarray(v0[:-1])) / s / (h * b), rtol=1e-4, atol=1e-6)
    assert float(return_scale(jnp.zeros(3))) == 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="share a shape"):
        lambda_returns(jnp.ones(3), jnp.ones(4), jnp.ones(3))
    with pytest.raises(ValueError, match="lambda_"):
        lambda_returns(jnp.ones(3), jnp.ones(3), jnp.ones(3), 1.5)
    with pytest.raises(ValueError, match="values"):
        actor_critic_loss(jnp.ones((3, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)))
