"""MCF on QM9: train the denoiser, sample 2K conformers per test molecule, score COV/MAT.

One call is one seed: the returned COV/MAT values are this seed's means over the test
molecules (the paper's Table 1 statistic), medians beside them; the report pools them over
seeds. The per-molecule rows go to ``per_molecule.json``. Baselines on the same molecules
and references: RDKit ETKDGv3 conformers (generated when the dataset was built) and random
coordinates with the reference's centroid and radius of gyration.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec
from matplotlib.figure import Figure
from rdkit import Chem, RDLogger

from jaxlab.chem import SIZES, MCFDenoiser, coverage_matching, mcf_sample
from jaxlab.chem.conformers import random_conformers
from jaxlab.chem.features import NUM_ATOM_FEATURES
from jaxlab.chem.rmsd import best_rmsd_matrix
from jaxlab.chem.training import PositionScale, init_state, make_optimizer, make_train_step
from jaxlab.data.pipeline import batch_dataset
from jaxlab.data.qm9 import (
    MAX_ATOMS,
    NUM_EIGENFUNCTIONS,
    load_split,
    pad_molecules,
    qm9_builder,
)
from jaxlab.diffusion import cosine_beta_schedule
from jaxlab.train import fit
from jaxlab.train.data_parallel import compute_dtype, data_parallel_mesh
from jaxlab.train.mesh import DATA_AXIS
from jaxlab.train.plan import PlanSpec, abstract

METRICS = ("cov_r", "mat_r", "cov_p", "mat_p")


def _make_sampler(model, schedule, config):
    """``sample(params, coords, mask, key)``: one compiled DDIM/ancestral sampler for all calls."""
    steps = config.sampler_steps or None

    @jax.jit
    def sample(params, coords, mask, key):
        return mcf_sample(
            model.apply, params, schedule, coords, mask, key, num_steps=steps, eta=config.eta
        )

    return sample


def _sample_all(sampler, params, test_arrays, config, key) -> np.ndarray:
    """``[M, S, A, 3]`` normalised samples: S = samples_per_reference per test molecule."""
    reps = config.samples_per_reference
    coords = np.repeat(test_arrays["atom_coords"], reps, axis=0)
    mask = np.repeat(test_arrays["mask"], reps, axis=0)
    chunk = config.eval_batch_size
    out = []
    for i, start in enumerate(range(0, len(mask), chunk)):
        c, m = coords[start : start + chunk], mask[start : start + chunk]
        pad = chunk - len(m)  # a fixed chunk shape compiles once
        c = np.concatenate([c, np.zeros((pad,) + c.shape[1:], c.dtype)])
        m = np.concatenate([m, np.zeros((pad,) + m.shape[1:], m.dtype)])
        m[len(m) - pad :, 0] = 1.0  # dummy rows need one real atom
        out.append(np.asarray(sampler(params, c, m, jax.random.fold_in(key, i)))[: chunk - pad])
    samples = np.concatenate(out)
    return samples.reshape((-1, reps) + samples.shape[1:])


def _score(test, samples, scale, threshold) -> list[dict[str, float]]:
    """COV/MAT rows of MCF's samples against each test molecule's reference."""
    rows = []
    for i, ex in enumerate(test):
        n = int(ex["num_atoms"])
        mol = Chem.MolFromMolBlock(ex["mol_block"], removeHs=False)
        rmsd = best_rmsd_matrix(mol, ex["positions"][None], scale.denormalize(samples[i, :, :n]))
        rows.append(coverage_matching(rmsd, threshold))
    return rows


def _plot_curve(workdir: Path, curve: list[dict], results: dict) -> None:
    """COV-R and MAT-R of MCF against training steps, with ETKDGv3 and random as lines."""
    steps = [row["step"] for row in curve]
    fig = Figure(figsize=(8, 3.2))
    axes = fig.subplots(1, 2)
    for ax, name, label in ((axes[0], "mat_r", "MAT-R mean (Å)"),
                            (axes[1], "cov_r", "COV-R mean (δ = 0.5 Å)")):
        ax.plot(steps, [row[name] for row in curve], "o-", label="MCF (EMA)")
        for prefix, style, text in (("etkdg_", "--", "ETKDGv3"), ("random_", ":", "random")):
            ax.axhline(results[f"{prefix}{name}"], ls=style, color="gray",
                       label=text)
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(workdir / "mcf_qm9_learning_curve.png", dpi=120)


def _summarize(prefix: str, rows: list[dict[str, float]]) -> dict[str, float]:
    """This seed's mean and median of each COV/MAT metric over the test molecules."""
    out = {}
    for name in METRICS:
        values = [r[name] for r in rows]
        out[f"{prefix}{name}"] = float(np.mean(values)) if values else float("nan")
        out[f"{prefix}{name}_median"] = float(np.median(values)) if values else float("nan")
    return out


def _plot(workdir: Path, rows: dict[str, list[dict[str, float]]]) -> None:
    """Histograms of MAT-R per molecule: MCF, ETKDGv3 and random coordinates."""
    fig = Figure(figsize=(5, 3.2))
    ax = fig.subplots()
    bins = np.linspace(0, 3, 31)
    for prefix, label in (("", "MCF"), ("etkdg_", "ETKDGv3"), ("random_", "random")):
        ax.hist([r["mat_r"] for r in rows[prefix]], bins=bins, alpha=0.5, label=label)
    ax.axvline(0.5, color="k", ls="--", lw=1)
    ax.set_xlabel("MAT-R per molecule (Å)")
    ax.set_ylabel("molecules")
    ax.legend()
    fig.tight_layout()
    fig.savefig(workdir / "mcf_qm9_mat_r.png", dpi=120)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Trains MCF on the QM9 split of ``config.dataset`` and scores it on the test split."""
    RDLogger.DisableLog("rdApp.*")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    rng = jax.random.key(config.seed)
    init_rng, train_rng, sample_rng = jax.random.split(rng, 3)

    # ---------------------------------------------------------------- data
    builder = qm9_builder(config.dataset, config.data_dir or None)
    meta = builder.info.metadata
    scale = PositionScale(np.asarray(meta["position_min"]), np.asarray(meta["position_max"]))
    train = load_split(builder, "train", config.num_train or None)
    test = load_split(builder, "test", config.num_test or None)
    train_arrays = pad_molecules(train)
    train_arrays["positions"] = scale.normalize(train_arrays["positions"], train_arrays["mask"])
    test_arrays = pad_molecules(test)
    rejected = list(meta["rejected"])
    (workdir / "rejected.json").write_text(json.dumps(rejected, indent=1))

    # ---------------------------------------------------------------- model
    model = MCFDenoiser(SIZES[config.model_size], dtype=compute_dtype(config.compute_dtype))
    schedule = cosine_beta_schedule(config.num_diffusion_steps)
    optimizer = make_optimizer(
        config.learning_rate, config.warmup_steps, config.num_steps, config.grad_clip
    )
    example = {k: v[:1] for k, v in train_arrays.items()}
    state = init_state(model, optimizer, example, init_rng)
    dataset = batch_dataset(train_arrays, config.batch_size, config.seed)

    # ---------------------------------------------------------------- train
    # Data parallel over this process's devices (one device: a 1-device mesh, same path).
    mesh = data_parallel_mesh(config.batch_size) if config.data_parallel else None
    sampler = _make_sampler(model, schedule, config)
    curve_test = test[: config.curve_num_test or len(test)]
    curve_arrays = pad_molecules(curve_test)

    def learning_curve_point(state) -> dict[str, float]:
        """COV-R / MAT-R of the EMA model at this step (the final step is the main eval)."""
        if int(state.step) >= config.num_steps:
            return {}
        samples = _sample_all(sampler, state.ema_params, curve_arrays, config,
                              jax.random.fold_in(sample_rng, int(state.step)))
        rows = _score(curve_test, samples, scale, config.threshold)
        return {f"curve_{m}": float(np.mean([r[m] for r in rows])) for m in ("cov_r", "mat_r")}

    start = time.perf_counter()
    state, history = fit(
        state=state,
        train_step=make_train_step(model, optimizer, schedule, config.ema_decay),
        batch_at=lambda step: dataset[step],
        num_steps=config.num_steps,
        key=train_rng,
        workdir=workdir,
        desc="mcf_qm9",
        hparams=config.to_dict(),
        mesh=mesh,
        checkpoint_every=config.checkpoint_every,
        eval_fn=learning_curve_point if config.curve_every else None,
        eval_every=config.curve_every,
    )
    train_s = time.perf_counter() - start

    # ---------------------------------------------------------------- sample
    samples = _sample_all(sampler, state.ema_params, test_arrays, config, sample_rng)

    # ---------------------------------------------------------------- evaluate
    rows = {"": [], "etkdg_": [], "random_": []}
    etkdg_failures = []
    np_rng = np.random.default_rng(config.seed)
    reps = config.samples_per_reference
    for i, ex in enumerate(test):
        n = int(ex["num_atoms"])
        mol = Chem.MolFromMolBlock(ex["mol_block"], removeHs=False)
        reference = ex["positions"][None]
        generated = scale.denormalize(samples[i, :, :n])
        candidates = {"": generated, "random_": random_conformers(ex["positions"], reps, np_rng)}
        if len(ex["etkdg_positions"]) >= reps:
            candidates["etkdg_"] = ex["etkdg_positions"][:reps]
        else:
            etkdg_failures.append(ex["smiles"])
        for prefix, gen in candidates.items():
            rmsd = best_rmsd_matrix(mol, reference, gen)
            rows[prefix].append(coverage_matching(rmsd, config.threshold))

    results: dict = {}
    for prefix, values in rows.items():
        results.update(_summarize(prefix, values))
    results.update(
        num_test_molecules=float(len(test)),
        num_rejected=float(len(rejected)),
        etkdg_failures=float(len(etkdg_failures)),
        train_s=train_s,
    )
    (workdir / "per_molecule.json").write_text(
        json.dumps(
            {
                "smiles": [ex["smiles"] for ex in test],
                **{f"{p}{m}": [r[m] for r in v] for p, v in rows.items() for m in METRICS},
                "etkdg_failures": etkdg_failures,
            },
            indent=1,
        )
    )
    _plot(workdir, rows)
    if config.curve_every:
        # The learning curve: the evaluations during training, then the final one (on the
        # curve's molecules, so that every point is measured on the same set).
        final_rows = [{m: rows[""][i][m] for m in METRICS} for i in range(len(curve_test))]
        curve = [{"step": r["step"], "cov_r": r["curve_cov_r"], "mat_r": r["curve_mat_r"]}
                 for r in history if "curve_mat_r" in r]
        final = {m: float(np.mean([r[m] for r in final_rows])) for m in ("cov_r", "mat_r")}
        curve.append({"step": config.num_steps, **final})
        for row in curve:
            for m in ("cov_r", "mat_r"):
                results[f"curve_{m}_step{row['step']}"] = row[m]
        (workdir / "learning_curve.json").write_text(json.dumps({
            "num_molecules": len(curve_test), "points": curve,
            **{f"{p}{m}": results[f"{p}{m}"]
               for p in ("etkdg_", "random_") for m in ("cov_r", "mat_r")}}, indent=1))
        _plot_curve(workdir, curve, results)
    return results



def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one training step of the denoiser (``make_train_step``, what
    ``fit`` calls), the batch split over ``data``, the state replicated (as
    ``fit(mesh=...)`` places them). Sampling and scoring (host RDKit) are not planned."""
    model = MCFDenoiser(SIZES[config.model_size], dtype=compute_dtype(config.compute_dtype))
    schedule = cosine_beta_schedule(config.num_diffusion_steps)
    optimizer = make_optimizer(
        config.learning_rate, config.warmup_steps, config.num_steps, config.grad_clip
    )
    width = NUM_EIGENFUNCTIONS + NUM_ATOM_FEATURES

    def batch(size):
        return {"atom_coords": jax.ShapeDtypeStruct((size, MAX_ATOMS, width), jnp.float32),
                "positions": jax.ShapeDtypeStruct((size, MAX_ATOMS, 3), jnp.float32),
                "mask": jax.ShapeDtypeStruct((size, MAX_ATOMS), jnp.float32)}

    key = jax.eval_shape(lambda: jax.random.key(0))
    state = jax.eval_shape(lambda e, k: init_state(model, optimizer, e, k), batch(1), key)
    rows = NamedSharding(mesh, PartitionSpec(DATA_AXIS if DATA_AXIS in mesh.axis_names
                                             else None))
    rep = NamedSharding(mesh, PartitionSpec())
    return PlanSpec(
        fn=make_train_step(model, optimizer, schedule, config.ema_decay),
        abstract_args=(abstract(state, rep), abstract(batch(config.batch_size), rows),
                       abstract(key, rep)),
        steps_per_run=config.num_steps, num_runs=config.num_seeds,
        note=f"one MCF denoiser step (size {config.model_size}, {config.compute_dtype}, "
        f"batch {config.batch_size} of {MAX_ATOMS}-atom molecules); sampling and RDKit "
        "scoring not planned")
