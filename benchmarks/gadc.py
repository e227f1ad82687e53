"""Benchmark GADC: Table 1 as a vmap-ed batch vs a plain loop, and diffusion vs scipy.

``jaxlab bench gadc`` (full) or ``python benchmarks/gadc.py --quick`` (≈ 1 min). Prints
markdown tables:

1. Table 1 (6 cells × 10 runs of GADC(IV) + MLP): all runs of a cell as one ``vmap``-ed
   program vs a Python loop over the same jitted single-run trainer; the reference
   PyTorch pipeline's ≈ 25 min on this CPU (measured with a CPU port, see the spec) is
   quoted, not re-run.
2. K = 16 PPR/GADC diffusion pre-computation: jaxlab (jit, segment_sum) vs scipy CSR
   running the same recurrence, on Cora and on a CSBM graph (100k nodes, 1M edges, d=128).
3. Option II (Φ = XXᵀ/‖XXᵀ‖_F) at 100k nodes, applied implicitly, with its peak memory
   (a dense XXᵀ would need 40 GB).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from jaxlab.data.graphs import load_prognn
from jaxlab.graph.csbm import csbm
from jaxlab.graph.diffusion import gadc
from jaxlab.graph.graphs import from_scipy
from jaxlab.graph.models import MLP
from jaxlab.graph.pipeline import decoupled_runs, index_masks, row_normalize
from jaxlab.graph.training import flax_fns, train_node_classifier

REFERENCE_TABLE1_S = 25 * 60.0


def _timed(fn, repeats=1, warm=True):
    if warm:
        fn()  # compile / warm up
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn()
        jax.block_until_ready(out)
    return (time.perf_counter() - start) / repeats


def _time_cell(ds: str, rate: float, k: int, epochs: int, runs: int) -> tuple[float, ...]:
    """Seconds for ``runs`` trainings of one cell: (vmap batch, lax.map batch, Python loop)."""
    data = load_prognn(ds, rate)
    x = jnp.asarray(data.features)
    f = gadc(from_scipy(data.adj), row_normalize(x), lam=1.0, num_terms=k, phi="limit",
             phi_features=x)
    labels = jnp.asarray(data.labels)
    masks = index_masks(data.num_nodes, data.idx_train, data.idx_val, data.idx_test)
    kw = dict(lr=0.02, weight_decay=1e-5, epochs=epochs, select="val_loss")
    batched = lambda b: decoupled_runs(jax.random.key(0), f, labels, masks, num_runs=runs,
                                       hidden=(32,), dropout=0.5, init="reference",
                                       batching=b, **kw)
    init_fn, apply_fn = flax_fns(MLP((32,), data.num_classes, 0.5, "reference"), f)
    keys = jax.random.split(jax.random.key(0), runs)

    def loop():
        single = jax.jit(lambda key: train_node_classifier(
            key, init_fn, apply_fn, f, labels, *masks, **kw)[0])
        return [single(keys[i]) for i in range(runs)]

    # End to end per cell, each including its one compilation (a cell is compiled once).
    return (_timed(lambda: batched("vmap"), warm=False),
            _timed(lambda: batched("map"), warm=False), _timed(loop, warm=False))


def bench_table1(quick: bool) -> None:
    _time_cell("cora", 0.75, 1, 2, 2)  # warm up the process (first-use costs)
    cells = [("cora", 0.25, 6)] if quick else [
        (ds, r, k) for ds in ("cora", "citeseer") for r, k in ((0.25, 6), (0.5, 3), (0.75, 1))]
    epochs = 20 if quick else 100
    runs = 10
    t_vmap = t_map = t_loop = 0.0
    for ds, rate, k in cells:
        dv, dm, dl = _time_cell(ds, rate, k, epochs, runs)
        t_vmap += dv
        t_map += dm
        t_loop += dl
    scale = 100 / epochs * (6 / len(cells))
    print(f"\n### Table 1 training ({len(cells)} cell(s) × {runs} runs × {epochs} epochs)\n")
    print("| pipeline | measured (s) | Table 1 equivalent (s) | speed-up vs loop |")
    print("|---|---|---|---|")
    print(f"| jaxlab vmap over runs | {t_vmap:.1f} | {t_vmap * scale:.0f} | "
          f"{t_loop / t_vmap:.2f}× |")
    print(f"| jaxlab lax.map over runs (one program) | {t_map:.1f} | {t_map * scale:.0f} | "
          f"{t_loop / t_map:.2f}× |")
    print(f"| jaxlab plain loop | {t_loop:.1f} | {t_loop * scale:.0f} | 1.00× |")
    print(f"| reference PyTorch (quoted) | — | {REFERENCE_TABLE1_S:.0f} | "
          f"{t_loop * scale / REFERENCE_TABLE1_S:.2f}× (ref / best jaxlab: "
          f"{REFERENCE_TABLE1_S / (min(t_vmap, t_map) * scale):.1f}×) |")


def _scipy_ppr(adj: sp.csr_matrix, x: np.ndarray, lam: float, k: int) -> np.ndarray:
    a = adj + sp.eye(adj.shape[0], dtype=np.float32)
    d = np.asarray(a.sum(1)).ravel() ** -0.5
    a_hat = sp.diags(d) @ a @ sp.diags(d)
    a_hat = sp.csr_matrix(a_hat * (lam / (lam + 1)), dtype=np.float32)
    out, acc = x, x.copy()
    for _ in range(k):
        out = a_hat @ out
        acc += out
    return acc / (1 + lam)


def bench_diffusion(quick: bool) -> None:
    print("\n### K = 16 diffusion pre-computation (ε = 0, λ = 1)\n")
    print("| graph | n | edges | d | scipy CSR (s) | jaxlab (s) | scipy / jaxlab |")
    print("|---|---|---|---|---|---|---|")
    cora = load_prognn("cora")
    graphs = [("Cora (Pro-GNN)", cora.adj, cora.features)]
    n, e = (10_000, 100_000) if quick else (100_000, 1_000_000)
    adj, x, _ = csbm(0, n, e, num_classes=5, num_features=128)
    graphs.append(("CSBM", adj, x))
    for name, adj, x in graphs:
        g = from_scipy(adj)
        xj = jnp.asarray(x)
        fn = jax.jit(lambda xx, g=g: gadc(g, xx, lam=1.0, eps=0.0, num_terms=16, phi="cosine"))
        t_jax = _timed(lambda fn=fn, xj=xj: fn(xj), repeats=3)
        start = time.perf_counter()
        for _ in range(3):
            ref = _scipy_ppr(adj, x, 1.0, 16)
        t_sp = (time.perf_counter() - start) / 3
        np.testing.assert_allclose(np.asarray(fn(xj)), ref, rtol=1e-3, atol=1e-4)
        print(f"| {name} | {adj.shape[0]} | {adj.nnz // 2} | {x.shape[1]} | {t_sp:.3f} | "
              f"{t_jax:.3f} | {t_sp / t_jax:.2f}× |")


def _option2_child(n: int, e: int) -> None:
    adj, x, _ = csbm(0, n, e, num_classes=5, num_features=128)
    g = from_scipy(adj)
    fn = jax.jit(lambda xx: gadc(g, xx, lam=32.0, eps=1.0, num_terms=16, phi="gram"))
    xj = jnp.asarray(x)
    jax.block_until_ready(fn(xj))
    start = time.perf_counter()
    jax.block_until_ready(fn(xj))
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{elapsed:.3f} {peak_mb:.0f}")


def bench_option2(quick: bool) -> None:
    n, e = (10_000, 100_000) if quick else (100_000, 1_000_000)
    out = subprocess.run([sys.executable, __file__, "--option2-child", str(n), str(e)],
                         capture_output=True, text=True, check=True).stdout.split()
    dense_gb = 3 * n * n * 4 / 1e9
    print("\n### Option II (Φ = XXᵀ/‖XXᵀ‖_F, implicit), K = 16, d = 128\n")
    print("| n | edges | time (s) | peak RSS of the process (MB) | reference dense XXᵀ (GB) |")
    print("|---|---|---|---|---|")
    print(f"| {n} | {e} | {float(out[0]):.2f} | {out[1]} | {dense_gb:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of about a minute")
    parser.add_argument("--option2-child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.option2_child:
        _option2_child(*args.option2_child)
        return
    print(f"GADC benchmark ({'quick' if args.quick else 'full'}), devices: {jax.devices()}")
    bench_diffusion(args.quick)
    bench_option2(args.quick)
    bench_table1(args.quick)


if __name__ == "__main__":
    main()
