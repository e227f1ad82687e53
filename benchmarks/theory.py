"""In-context learning theory: jaxlab.theory's one-layer transformer against NumPy, in one run.

``jaxlab bench theory`` (or ``python benchmarks/theory.py [--quick]``) times, with
``jaxlab.train.time_interleaved`` (warmed up, interleaved, medians), on a batch of B
prompts of l demonstrations (token width n = d + 1, m neurons):

* the forward pass ``F(P)`` (``jit(vmap(icl_forward))``) against NumPy's batched einsums;
* the training step's loss and gradient, the mean hinge loss ``max(0, 1 − y F(P))`` and
  its gradient w.r.t. W_Q, W_K, W_V, W_O (``jit(value_and_grad)``), against a hand-written
  NumPy backward pass (the paper has no released code; this is what a NumPy user writes).

Sizes: B = 1024, l = 64, d = 128, m = 256 (``--quick``: B = 256, l = 32, d = 64, m = 64).
The NumPy values are checked against jaxlab's before timing. ``main`` returns the
jaxlab / NumPy time ratios (< 1: jaxlab is faster).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.theory import icl_forward, icl_hinge_loss, init_icl_params
from jaxlab.train.timing import print_speedups, time_interleaved


def numpy_forward(params, demos: np.ndarray, query: np.ndarray):
    """Batched F(P) and the intermediates the backward pass needs.

    demos ``[B, l, n]``, query ``[B, n]``; attention softmax_s((W_K p_s)ᵀ W_Q p_q).
    """
    w_q, w_k, w_v, w_o, a = params
    keys = demos @ w_k.T  # [B, l, m_a]
    q = query @ w_q.T  # [B, m_a]
    z = np.matmul(keys, q[:, :, None])[..., 0]  # [B, l]
    z = z - z.max(axis=1, keepdims=True)
    attn = np.exp(z)
    attn /= attn.sum(axis=1, keepdims=True)  # [B, l]
    mixed = np.matmul(attn[:, None, :], demos)[:, 0]  # Σ_s attn_s p_s
    v = mixed @ w_v.T  # [B, m_b]
    h = v @ w_o.T  # [B, m]
    return np.maximum(h, 0.0) @ a, (keys, q, attn, mixed, v, h)


def numpy_loss_and_grad(params, demos, query, labels):
    """Mean hinge loss and its gradient w.r.t. (W_Q, W_K, W_V, W_O), by hand."""
    w_q, w_k, w_v, w_o, a = params
    f, (keys, q, attn, mixed, v, h) = numpy_forward(params, demos, query)
    margin = 1.0 - labels * f
    loss = np.mean(np.maximum(margin, 0.0))
    g_f = np.where(margin > 0, -labels, 0.0) / len(f)  # [B]
    g_h = (g_f[:, None] * a[None, :]) * (h > 0)  # [B, m]
    g_wo = g_h.T @ v
    g_v = g_h @ w_o  # [B, m_b]
    g_wv = g_v.T @ mixed
    g_mixed = g_v @ w_v  # [B, n]
    g_attn = np.matmul(demos, g_mixed[:, :, None])[..., 0]
    g_z = attn * (g_attn - np.sum(attn * g_attn, axis=1, keepdims=True))
    g_q = np.matmul(g_z[:, None, :], keys)[:, 0]  # [B, m_a]
    g_keys = g_z[:, :, None] * q[:, None, :]  # [B, l, m_a]
    g_wk = g_keys.reshape(-1, keys.shape[-1]).T @ demos.reshape(-1, demos.shape[-1])
    g_wq = g_q.T @ query
    return loss, (g_wq, g_wk, g_wv, g_wo)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, < 1 minute")
    args = parser.parse_args(argv)
    batch, length, dim, neurons = (256, 32, 64, 64) if args.quick else (1024, 64, 128, 256)
    repeats = 5 if args.quick else 9
    n = dim + 1
    params = init_icl_params(jax.random.key(0), n, neurons, init_scale=1.0)
    np_params = tuple(np.asarray(p, np.float64) for p in params)
    rng = np.random.default_rng(0)
    demos = rng.normal(size=(batch, length, n)).astype(np.float32)
    demos[:, :, -1] = rng.choice([-1.0, 1.0], size=(batch, length))
    query = rng.normal(size=(batch, n)).astype(np.float32)
    query[:, -1] = 0.0
    labels = rng.choice([-1.0, 1.0], size=batch).astype(np.float32)
    j_demos, j_query, j_labels = map(jnp.asarray, (demos, query, labels))
    np32 = tuple(p.astype(np.float32) for p in np_params)

    forward = jax.jit(jax.vmap(icl_forward, in_axes=(None, 0, 0)))

    def mean_loss(p, d, q, y):
        return jnp.mean(jax.vmap(icl_hinge_loss, in_axes=(None, 0, 0, 0))(p, d, q, y))

    step = jax.jit(jax.value_and_grad(mean_loss))
    np.testing.assert_allclose(
        np.asarray(forward(params, j_demos, j_query)),
        numpy_forward(np_params, demos, query)[0],
        rtol=1e-3,
        atol=1e-5,
    )
    ours_loss, ours_grad = step(params, j_demos, j_query, j_labels)
    ref_loss, ref_grad = numpy_loss_and_grad(np_params, demos, query, labels)
    np.testing.assert_allclose(float(ours_loss), ref_loss, rtol=1e-4)
    for ours, ref in zip(ours_grad[:4], ref_grad, strict=True):
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())

    size = f"B={batch} l={length} d={dim} m={neurons}"
    rows = {
        f"forward, {size}": time_interleaved(
            {
                "jaxlab": lambda: forward(params, j_demos, j_query),
                "numpy": lambda: numpy_forward(np32, demos, query)[0],
            },
            repeats=repeats,
        ),
        f"hinge loss + grad, {size}": time_interleaved(
            {
                "jaxlab": lambda: step(params, j_demos, j_query, j_labels),
                "numpy": lambda: numpy_loss_and_grad(np32, demos, query, labels),
            },
            repeats=repeats,
        ),
    }
    title = f"ICL transformer vs NumPy, {jax.default_backend()}, median of {repeats}"
    return print_speedups(title, rows)


if __name__ == "__main__":
    main()
