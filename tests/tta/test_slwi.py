"""TENT and the SLWI filter against numpy loops and dynamax's linear-Gaussian filter."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.tta import (
    entropy_loss,
    mean_reversion,
    slwi_init,
    slwi_update,
    tent,
    tent_step,
)

A, Q, B, ZETA, ALPHA, WARMUP, P0 = 0.95, 0.05, 0.8, 1.0, 2.0, 3, 1e-2


def _numpy_slwi(source, observed, updates):
    """Scalar SLWI written out with plain floats (independent of the JAX code)."""
    mu, p, prev, scores, phis, means = source, P0, 0.0, [], [], []
    r = 1 - Q
    for t, (x, g) in enumerate(zip(observed, updates, strict=True)):
        m_pred, p_pred = A * mu + (1 - A) * source, A * A * p + Q
        log_pred = -0.5 * (np.log(2 * np.pi * (p_pred + r)) + (x - m_pred) ** 2 / (p_pred + r))
        d = log_pred - prev
        past = scores  # the d's of steps 2..t
        z = 0.0
        if t > WARMUP:
            z = (d - np.mean(past)) / max(np.std(past, ddof=1), 1e-12)
        c = 1 / ALPHA if abs(z) > ZETA else 0.0
        if t > 0:
            scores = scores + [d]
        prev = log_pred
        xb = x - c * g
        k = p_pred / (p_pred + r)
        mu, p = m_pred + k * (xb - m_pred), (1 - k) * p_pred
        phis.append(m_pred + B * (xb - m_pred))
        means.append(mu)
    return np.array(phis), np.array(means)


def _stream(n=40, seed=0):
    rng = np.random.default_rng(seed)
    updates = rng.normal(0, 0.3, n) + np.where(np.arange(n) % 13 == 12, 3.0, 0.0)
    observed = 1.0 + np.cumsum(updates) * 0.2
    return observed, updates


def _run(observed, updates, zeta=ZETA):
    def step(state, xg):
        x, g = xg
        phi, state, info = slwi_update(
            state, {"w": x}, {"w": g}, a=A, q=Q, b=B, zeta=zeta, alpha=ALPHA, warmup=WARMUP
        )
        return state, (phi["w"], state.mean["w"], info.backtrack)

    state = slwi_init({"w": jnp.array(1.0)}, init_var=P0)
    _, out = jax.jit(lambda s, xs: jax.lax.scan(step, s, xs))(state, (observed, updates))
    return out


def test_matches_numpy_scalar_filter_with_backtracking():
    observed, updates = _stream()
    phi, mean, c = _run(jnp.asarray(observed, jnp.float32), jnp.asarray(updates, jnp.float32))
    phi_ref, mean_ref = _numpy_slwi(1.0, observed, updates)
    assert float(c.max()) > 0  # the jumps were flagged at least once
    np.testing.assert_allclose(phi, phi_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-4, atol=1e-5)


def test_filter_means_match_dynamax():
    # Importing dynamax sets jax_default_matmul_precision="float32" for the whole process
    # (dynamax/__init__.py): the global is put back, and this comparison names its precision.
    ambient = jax.config.jax_default_matmul_precision
    lgssm = pytest.importorskip("dynamax.linear_gaussian_ssm")
    jax.config.update("jax_default_matmul_precision", ambient)
    with jax.default_matmul_precision("highest"):
        _filter_means_match_dynamax(lgssm)


def _filter_means_match_dynamax(lgssm):
    observed, updates = _stream(seed=1)
    _, mean, c = _run(
        jnp.asarray(observed, jnp.float32), jnp.asarray(updates, jnp.float32), zeta=jnp.inf
    )
    assert float(c.max()) == 0.0
    # dynamax's prior is on z_1, i.e. our first prediction from (μ0, P0) = (θ0, P0).
    model = lgssm.LinearGaussianSSM(state_dim=1, emission_dim=1)
    params, _ = model.initialize(
        initial_mean=jnp.array([A * 1.0 + (1 - A) * 1.0]),
        initial_covariance=jnp.array([[A * A * P0 + Q]]),
        dynamics_weights=jnp.array([[A]]),
        dynamics_bias=jnp.array([(1 - A) * 1.0]),
        dynamics_covariance=jnp.array([[Q]]),
        emission_weights=jnp.array([[1.0]]),
        emission_bias=jnp.zeros(1),
        emission_covariance=jnp.array([[1 - Q]]),
    )
    post = lgssm.lgssm_filter(params, jnp.asarray(observed, jnp.float32)[:, None])
    np.testing.assert_allclose(mean, post.filtered_means[:, 0], rtol=1e-4, atol=1e-5)


def test_pytree_and_one_batch_stream():
    source = {"scale": jnp.ones(3), "bias": jnp.zeros(2)}
    state = slwi_init(source)
    obs = jax.tree.map(lambda x: x + 0.5, source)
    upd = jax.tree.map(lambda x: jnp.full(x.shape, 0.5), source)
    phi, state, info = jax.jit(slwi_update)(state, obs, upd)  # a stream of one batch
    assert jax.tree.structure(phi) == jax.tree.structure(source)
    assert int(state.count) == 1 and float(info.backtrack) == 0.0
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(phi))


def test_bad_inputs():
    state = slwi_init({"w": jnp.zeros(2)})
    with pytest.raises(ValueError, match="structure"):
        slwi_update(state, {"v": jnp.zeros(2)}, {"w": jnp.zeros(2)})
    with pytest.raises(ValueError, match="alpha"):
        slwi_update(state, {"w": jnp.zeros(2)}, {"w": jnp.zeros(2)}, alpha=1.0)
    with pytest.raises(ValueError, match="q must"):
        slwi_update(state, {"w": jnp.zeros(2)}, {"w": jnp.zeros(2)}, q=1.0)
    with pytest.raises(ValueError, match="init_var"):
        slwi_init({"w": jnp.zeros(2)}, init_var=0.0)
    with pytest.raises(ValueError, match="logits"):
        entropy_loss(jnp.zeros(3))


def test_entropy_and_tent_mask():
    logits = np.random.default_rng(0).normal(size=(5, 4))
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(entropy_loss(logits), -(p * np.log(p)).sum(1).mean(), rtol=1e-5)

    def apply(params, x):
        h = x @ params["dense"]
        return h * params["scale"][None, :] + params["bias"][None, :]

    params = {
        "dense": jnp.asarray(np.random.default_rng(1).normal(size=(3, 4)), jnp.float32),
        "scale": jnp.ones(4),
        "bias": jnp.zeros(4),
    }
    opt = tent(optax.sgd(0.5), {"dense": False, "scale": True, "bias": True})
    state = opt.init(params)
    x = jnp.asarray(np.random.default_rng(2).normal(size=(16, 3)), jnp.float32)
    step = jax.jit(lambda p, s: tent_step(p, s, x, apply, opt))
    new, state, _, upd = step(params, state)
    np.testing.assert_array_equal(new["dense"], params["dense"])  # not adapted
    np.testing.assert_array_equal(upd["dense"], 0.0)
    assert float(entropy_loss(apply(new, x))) < float(entropy_loss(apply(params, x)))
    pulled = mean_reversion(new, params, 0.5, {"dense": False, "scale": True, "bias": True})
    np.testing.assert_allclose(pulled["scale"], 0.5 * (new["scale"] + params["scale"]))
