"""bf16 compute with float32 master weights trains like float32.

A small MLP classifier (16 → 32 → 32 → 4, ``jaxlab.nn.MLP``) is trained 300 full-batch Adam
steps on a fixed noisy 4-class problem twice from the same initial parameters: once in
float32 (the reference) and once with ``dtype=jnp.bfloat16`` (activations and matrix-product
inputs in bf16, the parameters, gradients and Adam state float32, the loss in float32).

Tolerance. bf16 keeps 8 significand bits, so rounding a value to bf16 changes it by at most
the unit roundoff ``u = 2⁻⁸ ≈ 0.39 %``. Each of the 3 dense layers rounds its 2 operands
(input activations and kernel), and XLA accumulates the products in float32, so to first
order the logits, and with them the cross-entropy, move by at most ``2 · 3 · u = 6u ≈ 2.3 %``
relative to the float32 pass. The bf16 gradients carry errors of the same order; Adam's
normalised steps turn them into parameter differences of order ``u`` times the learning
rate per step, which over 300 steps on this well-conditioned problem stay below the
one-pass bound. The test asserts ``|L_bf16 − L_f32| ≤ 6u · L_f32`` at every step
(observed: at most ≈ 2u).
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.nn.mlp import MLP

UNIT_ROUNDOFF_BF16 = 2.0**-8  # 8 significand bits (7 stored + the implicit one)
LAYERS = 3
TOLERANCE = 2 * LAYERS * UNIT_ROUNDOFF_BF16  # relative, per step (module docstring)
STEPS = 300


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(512, 16)).astype(np.float32)
    w = rng.normal(size=(16, 4)).astype(np.float32)
    y = np.argmax(x @ w + 2.0 * rng.normal(size=(512, 4)), axis=-1)  # noisy labels
    return jnp.asarray(x), jnp.asarray(y)


def _train(dtype, x, y, seed: int):
    """300 Adam steps of the MLP computing in ``dtype``; the losses and final carry."""
    model = MLP(4, (32, 32), dtype=dtype)
    params = model.init(jax.random.key(seed), x[:1])
    tx = optax.adam(1e-3)

    def loss_fn(p):
        logits = model.apply(p, x).astype(jnp.float32)  # the loss in float32
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def step(carry, _):
        p, state = carry
        loss, grads = jax.value_and_grad(loss_fn)(p)
        updates, state = tx.update(grads, state, p)
        return (optax.apply_updates(p, updates), state), (loss, grads)

    with jax.default_matmul_precision("highest"):
        (p, state), (losses, grads) = jax.jit(lambda c: jax.lax.scan(step, c, None, length=STEPS))(
            (params, tx.init(params))
        )
    return model, np.asarray(losses), p, state, grads


@pytest.mark.parametrize("seed", [2])
def test_bf16_compute_tracks_the_float32_losses(seed):
    x, y = _problem(seed)
    _, reference, *_ = _train(None, x, y, seed)
    model, losses, params, state, grads = _train(jnp.bfloat16, x, y, seed)

    assert reference[-1] < 0.5 * reference[0]  # both runs learn
    np.testing.assert_array_less(np.abs(losses - reference), TOLERANCE * reference)
    assert not np.array_equal(losses, reference)  # the bf16 run did round

    # float32 master weights, gradients and optimiser state
    for tree in (params, grads, state):
        for leaf in jax.tree.leaves(tree):
            if jnp.issubdtype(leaf.dtype, jnp.floating):
                assert leaf.dtype == jnp.float32
    # bf16 activations: every dense layer's output
    _, inter = model.apply(params, x, capture_intermediates=True)
    layers = inter["intermediates"]
    assert sorted(layers) == ["Dense_0", "Dense_1", "Dense_2", "__call__"]
    for name in ("Dense_0", "Dense_1", "Dense_2"):
        assert layers[name]["__call__"][0].dtype == jnp.bfloat16, name
