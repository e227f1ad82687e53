import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.rl.imagination import imagine
from jaxlab.rl.rssm import RSSM, gaussian, kl_balance, rssm_loss


def _np_kl(qm, qs, pm, ps):
    """Closed-form KL(N(qm, qs²) ‖ N(pm, ps²)) summed over the last axis, averaged."""
    kl = np.log(ps / qs) + (qs**2 + (qm - pm) ** 2) / (2 * ps**2) - 0.5
    return kl.sum(-1).mean()


def _np_grad(f, args, i, eps=1e-6):
    """Central finite differences of the scalar ``f(*args)`` w.r.t. ``args[i]`` (float64)."""
    x = args[i]
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = [a.copy() for a in args], [a.copy() for a in args]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        g[idx] = (f(*hi) - f(*lo)) / (2 * eps)
    return g


def _params(seed=0):
    rng = np.random.default_rng(seed)
    qm, pm = rng.normal(size=(2, 3, 4))
    qs, ps = rng.uniform(0.3, 1.5, size=(2, 3, 4))
    return [qm, qs, pm, ps]


@pytest.mark.parametrize("alpha", [0.8, 0.3])
def test_kl_balance_value_and_alpha_split_against_closed_form(alpha):
    args = _params()
    want = _np_kl(*args)

    def loss(qm, qs, pm, ps):
        return kl_balance((qm, qs), (pm, ps), alpha, free_nats=0.0)[0]

    jargs = [jnp.asarray(a, jnp.float32) for a in args]
    value, kl = kl_balance((jargs[0], jargs[1]), (jargs[2], jargs[3]), alpha, 0.0)
    np.testing.assert_allclose(float(kl), want, rtol=1e-5)
    np.testing.assert_allclose(float(value), want, rtol=1e-5)  # α KL + (1 − α) KL
    grads = jax.grad(loss, argnums=(0, 1, 2, 3))(*jargs)
    # Stop-gradients emulated: the posterior's parameters get (1 − α) ∂KL, the prior's α ∂KL.
    weights = (1 - alpha, 1 - alpha, alpha, alpha)
    for i, (g, w) in enumerate(zip(grads, weights, strict=True)):
        np.testing.assert_allclose(g, w * _np_grad(_np_kl, args, i), rtol=2e-3, atol=1e-5)


def test_free_nats_clamp():
    qm, qs, _, _ = _params(1)
    pm, ps = qm + 0.05, qs * 1.05  # KL far below one nat
    args = [jnp.asarray(a, jnp.float32) for a in (qm, qs, pm, ps)]
    kl = _np_kl(qm, qs, pm, ps)
    assert kl < 0.2

    def loss(*a, free):
        return kl_balance((a[0], a[1]), (a[2], a[3]), 0.8, free)[0]

    np.testing.assert_allclose(float(loss(*args, free=1.0)), 1.0)  # clamped: the constant F
    for g in jax.grad(lambda *a: loss(*a, free=1.0), argnums=(0, 1, 2, 3))(*args):
        np.testing.assert_array_equal(g, 0.0)
    # Below the KL the clamp is inactive: the unclamped value and gradient.
    np.testing.assert_allclose(float(loss(*args, free=0.5 * kl)), kl, rtol=1e-5)
    g = jax.grad(lambda *a: loss(*a, free=0.5 * kl))(*args)
    np.testing.assert_allclose(g, 0.2 * _np_grad(_np_kl, [qm, qs, pm, ps], 0), rtol=2e-3, atol=1e-6)


def test_reparameterised_sample_gradients():
    # E ‖z‖² = ‖μ‖² + ‖σ‖² for z ~ N(μ, σ²): ∂/∂μ = 2μ, ∂/∂σ = 2σ through the samples.
    mu, sd = jnp.array([0.5, -1.0, 2.0]), jnp.array([0.3, 1.0, 0.7])

    def mc(mu, sd):
        z = gaussian(mu, sd).sample(seed=jax.random.key(0), sample_shape=(40_000,))
        return jnp.mean(jnp.sum(z**2, -1))

    gm, gs = jax.grad(mc, argnums=(0, 1))(mu, sd)
    np.testing.assert_allclose(gm, 2 * mu, atol=0.05)
    np.testing.assert_allclose(gs, 2 * sd, atol=0.05)


def _model(**kw):
    m = RSSM(
        obs_dim=1, num_actions=2, deter=16, stoch=4, hidden=32, embed_dim=8, ensemble_size=3, **kw
    )
    p = m.init(jax.random.key(0), jnp.zeros((1, 1)), jnp.zeros((1,), jnp.int32))
    return m, p


def test_shapes_over_a_sequence_under_jit_and_vmap():
    m, p = _model()
    o, a = jnp.zeros((5, 7, 1)), jnp.zeros((5, 6), jnp.int32)
    s, prior, post = jax.jit(lambda o, a: m.apply(p, o, a, jax.random.key(1), method=m.observe))(
        o, a
    )
    assert s.shape == (5, 7, 20)
    for x in (*prior, *post):
        assert x.shape == (5, 7, 4)
    assert float(jnp.min(prior[1])) >= 0.1 and float(jnp.min(post[1])) >= 0.1  # σ_min
    losses = jax.jit(jax.vmap(lambda o, k: rssm_loss(p, m, o, a, k)[0]))(
        jnp.zeros((3, 5, 7, 1)), jax.random.split(jax.random.key(2), 3)
    )
    assert losses.shape == (3,) and bool(jnp.all(jnp.isfinite(losses)))
    r_loss = jax.jit(lambda r: rssm_loss(p, m, o, a, jax.random.key(1), r)[1][0]["reward"])(
        jnp.ones((5, 7))
    )
    assert float(r_loss) > 0
    with pytest.raises(ValueError, match="obs"):
        rssm_loss(p, m, jnp.zeros((5, 7, 2)), a, jax.random.key(1))
    with pytest.raises(ValueError, match="actions"):
        rssm_loss(p, m, o, jnp.zeros((5, 7), jnp.int32), jax.random.key(1))
    with pytest.raises(ValueError, match="integers"):
        rssm_loss(p, m, o, jnp.zeros((5, 6)), jax.random.key(1))
    with pytest.raises(ValueError, match="rewards"):
        rssm_loss(p, m, o, a, jax.random.key(1), jnp.ones((5, 6)))
    with pytest.raises(ValueError, match="alpha"):
        kl_balance(prior, post, alpha=1.5)
    with pytest.raises(ValueError, match="shape"):
        kl_balance(prior, (post[0][..., :2], post[1]))


def _corridor(n=32, length=8, seed=0):
    # o_{t+1} = clip(o_t + 0.2 (2a − 1), −1, 1): a 1-D corridor with walls at ±1.
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, size=(n, length - 1))
    o = np.zeros((n, length, 1), np.float32)
    o[:, 0, 0] = rng.uniform(-1, 1, n)
    for t in range(length - 1):
        o[:, t + 1, 0] = np.clip(o[:, t, 0] + 0.2 * (2 * a[:, t] - 1), -1, 1)
    return jnp.asarray(o), jnp.asarray(a, jnp.int32)


def test_posterior_filters_and_prior_imagines_the_corridor():
    m, p = _model()
    o, a = _corridor()
    tx = optax.adam(3e-3)

    @jax.jit
    def step(p, s, k):
        (loss, (met, _)), g = jax.value_and_grad(rssm_loss, has_aux=True)(
            p, m, o, a, k, free_nats=0.1
        )
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, met

    s = tx.init(p)
    for k in jax.random.split(jax.random.key(3), 600):
        p, s, met = step(p, s, k)
    assert float(met["kl"]) > 0.0
    # Posterior (with observations): decodes every step of held-out windows.
    o2, a2 = _corridor(seed=1)
    post, _, _ = m.apply(p, o2, a2, jax.random.key(4), False, method=m.observe)
    err_post = jnp.abs(m.apply(p, post, method=m.decode) - o2)
    # At t = 0 (h_0 = 0) only the observation locates the agent: the prior's mean cannot.
    prior0 = m.apply(p, jnp.zeros((32, 16)), method=m.prior)[0]
    err_prior0 = jnp.abs(
        m.apply(p, jnp.concatenate([jnp.zeros((32, 16)), prior0], -1), method=m.decode) - o2[:, 0]
    )
    assert float(jnp.mean(err_post[:, 0])) < 0.1 < 0.3 < float(jnp.mean(err_prior0))
    # Prior only (imagination): from the first posterior state, the actions replayed open
    # loop through the prior's samples.
    h = post[:, 0]
    hs = [h]
    for t, k in enumerate(jax.random.split(jax.random.key(5), 7)):
        h = m.apply(p, h, a2[:, t], k, method=m.transition)
        hs.append(h)
    hs = jnp.stack(hs)
    err_prior = jnp.abs(m.apply(p, hs, method=m.decode) - jnp.swapaxes(o2, 0, 1))[1:]

    # ``imagine`` with the stochastic prior: shapes, and the key drives the samples.
    def policy(h, k):
        z = jnp.zeros(h.shape[0])
        return jnp.ones(h.shape[0], jnp.int32), z, z

    trans = lambda h, act, k: m.apply(p, h, act, k, method=m.transition)  # noqa: E731
    im1 = imagine(trans, policy, post[:, 0], jax.random.key(6), 7, stochastic=True)[0]
    im2 = imagine(trans, policy, post[:, 0], jax.random.key(7), 7, stochastic=True)[0]
    assert im1.shape == (8, 32, 20)
    np.testing.assert_array_equal(im1[:, :, :16][1], im2[:, :, :16][1])  # h_1: deterministic
    assert float(jnp.max(jnp.abs(im1[1, :, 16:] - im2[1, :, 16:]))) > 1e-3  # z_1 sampled
    assert float(jnp.mean(err_post)) < 0.1  # filtering with observations
    assert float(jnp.mean(err_prior)) < 0.15  # open-loop imagination with the prior
    # A single observation's state (``encode``) decodes back to it.
    enc = m.apply(p, o2[:, 0], method=m.encode)
    assert float(jnp.mean(jnp.abs(m.apply(p, enc, method=m.decode) - o2[:, 0]))) < 0.1
