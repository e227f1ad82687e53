"""MCF on QM9: train the denoiser, sample 2K conformers per test molecule, score COV/MAT.

Two inputs, chosen by ``config.dataset``: the in-memory ``qm9pack`` builds (``"subset"``,
``"tiny"``; quick and smoke: one DFT reference per molecule) and GEOM-QM9
(``"geom/qm9"``, the paper preset: the TFDS ``geom`` builder streamed by grain over the
mesh's ``data`` axis, CREST ensembles as references, the 2K samples of every test molecule
split over ``data``).

One call is one seed: the returned COV/MAT values are this seed's means over the test
molecules (the paper's Table 1 statistic), medians beside them; the report pools them over
seeds. The per-molecule rows go to ``per_molecule.json``. Baselines on the same molecules
and references: RDKit ETKDGv3 conformers (generated when the dataset was built) and random
coordinates with the reference's centroid and radius of gyration.
"""

from __future__ import annotations

import time
from pathlib import Path

import grain
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from matplotlib.figure import Figure
from rdkit import Chem, RDLogger

import jaxlab.data.tfds_builders  # noqa: F401  (registers the "geom" TFDS builder)
from jaxlab.chem import SIZES, MCFDenoiser, coverage_matching, mcf_sample
from jaxlab.chem.conformers import embed_conformers, random_conformers
from jaxlab.chem.features import NUM_ATOM_FEATURES
from jaxlab.chem.rmsd import best_rmsd_matrix, kabsch_rmsd
from jaxlab.chem.training import PositionScale, init_state, make_train_step
from jaxlab.data.pipeline import batch_dataset
from jaxlab.data.qm9 import (
    MAX_ATOMS,
    NUM_EIGENFUNCTIONS,
    load_split,
    pad_molecules,
    qm9_builder,
)
from jaxlab.data.streaming import eval_batches, make_loader, open_source
from jaxlab.diffusion import cosine_beta_schedule
from jaxlab.train import (
    DeviceStream,
    atomic_write_json,
    batch_sharding,
    compute_dtype,
    device_batches,
    fit,
    make_optimizer,
    mesh_from_config,
    replicated,
    to_host,
)
from jaxlab.train.mesh import DATA_AXIS
from jaxlab.train.plan import PlanSpec, abstract

METRICS = ("cov_r", "mat_r", "cov_p", "mat_p")


def optimizer_spec(config: ml_collections.ConfigDict) -> dict:
    """The paper's optimiser as a :func:`jaxlab.train.make_optimizer` entry: AdamW whose rate
    warms up linearly from 0 to ``learning_rate`` over ``warmup_steps`` (at least 1) and then
    decays by a cosine to 0 at ``num_steps``, after clipping to ``clip_global_norm``.

    Example:
      >>> import ml_collections
      >>> from jaxlab_experiments.mcf.mcf_qm9.train import optimizer_spec
      >>> c = ml_collections.ConfigDict(
      ...     dict(learning_rate=1e-3, warmup_steps=5, num_steps=3, clip_global_norm=2.0))
      >>> optimizer_spec(c)["learning_rate"]["decay_steps"]  # past the warm-up
      6
    """
    return {
        "name": "adamw",
        "learning_rate": {
            "name": "warmup_cosine_decay_schedule",
            "init_value": 0.0,
            "peak_value": config.learning_rate,
            "warmup_steps": max(config.warmup_steps, 1),
            "decay_steps": max(config.num_steps, config.warmup_steps + 1),
        },
        "clip_global_norm": config.clip_global_norm,
    }


def _make_sampler(model, schedule, config, steps: int | None = None):
    """``sample(params, coords, mask, key)``: one compiled DDIM/ancestral sampler for all calls
    (``steps`` DDIM steps, default ``config.sampler_steps``; 0: the full ancestral chain)."""
    steps = (config.sampler_steps if steps is None else steps) or None

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
    for ax, name, label in (
        (axes[0], "mat_r", "MAT-R mean (Å)"),
        (axes[1], "cov_r", "COV-R mean (δ = 0.5 Å)"),
    ):
        ax.plot(steps, [row[name] for row in curve], "o-", label="MCF (EMA)")
        for prefix, style, text in (("etkdg_", "--", "ETKDGv3"), ("random_", ":", "random")):
            ax.axhline(results[f"{prefix}{name}"], ls=style, color="gray", label=text)
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
    """Trains MCF on the train split of ``config.dataset`` and scores it on the test split."""
    RDLogger.DisableLog("rdApp.*")
    if config.dataset.startswith("geom/"):
        return _train_and_evaluate_geom(config, Path(workdir))
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
    atomic_write_json(workdir / "rejected.json", rejected)

    # ---------------------------------------------------------------- model
    model = MCFDenoiser(SIZES[config.model_size], dtype=compute_dtype(config))
    schedule = cosine_beta_schedule(config.num_diffusion_steps)
    optimizer = make_optimizer(optimizer_spec(config))
    example = {k: v[:1] for k, v in train_arrays.items()}
    state = init_state(model, optimizer, example, init_rng)
    dataset = batch_dataset(train_arrays, config.batch_size, config.seed)

    # ---------------------------------------------------------------- train
    # Data parallel over every device of every process (one device: a 1-device mesh, the
    # same path); each process's ``dataset[step]`` is its own rows of the global batch.
    mesh = mesh_from_config(config, DATA_AXIS)
    sampler = _make_sampler(model, schedule, config)
    curve_test = test[: config.curve_num_test or len(test)]
    curve_arrays = pad_molecules(curve_test)

    def learning_curve_point(state) -> dict[str, float]:
        """COV-R / MAT-R of the EMA model at this step (the final step is the main eval)."""
        if int(state.step) >= config.num_steps:
            return {}
        samples = _sample_all(
            sampler,
            state.ema_params,
            curve_arrays,
            config,
            jax.random.fold_in(sample_rng, int(state.step)),
        )
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
    atomic_write_json(
        workdir / "per_molecule.json",
        {
            "smiles": [ex["smiles"] for ex in test],
            **{f"{p}{m}": [r[m] for r in v] for p, v in rows.items() for m in METRICS},
            "etkdg_failures": etkdg_failures,
        },
    )
    _plot(workdir, rows)
    if config.curve_every:
        # The learning curve: the evaluations during training, then the final one (on the
        # curve's molecules, so that every point is measured on the same set).
        final_rows = [{m: rows[""][i][m] for m in METRICS} for i in range(len(curve_test))]
        curve = [
            {"step": r["step"], "cov_r": r["curve_cov_r"], "mat_r": r["curve_mat_r"]}
            for r in history
            if "curve_mat_r" in r
        ]
        final = {m: float(np.mean([r[m] for r in final_rows])) for m in ("cov_r", "mat_r")}
        curve.append({"step": config.num_steps, **final})
        for row in curve:
            for m in ("cov_r", "mat_r"):
                results[f"curve_{m}_step{row['step']}"] = row[m]
        atomic_write_json(
            workdir / "learning_curve.json",
            {
                "num_molecules": len(curve_test),
                "points": curve,
                **{
                    f"{p}{m}": results[f"{p}{m}"]
                    for p in ("etkdg_", "random_")
                    for m in ("cov_r", "mat_r")
                },
            },
        )
        _plot_curve(workdir, curve, results)
    return results


# ==================================================================== GEOM (paper preset)


def _geom_inputs(record: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """A ``geom/qm9`` record's MCF input: ``(atom_coords [A, 75], atom_mask [A], n)``,
    eigenfunctions ‖ atom features of its n atoms padded to A = ``MAX_ATOMS``.

    n is the record's atom count, bounded by the stored feature rows and by A (equal in
    the builder's records, a dry run's mock records included); at least one atom is marked
    real so that every row is a molecule.
    """
    eig, feats = np.asarray(record["eigenfunctions"]), np.asarray(record["atom_features"])
    n = min(int(record["num_atoms"]), len(eig), len(feats), MAX_ATOMS)
    coords = np.zeros((MAX_ATOMS, NUM_EIGENFUNCTIONS + NUM_ATOM_FEATURES), np.float32)
    coords[:n] = np.concatenate([eig[:n], feats[:n]], axis=-1)
    mask = np.zeros(MAX_ATOMS, np.float32)
    mask[: max(n, 1)] = 1.0
    return coords, mask, max(n, 1)


def _geom_conformers(record: dict, n: int) -> np.ndarray:
    """The record's K stored conformers as ``[K, n, 3]`` (Å); the builder stacks them as
    ``[K * n, 3]`` (rows short of whole blocks are zero-padded, extra rows cut)."""
    flat = np.asarray(record["conformers"], np.float32).reshape(-1, 3)
    k = max(len(flat) // n, 1)
    if len(flat) < k * n:
        flat = np.concatenate([flat, np.zeros((k * n - len(flat), 3), np.float32)])
    return flat[: k * n].reshape(k, n, 3)


def _normalize(positions: np.ndarray, scale: PositionScale) -> np.ndarray:
    """``positions [n, 3]`` centred, min–max scaled per axis to [−1, 1] and centred again:
    :meth:`jaxlab.chem.training.PositionScale.normalize` of one molecule, in numpy (it runs
    in grain's worker processes)."""
    centered = positions - positions.mean(axis=0, keepdims=True)
    scaled = 2.0 * (centered - scale.minimum) / (scale.maximum - scale.minimum) - 1.0
    return (scaled - scaled.mean(axis=0, keepdims=True)).astype(np.float32)


class _TrainConformer(grain.transforms.RandomMap):
    """One training example of a ``geom/qm9`` molecule: one of its first ``max_confs``
    stored conformers at random (the builder stores them in a random order, so this is a
    random one of a random subset of ``max_confs``, as MCF's ``max_confs`` reads them),
    normalized, beside the molecule's MCF input."""

    def __init__(self, scale: PositionScale, max_confs: int):
        self.scale, self.max_confs = scale, max_confs

    def random_map(self, element: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
        coords, mask, n = _geom_inputs(element)
        conformers = _geom_conformers(element, n)
        pick = conformers[int(rng.integers(min(len(conformers), self.max_confs)))]
        positions = np.zeros((MAX_ATOMS, 3), np.float32)
        positions[:n] = _normalize(pick, self.scale)
        return {"atom_coords": coords, "positions": positions, "mask": mask}


class _SampleRows:
    """Random-access rows to sample: row r is a copy of molecule ``owners[r]``'s input."""

    def __init__(self, inputs: list[tuple[np.ndarray, np.ndarray]], owners: list[int]):
        self.inputs, self.owners = inputs, owners

    def __len__(self) -> int:
        return len(self.owners)

    def __getitem__(self, row: int) -> dict[str, np.ndarray]:
        coords, mask = self.inputs[self.owners[row]]
        return {"atom_coords": coords, "atom_mask": mask, "row": np.int32(row)}


def _geom_molecules(source, limit: int) -> list[dict]:
    """The first ``limit`` (0: all) molecules of a ``geom`` split, read on the host:
    their MCF input, reference conformers ``[K, n, 3]`` (Å), SMILES and RDKit molecule
    (``None`` where the mol block does not parse or disagrees with ``num_atoms``)."""
    out = []
    for i in range(min(len(source), limit or len(source))):
        record = source[i]
        coords, mask, n = _geom_inputs(record)
        block = record["mol_block"]
        block = block.decode() if isinstance(block, bytes) else str(block)
        mol = Chem.MolFromMolBlock(block, removeHs=False)
        smiles = record["smiles"]
        out.append(
            {
                "coords": coords,
                "mask": mask,
                "n": n,
                "references": _geom_conformers(record, n),
                "smiles": smiles.decode() if isinstance(smiles, bytes) else str(smiles),
                "mol": mol if mol is not None and mol.GetNumAtoms() == n else None,
            }
        )
    return out


def _sample_molecules(
    sampler, params, molecules: list[dict], config, mesh, key
) -> list[np.ndarray]:
    """``samples_per_reference``·K normalized samples ``[2K, n, 3]`` per molecule, the rows
    of all molecules streamed in batches of ``eval_batch_size`` split over the mesh's
    ``data`` axis (a dry run samples one batch; a molecule then keeps the rows it got)."""
    reps = config.samples_per_reference
    owners = [m for m, mol in enumerate(molecules) for _ in range(reps * len(mol["references"]))]
    rows = _SampleRows([(mol["coords"], mol["mask"]) for mol in molecules], owners)
    batches = eval_batches(
        rows, [], global_batch=config.eval_batch_size, max_batches=1 if config.dry_run else None
    )
    got: dict[int, np.ndarray] = {}
    for i, batch in enumerate(device_batches(batches, mesh)):
        x = sampler(params, batch["atom_coords"], batch["atom_mask"], jax.random.fold_in(key, i))
        host = to_host({"x": x, "row": batch["row"], "real": batch["mask"]})
        for x_row, row, real in zip(host["x"], host["row"], host["real"], strict=True):
            if real > 0:
                got[int(row)] = x_row
    per_molecule: list[list[np.ndarray]] = [[] for _ in molecules]
    for row in sorted(got):
        mol = molecules[owners[row]]
        per_molecule[owners[row]].append(got[row][: mol["n"]])
    return [
        np.stack(s) if s else np.zeros((0, mol["n"], 3), np.float32)
        for s, mol in zip(per_molecule, molecules, strict=True)
    ]


def _rmsd_matrix(mol, references: np.ndarray, generated: np.ndarray) -> np.ndarray:
    """Heavy-atom, symmetry-aware best RMSD (RDKit ``GetBestRMS``, the paper's metric); for a
    record without a usable molecule (counted in ``num_unparsable``) the all-atom Kabsch
    RMSD."""
    if mol is not None:
        return best_rmsd_matrix(mol, references, generated)
    return np.asarray([[float(kabsch_rmsd(g, r)) for g in generated] for r in references])


def _score_geom(
    molecules: list[dict], samples: list[np.ndarray], scale: PositionScale, config, baselines: bool
) -> tuple[dict[str, list[dict]], int]:
    """COV/MAT rows per molecule of MCF (and, with ``baselines``, of ETKDGv3 and random
    coordinates, 2K each) against the molecule's K reference conformers; and the number
    of molecules without any sample (skipped)."""
    rows: dict[str, list[dict]] = {"": [], "etkdg_": [], "random_": []}
    np_rng = np.random.default_rng(config.seed)
    skipped = 0
    for i, (mol, generated) in enumerate(zip(molecules, samples, strict=True)):
        if not len(generated):
            skipped += 1
            continue
        refs = mol["references"]
        candidates = {"": scale.denormalize(generated)}
        if baselines:
            count = config.samples_per_reference * len(refs)
            candidates["random_"] = random_conformers(refs[0], count, np_rng)
            if mol["mol"] is not None:
                etkdg = embed_conformers(Chem.Mol(mol["mol"]), count, seed=config.seed + i)
                if len(etkdg):
                    candidates["etkdg_"] = etkdg
        for prefix, gen in candidates.items():
            rows[prefix].append(
                coverage_matching(_rmsd_matrix(mol["mol"], refs, gen), config.threshold)
            )
    return rows, skipped


def _train_and_evaluate_geom(config: ml_collections.ConfigDict, workdir: Path) -> dict:
    """The paper preset: MCF on GEOM-QM9 (``geom/qm9``) streamed over ``config.mesh``,
    scored on the test molecules' CREST ensembles with 2K samples each."""
    workdir.mkdir(parents=True, exist_ok=True)
    rng = jax.random.key(config.seed)
    init_rng, train_rng, sample_rng = jax.random.split(rng, 3)
    mesh = mesh_from_config(config, DATA_AXIS)
    scale = PositionScale(
        np.asarray(config.position_min, np.float32), np.asarray(config.position_max, np.float32)
    )

    # ---------------------------------------------------------------- data
    train_source = open_source(config.dataset, "train", data_dir=config.data_dir or None)
    loader = make_loader(
        train_source,
        [_TrainConformer(scale, config.max_confs)],
        global_batch=config.batch_size,
        seed=config.seed,
        workers=config.data_workers,
    )
    stream = DeviceStream(loader, mesh)
    test = _geom_molecules(
        open_source(config.dataset, "test", data_dir=config.data_dir or None), config.num_test
    )
    validation = (
        _geom_molecules(
            open_source(config.dataset, "validation", data_dir=config.data_dir or None),
            config.curve_num_test,
        )
        if config.curve_every
        else []
    )

    # ---------------------------------------------------------------- model
    model = MCFDenoiser(SIZES[config.model_size], dtype=compute_dtype(config))
    schedule = cosine_beta_schedule(config.num_diffusion_steps)
    optimizer = make_optimizer(optimizer_spec(config))
    width = NUM_EIGENFUNCTIONS + NUM_ATOM_FEATURES
    example = {
        "atom_coords": np.zeros((1, MAX_ATOMS, width), np.float32),
        "positions": np.zeros((1, MAX_ATOMS, 3), np.float32),
        "mask": np.ones((1, MAX_ATOMS), np.float32),
    }
    state = init_state(model, optimizer, example, init_rng)
    validation_sampler = _make_sampler(model, schedule, config, config.curve_sampler_steps)

    def validate(state) -> dict[str, float]:
        """COV-R / MAT-R of the EMA model on the validation molecules (the reference's
        online validation: DDIM, ``curve_sampler_steps`` steps)."""
        if int(state.step) >= config.num_steps:
            return {}
        samples = _sample_molecules(
            validation_sampler,
            state.ema_params,
            validation,
            config,
            mesh,
            jax.random.fold_in(sample_rng, int(state.step)),
        )
        rows, _ = _score_geom(validation, samples, scale, config, baselines=False)
        return {
            f"val_{m}": float(np.mean([r[m] for r in rows[""]])) if rows[""] else float("nan")
            for m in ("cov_r", "mat_r")
        }

    # ---------------------------------------------------------------- train
    start = time.perf_counter()
    try:
        state, history = fit(
            state=state,
            train_step=make_train_step(model, optimizer, schedule, config.ema_decay),
            batches=stream,
            num_steps=config.num_steps,
            key=train_rng,
            workdir=workdir,
            desc="mcf_qm9",
            hparams=config.to_dict(),
            mesh=mesh,
            checkpoint_every=config.checkpoint_every,
            eval_fn=validate if config.curve_every else None,
            eval_every=config.curve_every,
        )
    finally:
        stream.close()
    train_s = time.perf_counter() - start

    # ---------------------------------------------------------------- sample and evaluate
    sampler = _make_sampler(model, schedule, config)
    samples = _sample_molecules(sampler, state.ema_params, test, config, mesh, sample_rng)
    rows, skipped = _score_geom(test, samples, scale, config, baselines=True)
    results: dict = {}
    for prefix, values in rows.items():
        results.update(_summarize(prefix, values))
    info = getattr(train_source, "dataset_info", None)
    rejected = list((getattr(info, "metadata", None) or {}).get("rejected", []))
    results.update(
        num_test_molecules=float(len(test) - skipped),
        num_rejected=float(len(rejected)),
        etkdg_failures=float(len(rows[""]) - len(rows["etkdg_"])),
        num_unparsable=float(sum(mol["mol"] is None for mol in test)),
        train_s=train_s,
    )
    for row in history:
        for m in ("cov_r", "mat_r"):
            if f"val_{m}" in row:
                results[f"val_{m}_step{row['step']}"] = row[f"val_{m}"]
    atomic_write_json(
        workdir / "per_molecule.json",
        {
            "smiles": [mol["smiles"] for mol, s in zip(test, samples, strict=True) if len(s)],
            **{f"{p}{m}": [r[m] for r in v] for p, v in rows.items() for m in METRICS},
        },
    )
    atomic_write_json(workdir / "rejected.json", rejected)
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one training step of the denoiser (``make_train_step``, what
    ``fit`` calls), the batch split over ``data``, the state replicated (as
    ``fit(mesh=...)`` places them). The final sampling (``samples_per_reference`` per test
    molecule, ``eval_batch_size`` a call; ``num_test`` 0 is GeoMol's 1,000 molecules) is a
    program of its own; the learning curve's samples and scoring (host RDKit) are not
    planned."""
    model = MCFDenoiser(SIZES[config.model_size], dtype=compute_dtype(config))
    schedule = cosine_beta_schedule(config.num_diffusion_steps)
    optimizer = make_optimizer(optimizer_spec(config))
    width = NUM_EIGENFUNCTIONS + NUM_ATOM_FEATURES

    def batch(size):
        return {
            "atom_coords": jax.ShapeDtypeStruct((size, MAX_ATOMS, width), jnp.float32),
            "positions": jax.ShapeDtypeStruct((size, MAX_ATOMS, 3), jnp.float32),
            "mask": jax.ShapeDtypeStruct((size, MAX_ATOMS), jnp.float32),
        }

    key = jax.eval_shape(lambda: jax.random.key(0))
    state = jax.eval_shape(lambda e, k: init_state(model, optimizer, e, k), batch(1), key)
    rep = replicated(mesh)
    rows = batch_sharding(mesh) if DATA_AXIS in mesh.axis_names else rep
    size = config.eval_batch_size
    chunk = batch(size)
    sampling = PlanSpec(
        fn=_make_sampler(model, schedule, config),
        abstract_args=(
            abstract(state.ema_params, rep),
            abstract(chunk["atom_coords"], rep),
            abstract(chunk["mask"], rep),
            abstract(key, rep),
        ),
        steps_per_run=-(-(config.num_test or 1000) * config.samples_per_reference // size),
        num_runs=config.num_seeds,
        note=f"{config.sampler_steps or config.num_diffusion_steps} sampler steps of {size} "
        "conformers",
        name="sample",
    )
    return PlanSpec(
        fn=make_train_step(model, optimizer, schedule, config.ema_decay),
        abstract_args=(
            abstract(state, rep),
            abstract(batch(config.batch_size), rows),
            abstract(key, rep),
        ),
        steps_per_run=config.num_steps,
        num_runs=config.num_seeds,
        note=f"one MCF denoiser step (size {config.model_size}, {config.compute_dtype}, "
        f"batch {config.batch_size} of {MAX_ATOMS}-atom molecules); learning curve and RDKit "
        "scoring not planned",
        programs=(sampling,),
    )
