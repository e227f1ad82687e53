"""GEOM conformer ensembles (``geom/qm9``, ``geom/drugs``): a TFDS builder over GEOM's
``rdkit_folder`` archive, split as GeoMol / Torsional Diffusion / MCF split it.

Source: Axelrod & Gómez-Bombarelli, "GEOM, energy-annotated molecular conformations for
property prediction and molecular generation", Scientific Data 9, 2022; the archive
``rdkit_folder.tar.gz`` (Harvard Dataverse, doi:10.7910/DVN/JNGTDF, file 4327252) holds one
pickle per molecule (``rdkit_folder/<qm9|drugs>/<name>.pickle``: its SMILES and its CREST
conformers as RDKit molecules with hydrogens and coordinates, with Boltzmann weights) and
``summary_<qm9|drugs>.json`` (SMILES → pickle path).

Splits (the ones every conformer-generation paper since GeoMol uses, MCF's
``process_data.py`` included): ``split0.npy`` of GeoMol (Ganea et al., NeurIPS 2021;
``github.com/PattanaikL/GeoMol``, ``data/<QM9|DRUGS>/splits/split0.npy``) holds the train /
validation / test indices into the sorted list of the folder's pickles; the test split here
is GeoMol's ``test_smiles.csv`` (1,000 molecules, the test set of GeoMol, Torsional
Diffusion and MCF's ``test_1000``), read through the summary file.

Checksums: the two GeoMol files are pinned to commit ``368da546`` with their SHA-256
(computed from the git blobs of that commit). Harvard Dataverse publishes an MD5 for the
archive, not a SHA-256, so its download is not pinned here (``tfds build
--register_checksums`` records one); a copy placed in ``manual_dir`` is used instead of a
download: ``rdkit_folder/`` (extracted) or ``rdkit_folder.tar.gz``, and optionally
``<qm9|drugs>_split0.npy`` and ``<qm9|drugs>_test_smiles.csv``.

Each example is one molecule:

- ``smiles`` (GEOM's), ``mol_block`` (the RDKit graph with hydrogens and the first stored
  conformer's coordinates), ``num_atoms`` N, ``num_conformers`` K, ``atomic_numbers [N]``;
- ``conformers [K * N, 3]`` (Å; K stacked blocks of N rows, in the atom order of
  ``mol_block``), in a per-molecule random order (seeded by the SMILES), so the first
  ``max_confs`` are a random subset, as MCF's training reads them;
- ``boltzmann_weights [K]``;
- ``qm9`` only: MCF's model inputs, ``atom_features [N, 43]``
  (:func:`jaxlab.chem.features.featurize`) and ``eigenfunctions [N, 32]``
  (:func:`jaxlab.chem.spectral.laplacian_eigenfunctions`). ``drugs`` stores the ensembles
  only: MCF's DRUGS features one-hot 35 elements, which :mod:`jaxlab.chem.features` does
  not featurise.

Molecules are skipped as MCF's preprocessing skips them (unparsable or fragmented SMILES,
no conformer whose atoms all have ≤ 4 neighbours) and, for ``qm9``, where the featuriser
rejects them; each skip is listed in ``info.metadata["rejected"]``.

    import jaxlab.data.tfds_builders  # registers "geom"
    source = jaxlab.data.streaming.open_source("geom/qm9", "train")

Under :func:`jaxlab.data.streaming.mock_datasets` (a dry run), :func:`mock_example` gives
each record a real small molecule instead of random features, so that a dry run parses its
mol blocks, scores with RDKit and runs the ETKDG baseline as a real run does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow_datasets as tfds

__all__ = ["ARCHIVE_URL", "Geom", "GeomConfig", "mock_example", "molecule_example"]

ARCHIVE_URL = "https://dataverse.harvard.edu/api/access/datafile/4327252"
_GEOMOL = (
    "https://raw.githubusercontent.com/PattanaikL/GeoMol/"
    "368da546d8f25e20c155781994ad2ecfc70e7baf/data"
)
MAX_NEIGHBOURS = 4  # MCF's preprocessing skips conformers with a 5-coordinated atom
# QM9-sized molecules (at most 9 heavy atoms of C, N, O, F) for mock records.
MOCK_SMILES = ("CCO", "CC(=O)O", "c1ccoc1", "CC#N", "OCC1CC1", "CN(C)C=O", "C1CCOC1", "FC(F)CO")
MOCK_CONFORMERS = 3


@dataclasses.dataclass
class GeomConfig(tfds.core.BuilderConfig):
    """One GEOM subset: its folder in the archive, GeoMol's split files and their SHA-256."""

    folder: str = "qm9"
    split_url: str = ""
    split_sha256: str = ""
    test_url: str = ""
    test_sha256: str = ""
    mcf_features: bool = False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _order(smiles: str, count: int) -> np.ndarray:
    """The per-molecule conformer order: a permutation seeded by the SMILES."""
    return np.random.default_rng(zlib.crc32(smiles.encode())).permutation(count)


def molecule_example(record: dict, *, mcf_features: bool) -> dict[str, Any]:
    """One GEOM pickle (``{"smiles", "conformers": [{"rd_mol", "boltzmannweight"}, ...]}``)
    as an example of :class:`Geom`.

    Raises:
      jaxlab.chem.features.MoleculeRejected: with the reason MCF's preprocessing (or the
        featuriser) gives.
    """
    from rdkit import Chem

    from jaxlab.chem.features import MoleculeRejected, featurize

    smiles = record["smiles"]
    if "." in smiles:
        raise MoleculeRejected("fragments", smiles)
    if Chem.MolFromSmiles(smiles) is None:
        raise MoleculeRejected("unparsable", smiles)
    kept = []
    for conformer in record["conformers"]:
        mol = conformer["rd_mol"]
        if max(len(a.GetNeighbors()) for a in mol.GetAtoms()) <= MAX_NEIGHBOURS:
            kept.append(conformer)
    if not kept:
        raise MoleculeRejected("too_many_neighbours", smiles)
    kept = [kept[i] for i in _order(smiles, len(kept))]
    mol = kept[0]["rd_mol"]
    n = mol.GetNumAtoms()
    positions = np.stack(
        [np.asarray(c["rd_mol"].GetConformer().GetPositions(), np.float32) for c in kept]
    )
    example = {
        "smiles": smiles,
        "mol_block": Chem.MolToMolBlock(mol),
        "num_atoms": np.int32(n),
        "num_conformers": np.int32(len(kept)),
        "atomic_numbers": np.asarray([a.GetAtomicNum() for a in mol.GetAtoms()], np.int32),
        "conformers": positions.reshape(-1, 3),
        "boltzmann_weights": np.asarray([c.get("boltzmannweight", 1.0) for c in kept], np.float32),
    }
    if mcf_features:
        from jaxlab.data.qm9 import MAX_ATOMS, NUM_EIGENFUNCTIONS

        features = featurize(Chem.Mol(mol))
        if n > MAX_ATOMS:
            raise MoleculeRejected("too_large", f"{n} atoms")
        example["atom_features"] = features.atom_features
        example["eigenfunctions"] = _eigenfunctions(features.adjacency)[:, :NUM_EIGENFUNCTIONS]
    return example


def mock_example(index: int, config: str | None = None) -> dict[str, Any]:
    """Mock record ``index`` of ``geom/<config>``: a molecule of :data:`MOCK_SMILES` (in
    turn), with hydrogens, and :data:`MOCK_CONFORMERS` ETKDGv3 conformers
    (:func:`jaxlab.chem.conformers.embed_conformers`, seed ``index``), equally weighted,
    made into an example by :func:`molecule_example`, with the types of a prepared record
    of that config (text as bytes, scalars as Python ints).

    Raises:
      ValueError: ``config`` is not a config of :class:`Geom`.
    """
    from rdkit import Chem

    from jaxlab.chem.conformers import embed_conformers

    configs = {c.name: c for c in Geom.BUILDER_CONFIGS}
    name = config or Geom.DEFAULT_CONFIG_NAME
    if name not in configs:
        raise ValueError(f"geom has no config {name!r}; its configs: {sorted(configs)}")
    smiles = MOCK_SMILES[index % len(MOCK_SMILES)]
    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    conformers = []
    for positions in embed_conformers(mol, MOCK_CONFORMERS, seed=index):
        one = Chem.Mol(mol)
        conformer = Chem.Conformer(mol.GetNumAtoms())
        for atom, xyz in enumerate(positions.tolist()):
            conformer.SetAtomPosition(atom, xyz)
        one.AddConformer(conformer, assignId=True)
        conformers.append({"rd_mol": one, "boltzmannweight": 1.0 / MOCK_CONFORMERS})
    record = {"smiles": smiles, "conformers": conformers}
    example = molecule_example(record, mcf_features=configs[name].mcf_features)
    # as a prepared record decodes: text as bytes, scalars as Python numbers
    return {
        k: v.encode() if isinstance(v, str) else v.item() if isinstance(v, np.generic) else v
        for k, v in example.items()
    }


def _eigenfunctions(adjacency: np.ndarray) -> np.ndarray:
    """MCF's eigenfunctions of one molecule, padded to QM9's size (one compiled shape)."""
    from jaxlab.chem.spectral import laplacian_eigenfunctions
    from jaxlab.data.qm9 import MAX_ATOMS, NUM_EIGENFUNCTIONS

    n = len(adjacency)
    padded = np.zeros((MAX_ATOMS, MAX_ATOMS), np.float32)
    padded[:n, :n] = adjacency
    eig = laplacian_eigenfunctions(padded, NUM_EIGENFUNCTIONS, np.arange(MAX_ATOMS) < n)
    return np.asarray(eig, np.float32)[:n]


class Geom(tfds.core.GeneratorBasedBuilder):
    """GEOM-QM9 and GEOM-DRUGS conformer ensembles with GeoMol's splits."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "rdkit_folder pickles, GeoMol split0 and test_smiles.csv."}
    BUILDER_CONFIGS = [
        GeomConfig(
            name="qm9",
            folder="qm9",
            mcf_features=True,
            description="GEOM-QM9 (CREST ensembles of QM9 molecules) with MCF's inputs.",
            split_url=f"{_GEOMOL}/QM9/splits/split0.npy",
            split_sha256="cf1d553fddb0041530024f425a46b004cdb67db1582f2d1a3e6369fc0787ee9d",
            test_url=f"{_GEOMOL}/QM9/test_smiles.csv",
            test_sha256="9e253eef6f6f595237a670aa994e746186b572bf94ee579e1c402879ab2ec075",
        ),
        GeomConfig(
            name="drugs",
            folder="drugs",
            description="GEOM-DRUGS (CREST ensembles of drug-like molecules).",
            split_url=f"{_GEOMOL}/DRUGS/splits/split0.npy",
            split_sha256="cd0311fce21c87af1c1cf7195aee1a54de983b9e3c63640a041a482731b36779",
            test_url=f"{_GEOMOL}/DRUGS/test_smiles.csv",
            test_sha256="702eccdf75e62918ce1987021bc595a6f787d60727b743248fd3281afe053d41",
        ),
    ]
    DEFAULT_CONFIG_NAME = "qm9"
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "Optional: place GEOM's rdkit_folder.tar.gz (or the extracted rdkit_folder/) from "
        f"{ARCHIVE_URL} in manual_dir to skip the download; GeoMol's split0.npy and "
        "test_smiles.csv may be placed there as <qm9|drugs>_split0.npy and "
        "<qm9|drugs>_test_smiles.csv."
    )

    def _info(self) -> tfds.core.DatasetInfo:
        features = {
            "smiles": tfds.features.Text(),
            "mol_block": tfds.features.Text(),
            "num_atoms": np.int32,
            "num_conformers": np.int32,
            "atomic_numbers": tfds.features.Tensor(shape=(None,), dtype=np.int32),
            "conformers": tfds.features.Tensor(shape=(None, 3), dtype=np.float32),
            "boltzmann_weights": tfds.features.Tensor(shape=(None,), dtype=np.float32),
        }
        if self.builder_config.mcf_features:
            from jaxlab.chem.features import NUM_ATOM_FEATURES
            from jaxlab.data.qm9 import NUM_EIGENFUNCTIONS

            features["atom_features"] = tfds.features.Tensor(
                shape=(None, NUM_ATOM_FEATURES), dtype=np.float32
            )
            features["eigenfunctions"] = tfds.features.Tensor(
                shape=(None, NUM_EIGENFUNCTIONS), dtype=np.float32
            )
        return tfds.core.DatasetInfo(
            builder=self,
            description=__doc__,
            features=tfds.features.FeaturesDict(features),
            metadata=tfds.core.MetadataDict(),
            homepage="https://doi.org/10.7910/DVN/JNGTDF",
            citation="Axelrod & Gómez-Bombarelli, GEOM, energy-annotated molecular "
            "conformations for property prediction and molecular generation, Scientific "
            "Data 9, 2022.",
        )

    def _manual(self, dl_manager) -> Path | None:
        try:
            manual = Path(dl_manager.manual_dir)
        except (AssertionError, AttributeError, TypeError):
            return None
        return manual if manual.exists() else None

    def _fetch(self, dl_manager, name: str, url: str, sha256: str) -> Path:
        """A GeoMol file from ``manual_dir`` or its pinned URL, checked against ``sha256``."""
        manual = self._manual(dl_manager)
        local = manual / f"{self.builder_config.folder}_{name}" if manual else None
        path = local if local is not None and local.exists() else Path(dl_manager.download(url))
        if _sha256(path) != sha256:
            raise ValueError(f"{path}: SHA-256 differs from GeoMol's {name} ({sha256})")
        return path

    def _rdkit_folder(self, dl_manager) -> Path:
        manual = self._manual(dl_manager)
        if manual is not None and (manual / "rdkit_folder").is_dir():
            return manual / "rdkit_folder"
        if manual is not None and (manual / "rdkit_folder.tar.gz").exists():
            root = Path(dl_manager.extract(manual / "rdkit_folder.tar.gz"))
        else:
            root = Path(
                dl_manager.download_and_extract(
                    tfds.download.Resource(
                        url=ARCHIVE_URL, extract_method=tfds.download.ExtractMethod.TAR_GZ
                    )
                )
            )
        return root / "rdkit_folder" if (root / "rdkit_folder").is_dir() else root

    def _split_generators(self, dl_manager):
        cfg = self.builder_config
        folder = self._rdkit_folder(dl_manager)
        split = np.load(
            self._fetch(dl_manager, "split0.npy", cfg.split_url, cfg.split_sha256),
            allow_pickle=True,
        )
        test_csv = self._fetch(dl_manager, "test_smiles.csv", cfg.test_url, cfg.test_sha256)
        files = sorted((folder / cfg.folder).glob("*.pickle"))
        summary = json.loads((folder / f"summary_{cfg.folder}.json").read_text())
        test_smiles = [
            line.split(",")[0] for line in test_csv.read_text().splitlines()[1:] if line.strip()
        ]
        self.info.metadata["rejected"] = []
        missing = [s for s in test_smiles if s not in summary]
        self.info.metadata["rejected"] += [
            {"smiles": s, "split": "test", "reason": "not_in_summary"} for s in missing
        ]
        test_files = [folder / summary[s]["pickle_path"] for s in test_smiles if s in summary]
        return {
            "train": self._generate_examples([files[i] for i in split[0]], "train"),
            "validation": self._generate_examples([files[i] for i in split[1]], "validation"),
            "test": self._generate_examples(test_files, "test"),
        }

    def _generate_examples(self, paths: list[Path], split: str) -> Iterator[tuple[str, dict]]:
        from jaxlab.chem.features import MoleculeRejected

        for path in paths:
            with open(path, "rb") as f:
                record = pickle.load(f)
            try:
                example = molecule_example(record, mcf_features=self.builder_config.mcf_features)
            except MoleculeRejected as err:
                self.info.metadata["rejected"].append(
                    {
                        "smiles": record.get("smiles", path.stem),
                        "split": split,
                        "reason": err.reason,
                    }
                )
                continue
            yield f"{split}/{path.stem}", example
