"""Anchored lasso by FISTA (jaxlab, vmapped over queries) vs scikit-learn's Lasso.

``jaxlab bench attribution`` (or ``python benchmarks/attribution.py [--quick]``) solves
min_z ½‖t − W z‖² + α‖z‖₁ for a batch of queries with a dense W of shape [m × p]
([4096 × 16384], 256 queries; ``--quick``: [512 × 2048], 32 queries) with
``jaxlab.attribution.lasso_fista`` and with scikit-learn's coordinate-descent ``Lasso``
(multi-target fit, α rescaled by 1/m, tolerance 1e-4), timed with
``jaxlab.train.time_interleaved``. FISTA runs a fixed number of iterations; the table
reports the relative objective gap to scikit-learn's solution beside the time ratio.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.linear_model import Lasso

from jaxlab.attribution import lasso_fista, lipschitz_constant
from jaxlab.train import ratios, time_interleaved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of about a minute")
    parser.add_argument("--iters", type=int, default=500)
    args = parser.parse_args(argv)
    m, p, q = (512, 2048, 32) if args.quick else (4096, 16384, 256)
    rng = np.random.default_rng(0)
    w = (rng.normal(size=(m, p)) / np.sqrt(m)).astype(np.float32)
    z_true = rng.normal(size=(q, p)) * (rng.random(size=(q, p)) < 0.05)
    t = (z_true @ w.T + 0.01 * rng.normal(size=(q, m))).astype(np.float32)
    alpha = 0.01
    wj = jnp.asarray(w)
    step = 1.0 / (1.01 * float(lipschitz_constant(lambda z: wj @ z, lambda r: wj.T @ r, (p,))))

    @jax.jit
    def ours(t):
        return jax.vmap(
            lambda tt: lasso_fista(
                lambda z: wj @ z,
                lambda r: wj.T @ r,
                tt,
                jnp.zeros(p),
                alpha,
                step=step,
                num_iters=args.iters,
            )
        )(t)

    def sklearn():
        return (
            Lasso(alpha=alpha / m, fit_intercept=False, tol=1e-4, max_iter=10_000).fit(w, t.T).coef_
        )

    tj = jnp.asarray(t)
    times = time_interleaved({"jaxlab": lambda: ours(tj), "sklearn": sklearn}, repeats=3)

    def objective(z):
        return 0.5 * ((t - z @ w.T) ** 2).sum(1) + alpha * np.abs(z).sum(1)

    ref = np.asarray(sklearn()).reshape(q, p)
    gap = np.mean((objective(np.asarray(ours(tj))) - objective(ref)) / objective(ref))
    speed = ratios(times, "sklearn")
    print(
        f"lasso, W [{m} x {p}], {q} queries, alpha={alpha}, FISTA {args.iters} iterations, "
        f"{jax.default_backend()}"
    )
    print(f"{'impl':8s} {'seconds':>9s} {'t/baseline':>10s}")
    print(f"{'jaxlab':8s} {times['jaxlab']:9.3f} {speed['jaxlab']:10.2f}")
    print(f"{'sklearn':8s} {times['sklearn']:9.3f} {1.0:10.2f}")
    print(f"mean relative objective gap (jaxlab - sklearn) / sklearn: {gap:.2e}")


if __name__ == "__main__":
    main()
