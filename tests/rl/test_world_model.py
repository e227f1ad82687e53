import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.rl.world_model import LatentWorldModel, world_model_loss


def _model():
    m = LatentWorldModel(obs_dim=1, num_actions=2, latent=8, hidden=32, ensemble_size=3)
    p = m.init(jax.random.key(0), jnp.zeros((1, 1)), jnp.zeros((1,), jnp.int32))
    return m, p


def test_learns_a_line_world_and_imagines_open_loop():
    # o_{t+1} = clip(o_t + 0.2 (2a − 1), −1, 1): a 1-D corridor with walls at ±1.
    m, p = _model()
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=(32, 7))
    o = np.zeros((32, 8, 1), np.float32)
    o[:, 0, 0] = rng.uniform(-1, 1, 32)
    for t in range(7):
        o[:, t + 1, 0] = np.clip(o[:, t, 0] + 0.2 * (2 * a[:, t] - 1), -1, 1)
    o, a = jnp.asarray(o), jnp.asarray(a, jnp.int32)
    tx = optax.adam(5e-3)

    @jax.jit
    def step(p, s):
        (loss, _), g = jax.value_and_grad(world_model_loss, has_aux=True)(p, m, o, a)
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    s = tx.init(p)
    first = None
    for _ in range(200):
        p, s, loss = step(p, s)
        first = loss if first is None else first
    _, met = world_model_loss(p, m, o, a)
    assert float(met["open_loop"]) < 0.05 * float(first)
    # Imagination from the encoded start follows the true corridor.
    h = m.apply(p, o[:, 0], method=m.encode)
    for t in range(5):
        h = m.apply(p, h, a[:, t], method=m.transition)
    pred = m.apply(p, h, method=m.decode)
    assert float(jnp.mean(jnp.abs(pred - o[:, 5]))) < 0.1
    ens = m.apply(p, h, a[:, 5], method=m.ensemble)
    assert ens.shape == (3, 32, 8)


def test_bad_inputs_and_vmap():
    m, p = _model()
    with pytest.raises(ValueError, match="obs"):
        world_model_loss(p, m, jnp.zeros((2, 3, 2)), jnp.zeros((2, 2), jnp.int32))
    with pytest.raises(ValueError, match="actions"):
        world_model_loss(p, m, jnp.zeros((2, 3, 1)), jnp.zeros((2, 3), jnp.int32))
    with pytest.raises(ValueError, match="integers"):
        world_model_loss(p, m, jnp.zeros((2, 3, 1)), jnp.zeros((2, 2)))
    losses = jax.vmap(lambda o: world_model_loss(p, m, o, jnp.zeros((2, 2), jnp.int32))[0])(
        jnp.zeros((3, 2, 3, 1))
    )
    assert losses.shape == (3,)
