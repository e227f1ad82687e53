"""QM9 conformers for MCF: a TFDS builder over the ``qm9pack`` package (offline).

Each example is one molecule with its DFT geometry (the QM9 ground state), its RDKit
graph (bonds perceived from the DFT geometry, so the atom order of the features, the
reference and every sample is the same), the MCF atom features and Laplacian
eigenfunctions, and — for test molecules — an ETKDGv3 conformer ensemble generated at
build time (the classical baseline / alternative reference).

Splits are by molecule, from a permutation with a fixed seed. Molecules the pipeline
cannot use are not dropped silently: their QM9 index, SMILES and reason are recorded in
the dataset metadata (``info.metadata["rejected"]``), together with the per-axis
normalization constants of the training split (``info.metadata["position_min"|"max"]``).

Usage::

    builder = qm9_builder("subset")            # prepared under the jaxlab cache dir
    source = builder.as_data_source()["test"]  # random access, no TensorFlow needed
"""

from __future__ import annotations

import dataclasses
import fcntl
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path

import jax
import numpy as np
import tensorflow_datasets as tfds

from jaxlab.chem.conformers import embed_conformers, mol_from_xyz
from jaxlab.chem.features import NUM_ATOM_FEATURES, MoleculeRejected, featurize
from jaxlab.chem.spectral import laplacian_eigenfunctions
from jaxlab.data.images import cache_dir

NUM_EIGENFUNCTIONS = 32
MAX_ATOMS = 29  # the largest QM9 molecule (with hydrogens)


def qm9pack_csv_files() -> list[Path]:
    """The QM9 CSV files shipped by ``qm9pack`` (located without importing the package)."""
    spec = importlib.util.find_spec("qm9pack")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("qm9pack is not installed: pip install 'jaxlab[chem]'")
    folder = Path(list(spec.submodule_search_locations)[0]) / "data"
    files = [folder / f"qm9_part{i}.csv" for i in (1, 2, 3)]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise FileNotFoundError(f"qm9pack data files missing: {missing}")
    return files


def read_qm9() -> list[tuple[int, str, str, str]]:
    """All QM9 molecules as raw ``(index, smiles, elements, xyz)`` text, by QM9 index.

    Parse a row with :func:`parse_row` (parsing lazily keeps reading the 130k rows fast).
    """
    import pandas as pd

    columns = ["Index", "SMILES", "Elements", "XYZ_Ang"]
    frames = [pd.read_csv(f, usecols=columns) for f in qm9pack_csv_files()]
    df = pd.concat(frames, ignore_index=True).sort_values("Index")
    return list(df.itertuples(index=False, name=None))


def parse_row(elements: str, xyz: str) -> tuple[list[str], np.ndarray]:
    """Element symbols and ``[N, 3]`` positions (Å) of one row of :func:`read_qm9`.

    QM9's XYZ files write some exponents in Mathematica style (``1.2*^-6``).
    """
    symbols = json.loads(elements.replace("'", '"'))
    positions = np.asarray(json.loads(xyz.replace("*^", "e")), np.float64)
    if positions.shape != (len(symbols), 3):
        raise MoleculeRejected("malformed_row", f"{len(symbols)} elements, {positions.shape}")
    return symbols, positions


_padded_eigenfunctions = jax.jit(
    lambda adjacency, mask: laplacian_eigenfunctions(adjacency, NUM_EIGENFUNCTIONS, mask)
)


def process_molecule(smiles: str, elements: list[str], positions: np.ndarray) -> dict:
    """Featurises one QM9 molecule; raises :class:`MoleculeRejected` with a reason."""
    from rdkit import Chem

    if "." in smiles:
        raise MoleculeRejected("fragments", smiles)
    parsed = Chem.MolFromSmiles(smiles)
    if parsed is None:
        raise MoleculeRejected("unparsable", smiles)
    mol = mol_from_xyz(elements, positions, charge=Chem.GetFormalCharge(parsed))
    features = featurize(mol)
    if mol.GetNumAtoms() < 2:
        raise MoleculeRejected("too_small", smiles)
    n = mol.GetNumAtoms()
    if n > MAX_ATOMS:
        raise MoleculeRejected("too_large", f"{n} atoms")
    padded = np.zeros((MAX_ATOMS, MAX_ATOMS), np.float32)
    padded[:n, :n] = features.adjacency
    eig = np.asarray(_padded_eigenfunctions(padded, np.arange(MAX_ATOMS) < n))[:n]
    return {
        "mol": mol,
        "smiles": smiles,
        "num_atoms": np.int32(mol.GetNumAtoms()),
        "elements": features.elements,
        "atom_features": features.atom_features,
        "eigenfunctions": eig.astype(np.float32),
        "positions": np.asarray(positions, np.float32),
        "mol_block": Chem.MolToMolBlock(mol),
    }


@dataclasses.dataclass
class QM9Config(tfds.core.BuilderConfig):
    """Split sizes (``None`` = the 80/10/10 split of all of QM9) and the test ensembles."""

    num_train: int | None = None
    num_validation: int | None = None
    num_test: int | None = None
    num_etkdg: int = 10
    split_seed: int = 0


class QM9Conformers(tfds.core.GeneratorBasedBuilder):
    """QM9 molecules with DFT geometries, MCF features and ETKDG test ensembles."""

    VERSION = tfds.core.Version("1.2.0")
    RELEASE_NOTES = {
        "1.1.0": "ETKDG ensembles stored as [K * N, 3].",
        "1.2.0": "The first molecule's ETKDG conformers are distinct (embed_conformers' seed).",
    }
    BUILDER_CONFIGS = [
        QM9Config(
            name="subset",
            description="2,000 / 100 / 100 molecules: CPU reproductions.",
            num_train=2000,
            num_validation=100,
            num_test=100,
        ),
        QM9Config(name="full", description="All of QM9, 80/10/10 by molecule."),
        QM9Config(
            name="tiny",
            description="32 / 4 / 4 molecules, 2 ETKDG conformers: tests and notebooks.",
            num_train=32,
            num_validation=4,
            num_test=4,
            num_etkdg=2,
        ),
    ]
    DEFAULT_CONFIG_NAME = "subset"

    def _info(self) -> tfds.core.DatasetInfo:
        features = tfds.features.FeaturesDict(
            {
                "index": np.int64,
                "smiles": tfds.features.Text(),
                "mol_block": tfds.features.Text(),
                "num_atoms": np.int32,
                "elements": tfds.features.Tensor(shape=(None,), dtype=np.int32),
                "atom_features": tfds.features.Tensor(
                    shape=(None, NUM_ATOM_FEATURES), dtype=np.float32
                ),
                "eigenfunctions": tfds.features.Tensor(
                    shape=(None, NUM_EIGENFUNCTIONS), dtype=np.float32
                ),
                "positions": tfds.features.Tensor(shape=(None, 3), dtype=np.float32),
                # K ETKDG conformers stacked as [K * N, 3] (K = 0 outside the test split).
                "etkdg_positions": tfds.features.Tensor(shape=(None, 3), dtype=np.float32),
            }
        )
        return tfds.core.DatasetInfo(
            builder=self,
            description=__doc__,
            features=features,
            metadata=tfds.core.MetadataDict(),
            homepage="https://doi.org/10.1038/sdata.2014.22",
            citation="Ramakrishnan et al., Quantum chemistry structures and properties of "
            "134 kilo molecules, Scientific Data 1, 2014.",
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # everything comes from the qm9pack package
        molecules = read_qm9()
        order = np.random.default_rng(self.builder_config.split_seed).permutation(len(molecules))
        cfg = self.builder_config
        if cfg.num_train is None:
            n_val = n_test = len(molecules) // 10
            n_train = len(molecules) - n_val - n_test
        else:
            n_train, n_val, n_test = cfg.num_train, cfg.num_validation, cfg.num_test
        if n_train + n_val + n_test > len(molecules):
            raise ValueError("the requested split sizes exceed the number of QM9 molecules")
        chunks = {
            "test": order[:n_test],
            "validation": order[n_test : n_test + n_val],
            "train": order[n_test + n_val : n_test + n_val + n_train],
        }
        self.info.metadata["rejected"] = []
        self.info.metadata["split_seed"] = cfg.split_seed
        return {
            split: self._generate_examples([molecules[i] for i in idx], split)
            for split, idx in chunks.items()
        }

    def _generate_examples(self, molecules, split) -> Iterator[tuple[int, dict]]:
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for index, smiles, elements_text, xyz_text in molecules:
            try:
                example = process_molecule(smiles, *parse_row(elements_text, xyz_text))
            except MoleculeRejected as err:
                self.info.metadata["rejected"].append(
                    {"index": index, "smiles": smiles, "split": split, "reason": err.reason}
                )
                continue
            mol = example.pop("mol")
            if split == "test":
                etkdg = embed_conformers(mol, self.builder_config.num_etkdg, seed=index)
            else:
                etkdg = np.zeros((0, mol.GetNumAtoms(), 3), np.float32)
            if split == "train":
                centered = example["positions"] - example["positions"].mean(0, keepdims=True)
                lo, hi = np.minimum(lo, centered.min(0)), np.maximum(hi, centered.max(0))
            example["etkdg_positions"] = etkdg.reshape(-1, 3)
            yield int(index), {"index": index, **example}
        if split == "train":
            self.info.metadata["position_min"] = lo.tolist()
            self.info.metadata["position_max"] = hi.tolist()


def qm9_builder(config: str = "subset", data_dir: str | os.PathLike | None = None):
    """The prepared :class:`QM9Conformers` builder (built on first use, then cached).

    Args:
      config: ``"subset"``, ``"full"`` or ``"tiny"``.
      data_dir: where TFDS keeps the prepared data; default the jaxlab cache
        (``$JAXLAB_CACHE_DIR`` or ``~/.cache/jaxlab``, see :func:`jaxlab.data.images.cache_dir`).
    """
    root = Path(data_dir) if data_dir else cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    builder = QM9Conformers(config=config, data_dir=str(root), file_format="array_record")
    if not builder.is_prepared():
        from rdkit import RDLogger

        RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]  # absent from rdkit's stubs
        with open(root / f".qm9_{config}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # parallel callers build it once
            builder.download_and_prepare()
    return builder


def load_split(builder, split: str, limit: int | None = None) -> list[dict]:
    """The examples of ``split`` as dicts of numpy arrays / str, in QM9-index order.

    ``etkdg_positions`` comes back as ``[K, N, 3]``.
    """
    source = builder.as_data_source()[split]
    examples = [source[i] for i in range(len(source))]
    for ex in examples:
        ex["etkdg_positions"] = ex["etkdg_positions"].reshape(-1, int(ex["num_atoms"]), 3)
        for key in ("smiles", "mol_block"):
            if isinstance(ex[key], bytes):
                ex[key] = ex[key].decode()
    examples.sort(key=lambda ex: int(ex["index"]))
    return examples[:limit] if limit is not None else examples


def pad_molecules(examples: list[dict], max_atoms: int = MAX_ATOMS) -> dict[str, np.ndarray]:
    """Stacks examples into padded arrays for the MCF model.

    Returns:
      ``{"atom_coords": [M, A, 75] (eigenfunctions ‖ features), "positions": [M, A, 3]
      (Å, as stored), "mask": [M, A] float32}`` with A = ``max_atoms``.
    """
    m = len(examples)
    width = NUM_EIGENFUNCTIONS + NUM_ATOM_FEATURES
    coords = np.zeros((m, max_atoms, width), np.float32)
    positions = np.zeros((m, max_atoms, 3), np.float32)
    mask = np.zeros((m, max_atoms), np.float32)
    for i, ex in enumerate(examples):
        n = int(ex["num_atoms"])
        if n > max_atoms:
            raise ValueError(f"molecule {ex.get('smiles')} has {n} atoms > max_atoms={max_atoms}")
        coords[i, :n] = np.concatenate([ex["eigenfunctions"], ex["atom_features"]], axis=-1)
        positions[i, :n] = ex["positions"]
        mask[i, :n] = 1.0
    return {"atom_coords": coords, "positions": positions, "mask": mask}
