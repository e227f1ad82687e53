"""Forward+backward time of MultiMax, sparsemax and entmax-1.5 against ``jax.nn.softmax``.

Usage: ``jaxlab bench multimax [--quick] [--hlo DIR]`` (or ``python benchmarks/multimax.py``).

Each variant is ``jit(grad(lambda x, p: sum(f(x, p) * w)))`` on attention scores of the
given shape (float32); "fwd" is ``jit(f)`` alone. The variants run round-robin and each
reports the median time, so load on the machine affects all of them alike. Ratios are
against softmax measured in the same run. ``--hlo DIR`` writes each variant's optimised
HLO and prints how many fusions and reduction loops it compiles to (the evidence for the
cost analysis in docs/multimax.md).
"""

from __future__ import annotations

import argparse
import functools
import os
import re

import jax
import jax.numpy as jnp

from jaxlab.nn import entmax15, init_multimax_params, multimax, multimax_modulate, sparsemax
from jaxlab.train.timing import time_interleaved

SHAPES = ((8, 8, 256, 256), (32, 4, 64, 64))


def _variants(w: jax.Array) -> dict[str, tuple]:
    """name -> (function of (x, params), argnums to differentiate, forward-only?)."""
    loss = lambda f: (lambda x, p: jnp.sum(f(x, p) * w))
    naive = lambda x, p: jax.nn.softmax(multimax_modulate(x, p))
    return {
        "softmax fwd": (lambda x, p: jax.nn.softmax(x), None),
        "multimax fwd": (multimax, None),
        "softmax": (loss(lambda x, p: jax.nn.softmax(x)), 0),
        "multimax, grad x": (loss(multimax), 0),
        "multimax, grad x and params": (loss(multimax), (0, 1)),
        "softmax(σ(x)) autodiff, grad x and params": (loss(naive), (0, 1)),
        "sparsemax": (loss(lambda x, p: sparsemax(x)), 0),
        "entmax15": (loss(lambda x, p: entmax15(x)), 0),
    }


def _compile(fn, argnums):
    return jax.jit(fn if argnums is None else jax.grad(fn, argnums))


def hlo_counts(text: str) -> dict[str, int]:
    """Number of fusion computations and of reduce ops in an optimised HLO module."""
    return {
        "fusions": len(re.findall(r"^\s*%?\S*fusion\S* = .*fusion\(", text, re.M)),
        "reduces": len(re.findall(r"\breduce\(", text)),
    }


def measure(shape, repeats: int, hlo_dir: str | None) -> dict[str, float]:
    kx, kw, kp = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, shape, jnp.float32) * 2.0
    w = jax.random.normal(kw, shape, jnp.float32)
    params = init_multimax_params(kp)
    compiled = {name: _compile(fn, argnums) for name, (fn, argnums) in _variants(w).items()}
    for name, fn in compiled.items():
        jax.block_until_ready(fn(x, params))
        if hlo_dir:
            text = fn.lower(x, params).compile().as_text()
            slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
            path = os.path.join(hlo_dir, f"{slug}_{'x'.join(map(str, shape))}.hlo.txt")
            with open(path, "w") as f:
                f.write(text)
            print(f"  {name:45s} {hlo_counts(text)}  -> {path}")
    # Warmed up above (compiled and run once): time the variants round-robin.
    return time_interleaved(
        {name: functools.partial(fn, x, params) for name, fn in compiled.items()},
        repeats=repeats, warmup=0)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (under a minute)")
    parser.add_argument("--hlo", metavar="DIR", help="write optimised HLO of each variant")
    args = parser.parse_args(argv)
    repeats = 7 if args.quick else 31
    if args.hlo:
        os.makedirs(args.hlo, exist_ok=True)
    print(f"backend: {jax.default_backend()}, devices: {jax.devices()}, repeats: {repeats}\n")
    rows = {shape: measure(shape, repeats, args.hlo) for shape in SHAPES}
    header = " | ".join(f"{'x'.join(map(str, s))} ms | ratio" for s in SHAPES)
    print(f"| variant (float32, jit, median) | {header} |")
    print("|---|" + "---:|---:|" * len(SHAPES))
    for name in rows[SHAPES[0]]:
        base = "softmax fwd" if name.endswith("fwd") else "softmax"
        cells = " | ".join(
            f"{rows[s][name] * 1e3:.2f} | {rows[s][name] / rows[s][base]:.2f}x" for s in SHAPES
        )
        print(f"| {name} | {cells} |")
    print("\nratios: forward-only rows against 'softmax fwd', the others against 'softmax' "
          "(forward+backward, gradient w.r.t. the scores).")


if __name__ == "__main__":
    main()
