"""ScreenerNet: the screener objective against numpy and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads

from jaxlab.curriculum import StepContext, screener_loss, screener_net


def test_screener_loss_reference_and_grads():
    w = np.array([0.1, 0.5, 0.9], np.float32)
    loss = np.array([0.2, 1.5, 0.7], np.float32)
    expected = (1 - w) ** 2 * loss + w**2 * np.maximum(1.0 - loss, 0)
    np.testing.assert_allclose(screener_loss(w, loss, 1.0), expected, rtol=1e-6)
    check_grads(
        lambda v: screener_loss(v, loss, 1.0).sum(),
        (jnp.asarray(w),),
        order=1,
        modes=["rev"],
        atol=1e-2,
        rtol=1e-2,
    )


def test_hook_moves_weights_towards_hard_samples():
    apply_fn = lambda p, x: x @ p["w"]
    params = {"w": jnp.eye(2)}
    c = screener_net(margin=1.0, lr=0.05)
    state = c.model_prepare(c.data_prepare(2, 2, jax.random.key(0)), params, 1)
    x = jnp.array([[1.0, 0.0], [0.0, 1.0]])
    losses = jnp.array([3.0, 0.0])  # sample 0 hard, sample 1 easy
    ctx = StepContext(
        params, None, apply_fn, x, jnp.ones(2, bool), x, None, 1e-3, jnp.int32(0), jax.random.key(0)
    )
    from jaxlab.curriculum.scorer import scorer_weights

    w0 = scorer_weights(state.params, apply_fn, x)
    step = jax.jit(lambda s: c.loss_curriculum(losses, None, None, jnp.arange(2), s, ctx))
    for _ in range(20):
        _, state = step(state)
    w1 = scorer_weights(state.params, apply_fn, x)
    assert float(w1[0] - w0[0]) > 0 > float(w1[1] - w0[1])
