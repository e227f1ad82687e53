"""Benchmark: Byzantine-robust aggregation and one simulated training step.

    jaxlab bench byzantine [--quick]

1. Aggregation time for m ∈ {17, 64} workers, d ∈ {1e5, 1e6} float32, every aggregator of
   ``jaxlab.robust``; the cost ratios CTMA(base)/base and NNM(base)/base.
2. The same inputs through ByzFL (``pip install byzfl``, PyTorch CPU tensors) when it is
   installed: ByzFL time / jaxlab time (> 1: jaxlab faster) and the largest absolute
   difference of the results.
3. One full training step with 17 workers (small CNN, 28×28 inputs): ``jax.vmap`` over the
   workers against a Python loop over workers.

``--quick`` (≤ 1 min): m = 17, d = 1e5 only, fewer repeats. f = ⌊(m − 1)/2⌋.
"""

from __future__ import annotations

import argparse
import functools

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np

from jaxlab import robust
from jaxlab.robust import attacks, simulation
from jaxlab.train.timing import time_interleaved
from jaxlab.trainers import byzantine
from jaxlab_experiments.byzantine.byzantine_grid.config import get_config


def timed_with_outputs(fns: dict, *args, repeats: int) -> dict:
    """``{name: (median seconds, output)}`` of ``fn(*args)``, timed round-robin.

    The first call of each function (its output, compilation) is the warm-up; the timing
    is :func:`jaxlab.train.time_interleaved`, so a burst of load on a shared CPU hits every
    rule of a round, not just one of them (the ratios CTMA(base)/base stay meaningful).
    """
    outs = {name: jax.block_until_ready(fn(*args)) for name, fn in fns.items()}
    times = time_interleaved(
        {name: functools.partial(fn, *args) for name, fn in fns.items()}, repeats=repeats, warmup=0
    )
    return {name: (times[name], outs[name]) for name in fns}


def jaxlab_rules(f: int) -> dict:
    cwtm = functools.partial(robust.trimmed_mean, num_byzantine=f)
    bases = {
        "cwmed": robust.coordinate_median,
        "cwtm": cwtm,
        "gm": functools.partial(robust.geometric_median, num_iters=3, smoothing=0.1),
        "krum": functools.partial(robust.krum, num_byzantine=f),
    }
    rules = {
        "mean": robust.mean,
        **bases,
        "multikrum": functools.partial(robust.multi_krum, num_byzantine=f),
        "cc": functools.partial(robust.centered_clipping, radius=100.0, num_iters=1),
        "bucketing(cwtm)": lambda x: robust.bucketing(
            x, 1, cwtm, jax.random.key(0)
        ),  # s = ⌊m/2f⌋ = 1
    }
    for name, base in bases.items():
        rules[f"ctma({name})"] = functools.partial(robust.ctma, num_byzantine=f, base=base)
        rules[f"nnm({name})"] = functools.partial(robust.nnm, num_byzantine=f, base=base)
    return {k: jax.jit(v) for k, v in rules.items()}


def byzfl_rules(f: int, m: int, d: int):
    """ByzFL's counterparts (torch tensors), or None when byzfl is missing."""
    try:
        import byzfl
        import torch  # noqa: F401  (ByzFL's tensors)
    except ImportError:
        return None
    nnm = byzfl.NNM(f)
    trmean = byzfl.TrMean(f)
    rules = {
        "mean": byzfl.Average(),
        "cwmed": byzfl.Median(),
        "cwtm": trmean,
        "gm": byzfl.GeometricMedian(nu=0.1, T=3),
        "krum": byzfl.Krum(f),
        "multikrum": byzfl.MultiKrum(f),
        # ByzFL's CenteredClipping keeps the last output as its next center: a fresh one
        # per call gives the stateless rule with center 0.
        "cc": lambda v: byzfl.CenteredClipping(tau=100.0, L=1)(v),
    }
    gigabytes = m * (m - f) * d * 4 / 1e9  # ByzFL's NNM gathers [m, m − f, d]
    if gigabytes < 4:
        rules["nnm(cwtm)"] = lambda v: trmean(nnm(v))
    return rules


def bench_aggregators(sizes, repeats: int) -> None:
    print("\n## Aggregation time (ms, median) — jaxlab vs ByzFL (torch CPU)\n")
    print("| m | d | aggregator | jaxlab ms | ByzFL ms | ByzFL / jaxlab | max abs diff |")
    print("|---|---|---|---:|---:|---:|---:|")
    ratios = []
    for m, d in sizes:
        f = (m - 1) // 2
        rng = np.random.default_rng(0)
        x_np = rng.normal(size=(m, d)).astype(np.float32)
        x_np[m - f :] += 10.0 * rng.normal(size=(f, d)).astype(np.float32)  # outliers
        x = jnp.asarray(x_np)
        # A d = 1e5 call takes milliseconds, where load bursts on a shared CPU are of the
        # same size: repeat those 5x as often so the medians (and the ratios) settle.
        ours = timed_with_outputs(jaxlab_rules(f), x, repeats=repeats * (5 if d <= 100_000 else 1))
        theirs = byzfl_rules(f, m, d)
        for name, (sec, out) in ours.items():
            ref = ""
            speed = ""
            diff = ""
            if theirs is not None and name in theirs:
                import torch

                t_sec, t_out = timed_with_outputs(
                    {name: theirs[name]}, torch.from_numpy(x_np), repeats=repeats
                )[name]
                ref = f"{1e3 * t_sec:.1f}"
                speed = f"{t_sec / sec:.1f}×"
                diff = f"{np.max(np.abs(np.asarray(out) - t_out.numpy())):.1e}"
            elif theirs is not None and name == "nnm(cwtm)":
                ref = "skipped (ByzFL gathers [m, m−f, d]: > 4 GB)"
            print(f"| {m} | {d:.0e} | {name} | {1e3 * sec:.1f} | {ref} | {speed} | {diff} |")
        for base in ("cwmed", "cwtm", "gm", "krum"):
            ratios.append(
                (m, d, base, ours[f"ctma({base})"][0] / ours[base][0],
                 ours[f"nnm({base})"][0] / ours[base][0])
            )  # fmt: skip
        if theirs is None:
            print(f"| {m} | {d:.0e} | (all) | | byzfl not installed, skipped | | |")
    print("\n## Meta-aggregator cost ratios (goal: CTMA(base)/base ≤ 1.5)\n")
    print("| m | d | base | CTMA(base)/base | NNM(base)/base |")
    print("|---|---|---|---:|---:|")
    for m, d, base, r_ctma, r_nnm in ratios:
        print(f"| {m} | {d:.0e} | {base} | {r_ctma:.2f} | {r_nnm:.2f} |")


def bench_train_step(repeats: int) -> None:
    config = get_config("paper")  # the reference's CNN, m = 17, f = 8, batch 4 per worker
    m, f, batch = config.num_workers, config.num_byzantine, config.batch_size
    spec = byzantine.make_run_spec(
        optimizer="mu2sgd", cells=[("cwtm", "ctma")], attack_names=("alie",),
        image_shape=(28, 28, 1), **{key: config[key] for key in byzantine.SPEC_KEYS},
    )  # fmt: skip
    params = spec.init_params(jax.random.key(0))
    server = spec.make_server(0.1)
    state = simulation.init_state(params, spec.estimator, server, m)
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.uniform(size=(m, batch, 28, 28, 1)), jnp.float32)
    labels = jnp.asarray(rng.integers(0, 10, size=(m, batch)), jnp.int32)
    aggregate = spec.aggregators[0]
    attack = functools.partial(attacks.a_little_is_enough, num_workers=m, num_byzantine=f)

    vmapped = jax.jit(
        lambda s: simulation.byzantine_step(
            s, images, labels, jax.random.key(0), loss_fn=spec.loss_fn,
            estimator=spec.estimator, server=server, aggregate=aggregate, attack=attack,
            num_byzantine=f, num_classes=10, two_point=True,
        )[0]
    )  # fmt: skip

    # Python loop over workers: one jitted per-worker call each, then aggregate and step.
    grad = jax.jit(jax.value_and_grad(spec.loss_fn))
    storm_update = jax.jit(lambda g, s, gp: spec.estimator.update(g, s, grads_at_prev=gp))

    @jax.jit
    def server_step(s, rows, worker_states):
        byz = attack(rows[: m - f], rows[m - f :])
        agg = aggregate(jnp.concatenate([rows[: m - f], byz]), jax.random.key(0))
        direction = jax.flatten_util.ravel_pytree(s.params)[1](agg)
        updates, server_state = server.update(direction, s.server_state, s.params)
        return simulation.ByzantineState(
            jax.tree.map(lambda p, u: p + u, s.params, updates), s.params, worker_states,
            server_state,
        )  # fmt: skip

    def looped(s):
        rows, new_states = [], []
        for i in range(m):
            ws = jax.tree.map(lambda a, i=i: a[i], s.worker_state)
            _, g_new = grad(s.params, images[i], labels[i])
            _, g_old = grad(s.prev_params, images[i], labels[i])
            est, ws = storm_update(g_new, ws, g_old)
            rows.append(jax.flatten_util.ravel_pytree(est)[0])
            new_states.append(ws)
        stacked = jax.tree.map(lambda *a: jnp.stack(a), *new_states)
        return server_step(s, jnp.stack(rows), stacked)

    # Where the time goes: the 2 × 17 per-worker gradients (vmapped, looped, and the same
    # 2 × 68 samples as two plain pooled-batch gradients, with no per-worker split) and the
    # aggregation alone.
    value_and_grad = jax.value_and_grad(spec.loss_fn)

    def vmapped_grads(s):
        def two(x, y):
            return value_and_grad(s.params, x, y)[1], value_and_grad(s.prev_params, x, y)[1]

        return jax.vmap(two)(images, labels)

    def looped_grads(s):
        return [
            (grad(s.params, x, y)[1], grad(s.prev_params, x, y)[1])
            for x, y in zip(images, labels, strict=True)
        ]

    def pooled_grads(s):
        pooled = (images.reshape(m * batch, *images.shape[2:]), labels.reshape(-1))
        return value_and_grad(s.params, *pooled)[1], value_and_grad(s.prev_params, *pooled)[1]

    rows = jnp.asarray(rng.normal(size=(m, jax.flatten_util.ravel_pytree(params)[0].size)))
    aggregate_rows = jax.jit(lambda r: aggregate(r, jax.random.key(0)))
    times = timed_with_outputs(
        {"vmap": vmapped, "loop": looped, "vmap grads": jax.jit(vmapped_grads),
         "loop grads": looped_grads, "pooled grads": jax.jit(pooled_grads),
         "aggregate": lambda _: aggregate_rows(rows)},
        state, repeats=repeats,
    )  # fmt: skip
    (t_vmap, out_v), (t_loop, out_l) = times["vmap"], times["loop"]
    diff = max(
        float(jnp.max(jnp.abs(a - b)))
        for a, b in zip(jax.tree.leaves(out_v.params), jax.tree.leaves(out_l.params), strict=True)
    )
    print("\n## One μ²-SGD training step, 17 workers, CWTM+CTMA, ALIE (SmallCNN 16/32, 28×28)\n")
    print("| path | ms | speed-up |")
    print("|---|---:|---:|")
    print(f"| Python loop over workers | {1e3 * t_loop:.1f} | 1.0× |")
    print(f"| jax.vmap over workers | {1e3 * t_vmap:.1f} | {t_loop / t_vmap:.1f}× |")
    print("\n| part of the step | ms |")
    print("|---|---:|")
    for name, label in [
        ("loop grads", "2 × 17 per-worker gradients, Python loop (34 jitted calls, batch 4)"),
        ("vmap grads", "2 × 17 per-worker gradients, jax.vmap (one jit)"),
        ("pooled grads", "2 gradients of the pooled batch of 68 (no per-worker split)"),
        ("aggregate", "aggregation alone (CWTM + CTMA, d = 28 938)"),
    ]:
        print(f"| {label} | {1e3 * times[name][0]:.1f} |")
    print(f"\nmax |params difference| between the two paths: {diff:.1e}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="m = 17, d = 1e5 only (≤ 1 min)")
    args = parser.parse_args(argv)

    print(f"# jaxlab bench byzantine{' --quick' if args.quick else ''}")
    print(f"jax {jax.__version__}, devices: {jax.devices()}")
    if args.quick:
        bench_aggregators([(17, 100_000)], repeats=3)
        bench_train_step(repeats=3)
    else:
        sizes = [(m, d) for m in (17, 64) for d in (100_000, 1_000_000)]
        bench_aggregators(sizes, repeats=5)
        bench_train_step(repeats=10)


if __name__ == "__main__":
    main()
