"""The empirical optimal denoiser D*: jaxlab's chunked log-sum-exp vs a dense NumPy softmax.

``jaxlab bench diffusion`` (or ``python benchmarks/diffusion.py [--quick]``) times
``jaxlab.diffusion.optimal_denoiser`` on n training items of dimension d for a batch of b
queries (n = 50,000, d = 3,072, b = 256: CIFAR-10 scale) against the NumPy implementation a
user would write (dense [b, n] squared distances via one matmul, softmax, weighted mean),
with ``jaxlab.train.time_interleaved``, and reports peak extra memory: XLA's temporary
buffer size for jaxlab, ``tracemalloc`` for NumPy. ``--quick`` uses n = 5,000, d = 768,
b = 64 (under a minute).
"""

from __future__ import annotations

import argparse
import tracemalloc

import jax
import numpy as np

from jaxlab.diffusion import optimal_denoiser
from jaxlab.train import ratios, time_interleaved


def numpy_optimal_denoiser(x: np.ndarray, sigma: float, y: np.ndarray) -> np.ndarray:
    """Dense reference: [b, n] logits, softmax over n, weights @ y."""
    d2 = (x * x).sum(1)[:, None] - 2.0 * x @ y.T + (y * y).sum(1)[None, :]
    logits = -d2 / (2.0 * sigma**2)
    w = np.exp(logits - logits.max(1, keepdims=True))
    return (w / w.sum(1, keepdims=True)) @ y


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of under a minute")
    args = parser.parse_args(argv)
    n, d, b = (5_000, 768, 64) if args.quick else (50_000, 3_072, 256)
    rng = np.random.default_rng(0)
    y = rng.uniform(-1, 1, size=(n, d)).astype(np.float32)
    x = (y[:b] + 0.5 * rng.normal(size=(b, d))).astype(np.float32)
    sigma = 0.5
    ours = jax.jit(lambda x, y: optimal_denoiser(x, sigma, y))
    xj, yj = jax.device_put(x), jax.device_put(y)
    np.testing.assert_allclose(ours(xj, yj), numpy_optimal_denoiser(x, sigma, y), atol=1e-3)
    times = time_interleaved(
        {"jaxlab": lambda: ours(xj, yj), "numpy": lambda: numpy_optimal_denoiser(x, sigma, y)},
        repeats=3,
    )
    mem = ours.lower(xj, yj).compile().memory_analysis()
    ours_mb = getattr(mem, "temp_size_in_bytes", 0) / 2**20 if mem is not None else float("nan")
    tracemalloc.start()
    numpy_optimal_denoiser(x, sigma, y)
    numpy_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    speed = ratios(times, "numpy")
    print(f"optimal_denoiser, n={n}, d={d}, b={b}, {jax.default_backend()}")
    print(f"{'impl':8s} {'seconds':>9s} {'t/baseline':>10s} {'peak extra MiB':>15s}")
    print(f"{'jaxlab':8s} {times['jaxlab']:9.3f} {speed['jaxlab']:10.2f} {ours_mb:15.1f}")
    print(f"{'numpy':8s} {times['numpy']:9.3f} {1.0:10.2f} {numpy_mb:15.1f}")


if __name__ == "__main__":
    main()
