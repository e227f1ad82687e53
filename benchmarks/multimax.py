"""MultiMax against softmax: the op (forward+backward) and a whole training step.

Usage: ``jaxlab bench multimax [--quick] [--hlo DIR]``.

**Whole step** (what the paper reports, +12.3 % training time with torch.jit, and what users
feel): one jitted AdamW training step (forward, backward, update, buffers donated) of the
ViT and of the character LM with MultiMax in attention and head, against the same model
with softmax, timed round-robin in the same run: at the quick experiments' shapes and at
DeiT-S-like shapes (196 tokens, width 384, 6 heads; fewer blocks and a CPU-sized batch).

**Op level**:
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
import optax

from jaxlab.nn import (
    TransformerLM,
    ViT,
    entmax15,
    init_multimax_params,
    multimax,
    multimax_decay_mask,
    multimax_modulate,
    sparsemax,
)
from jaxlab.train.timing import ratios, time_interleaved

SHAPES = ((8, 8, 256, 256), (32, 4, 64, 64))


def _variants(w: jax.Array) -> dict[str, tuple]:
    """name -> (function of (x, params), argnums to differentiate, forward-only?)."""
    loss = lambda f: lambda x, p: jnp.sum(f(x, p) * w)
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
        repeats=repeats,
        warmup=0,
    )


# name -> (model kind, model kwargs, input shape, batch); "vit" inputs are images.
STEP_SHAPES = {
    "ViT quick (28² / patch 7, width 64, 2 blocks, batch 128)": (
        "vit",
        dict(num_classes=10, patch_size=7, dim=64, depth=2, num_heads=4, mlp_dim=128),
        (128, 28, 28, 1),
    ),
    "ViT DeiT-S-like (224² / patch 16 = 196 tokens, width 384, 6 heads, 2 blocks, batch 8)": (
        "vit",
        dict(num_classes=1000, patch_size=16, dim=384, depth=2, num_heads=6, mlp_dim=1536),
        (8, 224, 224, 3),
    ),
    "LM quick (64 chars, width 64, 2 blocks, batch 32)": (
        "lm",
        dict(vocab_size=80, max_len=64, dim=64, depth=2, num_heads=4, mlp_dim=128),
        (32, 64),
    ),
    "LM 196 tokens, width 384, 6 heads, 2 blocks, batch 8": (
        "lm",
        dict(vocab_size=80, max_len=196, dim=384, depth=2, num_heads=6, mlp_dim=1536),
        (8, 196),
    ),
}


def _train_step(kind: str, kwargs: dict, shape: tuple, normalizer: str):
    """(jitted step, state) of one AdamW training step of the model with ``normalizer``."""
    cls = ViT if kind == "vit" else TransformerLM
    model = cls(**kwargs, attention_normalizer=normalizer, output_normalizer=normalizer)
    key = jax.random.key(0)
    if kind == "vit":
        inputs = jax.random.normal(key, shape, jnp.float32)
        labels = jax.random.randint(key, shape[:1], 0, kwargs["num_classes"])
    else:
        inputs = jax.random.randint(key, shape, 0, kwargs["vocab_size"])
        labels = jnp.roll(inputs, -1, axis=1)
    params = model.init(key, inputs)["params"]
    tx = optax.adamw(1e-3, weight_decay=0.05, mask=multimax_decay_mask)
    state = (params, tx.init(params))

    @functools.partial(jax.jit, donate_argnums=0)
    def step(state, inputs, labels):
        params, opt_state = state

        def loss_fn(p):
            logits = model.apply({"params": p}, inputs)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return step, state, inputs, labels


def measure_steps(repeats: int) -> dict[str, float]:
    """Per shape: median seconds of the softmax and MultiMax steps; returns the ratios."""
    print("| whole training step (jit, AdamW, donated) | softmax ms | MultiMax ms | ratio |")
    print("|---|---:|---:|---:|")
    out = {}
    for label, (kind, kwargs, shape) in STEP_SHAPES.items():
        runs = {}
        for normalizer in ("softmax", "multimax"):
            step, state, inputs, labels = _train_step(kind, kwargs, shape, normalizer)
            box = [state]

            def call(step=step, box=box, inputs=inputs, labels=labels):
                box[0], loss = step(box[0], inputs, labels)
                return loss

            runs[normalizer] = call
        times = time_interleaved(runs, repeats=repeats, warmup=1)
        ratio = ratios(times, "softmax")["multimax"]
        out[label] = ratio
        print(
            f"| {label} | {times['softmax'] * 1e3:.1f} | {times['multimax'] * 1e3:.1f} "
            f"| {ratio:.2f}x |"
        )
    return out


def main(argv=None) -> dict[str, float]:
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
    print(
        "\nratios: forward-only rows against 'softmax fwd', the others against 'softmax' "
        "(forward+backward, gradient w.r.t. the scores).\n"
    )
    steps = measure_steps(repeats=3 if args.quick else 15)
    return {f"step {label.split(' (')[0]}": r for label, r in steps.items()}


if __name__ == "__main__":
    main()
