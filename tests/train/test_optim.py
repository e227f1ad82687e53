"""``make_optimizer``/``optimizer_step`` against hand-written optax and NumPy updates."""

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
import pytest

from jaxlab.train import make_optimizer, make_schedule, optimizer_step, scan_run


def quadratic(params, batch):
    return jnp.sum((params["w"] - batch) ** 2)


def test_sgd_step_is_the_numpy_update():
    tx = make_optimizer({"name": "sgd", "learning_rate": 0.1})
    step = optimizer_step(quadratic, tx)
    params = {"w": jnp.array([1.0, -2.0])}
    batch = jnp.array([0.5, 0.5])
    (new, _), loss = step((params, tx.init(params)), batch)
    w = np.array([1.0, -2.0])
    np.testing.assert_allclose(loss, np.sum((w - 0.5) ** 2), rtol=1e-6)
    np.testing.assert_allclose(new["w"], w - 0.1 * 2 * (w - 0.5), rtol=1e-6)


def test_config_dict_clip_and_schedule_match_optax_chain():
    spec = ml_collections.ConfigDict(
        {
            "name": "adamw",
            "weight_decay": 0.01,
            "clip_global_norm": 0.5,
            "learning_rate": {
                "name": "warmup_cosine_decay_schedule",
                "init_value": 0.0,
                "peak_value": 1e-2,
                "warmup_steps": 2,
                "decay_steps": 6,
            },
        }
    )
    ours = make_optimizer(spec)
    theirs = optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 6), weight_decay=0.01),
    )
    params = {"w": jnp.array([3.0, -1.0, 2.0])}
    xs = jnp.linspace(-1, 1, 18).reshape(6, 3)
    got, _ = scan_run(optimizer_step(quadratic, ours), (params, ours.init(params)), xs)

    def manual(carry, batch):
        p, s = carry
        g = jax.grad(quadratic)(p, batch)
        u, s = theirs.update(g, s, p)
        return (optax.apply_updates(p, u), s), None

    want, _ = jax.lax.scan(manual, (params, theirs.init(params)), xs)
    np.testing.assert_allclose(got[0]["w"], want[0]["w"], rtol=1e-6)


def test_has_aux_and_vmap_over_runs():
    tx = make_optimizer({"name": "adam", "learning_rate": 1e-1})

    def loss(params, batch):
        value = quadratic(params, batch)
        return value, {"double": 2 * value}

    step = jax.vmap(optimizer_step(loss, tx, has_aux=True))
    params = {"w": jnp.stack([jnp.zeros(2), jnp.ones(2)])}
    carry = (params, jax.vmap(tx.init)(params))
    (_, _), (value, aux) = step(carry, jnp.zeros((2, 2)))
    np.testing.assert_allclose(value, [0.0, 2.0])
    np.testing.assert_allclose(aux["double"], [0.0, 4.0])


def test_contrib_name_resolves():
    tx = make_optimizer({"name": "contrib.prodigy", "learning_rate": 1.0})
    assert isinstance(tx, optax.GradientTransformation)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"learning_rate": 1e-3}, "name"),
        ({"name": "adamm", "learning_rate": 1e-3}, "unknown optax optimiser"),
        ({"name": "adam", "learning_rate": 0.0}, "learning_rate must be > 0"),
        ({"name": "adam", "learning_rate": -1e-3}, "learning_rate must be > 0"),
        ({"name": "adam", "learning_rate": 1e-3, "clip_global_norm": 0.0}, "clip_global_norm"),
        ({"name": "adam", "learning_rate": 1e-3, "momentun": 0.9}, "optimiser 'adam'"),
        ({"name": "adam", "learning_rate": {"name": "nope"}}, "unknown optax schedule"),
    ],
)
def test_bad_optimizer_specs_raise(spec, match):
    with pytest.raises(ValueError, match=match):
        make_optimizer(spec)


def test_constant_schedule_is_the_float():
    assert make_schedule(3e-4) == 3e-4
