"""ADR-GD on a batch of random ReLU networks: one vmapped program vs a loop over networks.

``jaxlab bench adr_gd`` (or ``python benchmarks/adr_gd.py [--quick]``) times, with
``jaxlab.train.time_interleaved``, ADR-GD (reference small config, [10, 64, 64, 1]) on 50
random networks × 3000 steps:

* ``vmap``: one jitted program, ``vmap`` over the networks of a ``lax.scan`` over steps;
* ``loop``: a Python loop over the networks, each a call of the jitted single-network scan
  (what a user gets by jitting the kernel and iterating);
* normalised gradient ascent (vmapped) for the per-step cost of the baseline.

A PyTorch loop (the reference implementation's form) is not timed: the reference code needs
CUDA. ``--quick`` runs 300 steps (about a minute with compilation).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp

from jaxlab.optim import adr_gd, projected_gradient_ascent, random_relu_mlp
from jaxlab.train import ratios, time_interleaved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 steps instead of 3000")
    parser.add_argument("--networks", type=int, default=50)
    args = parser.parse_args(argv)
    steps = 300 if args.quick else 3000
    keys = jax.random.split(jax.random.key(0), args.networks)
    nets = jax.vmap(lambda k: random_relu_mlp(k, [10, 64, 64, 1]))(keys)
    x0 = jnp.zeros(10)
    one = jax.jit(lambda p: adr_gd(p, x0, num_steps=steps).best_value)
    batched = jax.jit(jax.vmap(lambda p: adr_gd(p, x0, num_steps=steps).best_value))
    gd = jax.jit(jax.vmap(lambda p: projected_gradient_ascent(p, x0, num_steps=steps).best_value))
    singles = [[(w[i], b[i]) for w, b in nets] for i in range(args.networks)]

    def loop():
        return [jax.block_until_ready(one(p)) for p in singles]

    times = time_interleaved(
        {
            "vmap": lambda: jax.block_until_ready(batched(nets)),
            "loop": loop,
            "gd_vmap": lambda: jax.block_until_ready(gd(nets)),
        },
        repeats=3,
    )
    r = ratios(times, "loop")
    print(f"ADR-GD, {args.networks} networks [10, 64, 64, 1] x {steps} steps")
    print(f"{'variant':10s} {'seconds':>9s} {'vs loop':>8s}")
    for name in ("vmap", "loop", "gd_vmap"):
        print(f"{name:10s} {times[name]:9.3f} {r[name]:8.3f}")
    print(
        f"vmap speed-up over the loop: {1.0 / r['vmap']:.1f}x; "
        f"ADR-GD / GD per step: {times['vmap'] / times['gd_vmap']:.1f}x"
    )


if __name__ == "__main__":
    main()
