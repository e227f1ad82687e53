"""MultiMax against softmax: the op (forward+backward) and a whole training step.

Usage: ``jaxlab bench multimax [--quick] [--hlo DIR]``.

**Whole step** (what the paper reports, +12.3 % training time with torch.jit, and what users
feel): one jitted AdamW training step (forward, backward, update, buffers donated, float32
master weights) of the ViT and of the character LM with MultiMax in attention and head,
fused (``multimax``'s hand-written VJP) and by autodiff (``fused_multimax=False``), against
the same model with softmax, timed round-robin in the same run: at the quick experiments'
shapes and DeiT-S-like shapes (2 blocks, CPU-sized batch) in float32, and the full DeiT-S
paper step (12 blocks, batch 128) in float32 (matmul precision "highest") and bfloat16
compute (precision "default", as the paper preset). ``--quick`` reduces the DeiT-S step to
2 blocks at batch 2 and says so in its rows; the full step is meant for an accelerator.
Each row also gives the MultiMax step's throughput and its FLOP rate (XLA's FLOP count of
the compiled step over the median time).

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
    sparsemax,
)
from jaxlab.train.timing import ratios, time_interleaved

SHAPES = ((8, 8, 256, 256), (32, 4, 64, 64))


def _variants(w: jax.Array) -> dict[str, tuple]:
    """name -> (function of (x, params), argnums to differentiate, forward-only?)."""
    loss = lambda f: lambda x, p: jnp.sum(f(x, p) * w)
    autodiff = lambda x, p: multimax(x, p, fused=False)
    return {
        "softmax fwd": (lambda x, p: jax.nn.softmax(x), None),
        "multimax fwd": (multimax, None),
        "softmax": (loss(lambda x, p: jax.nn.softmax(x)), 0),
        "multimax, grad x": (loss(multimax), 0),
        "multimax, grad x and params": (loss(multimax), (0, 1)),
        "multimax autodiff (fused=False), grad x and params": (loss(autodiff), (0, 1)),
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


# name -> (model kind, model kwargs, input shape); "vit" inputs are images.
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

#: The DeiT-S paper step (the ``multimax_vit`` paper preset's model: 224², 16×16 patches =
#: 196 tokens, 12 blocks, width 384, 6 heads) at batch 128 (DeiT's 1024 over 8 devices).
DEIT_S = dict(num_classes=1000, patch_size=16, dim=384, depth=12, num_heads=6, mlp_dim=1536)
DEIT_S_BATCH = 128
#: ``--quick``: the same widths and tokens at 2 blocks and batch 2 (seconds on a CPU).
DEIT_S_QUICK = dict(DEIT_S, depth=2)
DEIT_S_QUICK_BATCH = 2

#: variant -> (attention/output normaliser, fused_multimax).
STEP_VARIANTS = {
    "softmax": ("softmax", True),
    "multimax": ("multimax", True),
    "multimax autodiff": ("multimax", False),
}
#: compute dtype -> the matmul precision its rows run at (float32: full float32, as the
#: quick presets; bfloat16: the backend's default, as the paper presets).
STEP_DTYPES = {"float32": "highest", "bfloat16": "default"}


def _train_step(kind: str, kwargs: dict, shape: tuple, variant: str, dtype: str):
    """(compiled step, state, inputs, labels, FLOPs per step) of one AdamW training step
    (float32 master weights, ``dtype`` compute) of the model in ``variant``."""
    normalizer, fused = STEP_VARIANTS[variant]
    cls = ViT if kind == "vit" else TransformerLM
    model = cls(
        **kwargs,
        attention_normalizer=normalizer,
        output_normalizer=normalizer,
        fused_multimax=fused,
        dtype=jnp.dtype(dtype),
        param_dtype=jnp.float32,
    )
    key = jax.random.key(0)
    if kind == "vit":
        inputs = jax.random.normal(key, shape, jnp.float32)
        labels = jax.random.randint(key, shape[:1], 0, kwargs["num_classes"])
    else:
        inputs = jax.random.randint(key, shape, 0, kwargs["vocab_size"])
        labels = jnp.roll(inputs, -1, axis=1)
    params = jax.jit(model.init)(key, inputs)["params"]
    tx = optax.adamw(1e-3, weight_decay=0.05, mask=multimax_decay_mask)
    state = (params, tx.init(params))

    @functools.partial(jax.jit, donate_argnums=0)
    def step(state, inputs, labels):
        params, opt_state = state

        def loss_fn(p):
            logits = model.apply({"params": p}, inputs)  # float32 logits
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    with jax.default_matmul_precision(STEP_DTYPES[dtype]):
        compiled = step.lower(state, inputs, labels).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return compiled, state, inputs, labels, float((cost or {}).get("flops", float("nan")))


def _time_step_variants(kind, kwargs, shape, dtype, repeats):
    """Median seconds of each variant's step, round-robin, and the softmax step's FLOPs."""
    runs, flops = {}, {}
    for variant in STEP_VARIANTS:
        step, state, inputs, labels, flops[variant] = _train_step(
            kind, kwargs, shape, variant, dtype
        )
        box = [state]

        def call(step=step, box=box, inputs=inputs, labels=labels):
            box[0], loss = step(box[0], inputs, labels)
            return loss

        runs[variant] = call
    return time_interleaved(runs, repeats=repeats, warmup=1), flops


def _step_row(label, times, flops, batch) -> dict[str, float]:
    r = ratios(times, "softmax")
    t = times["multimax"]
    print(
        f"| {label} | {times['softmax'] * 1e3:.1f} | {t * 1e3:.1f} "
        f"| {times['multimax autodiff'] * 1e3:.1f} | {r['multimax']:.3f}x "
        f"| {r['multimax autodiff']:.3f}x | {batch / t:.0f} | {flops['multimax'] / t / 1e12:.2f} |",
        flush=True,
    )
    return {"multimax": r["multimax"], "multimax autodiff": r["multimax autodiff"]}


STEP_HEADER = (
    "| whole training step (jit, AdamW, donated) | softmax ms | MultiMax ms "
    "| MultiMax autodiff ms | ratio | autodiff ratio | MultiMax inputs/s "
    "| MultiMax TFLOP/s (XLA count) |\n|---|---:|---:|---:|---:|---:|---:|---:|"
)


def measure_steps(repeats: int) -> dict[str, dict[str, float]]:
    """Per shape (float32 compute): the MultiMax / softmax step-time ratios."""
    print(STEP_HEADER)
    out = {}
    for label, (kind, kwargs, shape) in STEP_SHAPES.items():
        times, flops = _time_step_variants(kind, kwargs, shape, "float32", repeats)
        out[label] = _step_row(f"{label}, float32", times, flops, shape[0])
    return out


def measure_deit_s(quick: bool, repeats: int) -> dict[str, dict[str, float]]:
    """The full DeiT-S training step in float32 and in bfloat16 compute (``--quick``: 2
    blocks at batch 2); the rows name the dtype and matmul precision."""
    kwargs, batch = (DEIT_S_QUICK, DEIT_S_QUICK_BATCH) if quick else (DEIT_S, DEIT_S_BATCH)
    what = (
        f"DeiT-S step REDUCED by --quick ({kwargs['depth']} blocks, batch {batch}; the paper "
        "step is 12 blocks, batch 128)"
        if quick
        else f"DeiT-S paper step (224², 196 tokens, 12 blocks, width 384, batch {batch})"
    )
    if not quick and jax.default_backend() == "cpu":
        print("The full DeiT-S step is meant for an accelerator; on a CPU it takes minutes.")
    print(STEP_HEADER)
    out = {}
    for dtype, precision in STEP_DTYPES.items():
        shape = (batch, 224, 224, 3)
        times, flops = _time_step_variants("vit", kwargs, shape, dtype, repeats)
        label = f"{what}, {dtype} compute, matmul precision {precision!r}"
        out[f"DeiT-S {dtype}"] = _step_row(label, times, flops, batch)
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
    step_repeats = 3 if args.quick else 15
    steps = measure_steps(step_repeats)
    print()
    steps.update(measure_deit_s(args.quick, step_repeats))
    return {
        f"step {label.split(' (')[0]}, {variant}": r
        for label, row in steps.items()
        for variant, r in row.items()
    }


if __name__ == "__main__":
    main()
