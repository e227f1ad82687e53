"""MCF throughput on this CPU: training steps/s and DDIM-50 conformers/s, beside ETKDG.

``jaxlab bench mcf`` (or ``python benchmarks/mcf.py [--quick]``) measures, in one run and
on the same QM9 test molecules:

* training steps per second of the tiny and S denoisers (batch of padded molecules);
* sampled conformers per second with DDIM (50 steps, η = 1);
* RDKit ETKDGv3 conformers per second (the classical generator).

Compilation is excluded (one warm-up call first). ``--quick`` shrinks every count so the
run takes about a minute.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np
from rdkit import Chem, RDLogger

from jaxlab.chem import SIZES, MCFDenoiser, mcf_sample
from jaxlab.chem.conformers import embed_conformers
from jaxlab.chem.training import PositionScale, init_state, make_train_step
from jaxlab.data.qm9 import load_split, pad_molecules, qm9_builder
from jaxlab.diffusion import cosine_beta_schedule
from jaxlab.train import make_optimizer
from jaxlab.train.timing import time_call


def bench_model(size: str, arrays: dict, batch: int, train_repeats: int, sample_batch: int):
    """(train steps/s, DDIM-50 conformers/s) of the MCF denoiser of ``size``."""
    model = MCFDenoiser(SIZES[size])
    schedule = cosine_beta_schedule(1000)
    optimizer = make_optimizer(
        {
            "name": "adamw",
            "learning_rate": {
                "name": "warmup_cosine_decay_schedule",
                "init_value": 0.0,
                "peak_value": 1e-4,
                "warmup_steps": 10,
                "decay_steps": 1000,
            },
            "clip_global_norm": 2.0,
        }
    )
    batch_arrays = {k: v[:batch] for k, v in arrays.items()}
    state = init_state(model, optimizer, batch_arrays, jax.random.key(0))
    step = jax.jit(make_train_step(model, optimizer, schedule, 0.999))
    holder = {"state": state}

    def train_once():
        holder["state"], metrics = step(holder["state"], batch_arrays, jax.random.key(1))
        jax.block_until_ready(metrics["loss"])

    train_s = time_call(train_once, repeats=train_repeats)
    coords = arrays["atom_coords"][:sample_batch]
    mask = arrays["mask"][:sample_batch]
    sample = jax.jit(
        lambda p, k: mcf_sample(model.apply, p, schedule, coords, mask, k, num_steps=50, eta=1.0)
    )
    params = holder["state"].params
    sample_s = time_call(lambda: sample(params, jax.random.key(2)), repeats=1)
    return 1.0 / train_s, len(mask) / sample_s


def bench_etkdg(test: list[dict], per_molecule: int) -> float:
    """ETKDGv3 conformers per second on the molecules of ``test``."""
    mols = [Chem.MolFromMolBlock(ex["mol_block"], removeHs=False) for ex in test]
    start = time.perf_counter()
    total = sum(len(embed_conformers(m, per_molecule, seed=0)) for m in mols)
    return total / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of about a minute")
    args = parser.parse_args(argv)
    RDLogger.DisableLog("rdApp.*")
    builder = qm9_builder("tiny" if args.quick else "subset")
    test = load_split(builder, "test")
    meta = builder.info.metadata
    scale = PositionScale(np.asarray(meta["position_min"]), np.asarray(meta["position_max"]))
    batch, sample_batch = (16, 16) if args.quick else (64, 64)
    repeats = {"tiny": 3 if args.quick else 20, "S": 3}
    arrays = pad_molecules((test * (batch // len(test) + 1))[: max(batch, sample_batch)])
    arrays["positions"] = scale.normalize(arrays["positions"], arrays["mask"])
    sizes = ("tiny",) if args.quick else ("tiny", "S")
    etkdg = bench_etkdg(test, 2 if args.quick else 10)
    print(
        f"QM9 test molecules: {len(test)}; train batch {batch}; DDIM 50 steps (η = 1) on "
        f"{sample_batch} conformers; {jax.devices()[0].platform} × {jax.device_count()}\n"
    )
    print("| generator | train steps/s | conformers/s | vs ETKDG |")
    print("|---|---|---|---|")
    print(f"| RDKit ETKDGv3 | – | {etkdg:.1f} | 1.00× |")
    for size in sizes:
        steps, confs = bench_model(size, arrays, batch, repeats[size], sample_batch)
        print(f"| MCF-{size} (DDIM 50) | {steps:.2f} | {confs:.1f} | {confs / etkdg:.2f}× |")


if __name__ == "__main__":
    main()
