"""The ``geom`` TFDS builder on a tiny local GEOM ``rdkit_folder`` (RDKit molecules made
here, no download): splits from a GeoMol-style ``split0.npy`` and ``test_smiles.csv``,
conformers in the mol's atom order, MCF's inputs, rejected molecules listed; and the
registered builder under ``tfds.testing.mock_data``."""

import hashlib
import json
import pickle

import numpy as np
import pytest
import tensorflow_datasets as tfds
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxlab.data.streaming import mock_datasets, open_source
from jaxlab.data.tfds_builders import geom

SMILES = ["CCO", "CC(=O)O", "c1ccccc1", "CC.O", "CCN", "OCC#N"]


def _record(smiles: str, num: int) -> dict:
    mol = Chem.AddHs(Chem.MolFromSmiles(smiles.split(".")[0]))
    ids = AllChem.EmbedMultipleConfs(mol, num, randomSeed=1)
    conformers = []
    for k in ids:
        one = Chem.Mol(mol, confId=k)
        one.RemoveAllConformers()
        one.AddConformer(Chem.Conformer(mol.GetConformer(k)), assignId=True)
        conformers.append({"rd_mol": one, "boltzmannweight": 1.0 / num})
    return {"smiles": smiles, "conformers": conformers}


def _fixture(root):
    folder = root / "rdkit_folder" / "qm9"
    folder.mkdir(parents=True)
    summary = {}
    for i, smiles in enumerate(SMILES):
        name = f"mol{i}.pickle"
        with open(folder / name, "wb") as f:
            pickle.dump(_record(smiles, 3), f)
        summary[smiles] = {"pickle_path": f"qm9/{name}"}
    (root / "rdkit_folder" / "summary_qm9.json").write_text(json.dumps(summary))
    split = np.empty(3, object)
    split[0], split[1], split[2] = np.array([0, 1, 3]), np.array([2]), np.array([4, 5])
    np.save(root / "qm9_split0.npy", split, allow_pickle=True)
    (root / "qm9_test_smiles.csv").write_text("smiles,n_conformers\nCCN,3\nOCC#N,3\n")

    def sha(name):
        return hashlib.sha256((root / name).read_bytes()).hexdigest()

    return sha("qm9_split0.npy"), sha("qm9_test_smiles.csv")


def _prepared(tmp_path) -> dict:
    """The splits of the fixture, prepared by the builder as array_record."""
    manual = tmp_path / "manual"
    split_sha, test_sha = _fixture(manual)
    config = geom.GeomConfig(
        name="qm9_fixture",
        folder="qm9",
        mcf_features=True,
        split_sha256=split_sha,
        test_sha256=test_sha,
    )
    builder = geom.Geom(config=config, data_dir=str(tmp_path / "tfds"), file_format="array_record")
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=str(manual))
    )
    return builder, builder.as_data_source()


def test_builds_geom_qm9_from_a_local_rdkit_folder(tmp_path):
    builder, source = _prepared(tmp_path)
    assert {k: len(v) for k, v in source.items()} == {"train": 2, "validation": 1, "test": 2}
    rejected = builder.info.metadata["rejected"]
    assert [r["reason"] for r in rejected] == ["fragments"]
    for split in ("train", "validation", "test"):
        for i in range(len(source[split])):
            ex = source[split][i]
            n, k = int(ex["num_atoms"]), int(ex["num_conformers"])
            assert k == 3 and ex["conformers"].shape == (k * n, 3)
            assert ex["atom_features"].shape == (n, 43)
            assert ex["eigenfunctions"].shape == (n, 32)
            mol = Chem.MolFromMolBlock(ex["mol_block"], removeHs=False)
            assert mol.GetNumAtoms() == n
            assert list(ex["atomic_numbers"]) == [a.GetAtomicNum() for a in mol.GetAtoms()]
            # the mol block carries the first stored conformer
            np.testing.assert_allclose(
                mol.GetConformer().GetPositions(), ex["conformers"][:n], atol=1e-3
            )
    test_smiles = sorted(str(np.asarray(source["test"][i]["smiles"]).astype(str)) for i in range(2))
    assert test_smiles == ["CCN", "OCC#N"]


def test_a_wrong_split_checksum_is_an_error(tmp_path):
    manual = tmp_path / "manual"
    _, test_sha = _fixture(manual)
    config = geom.GeomConfig(
        name="qm9_fixture",
        folder="qm9",
        mcf_features=True,
        split_sha256="0" * 64,
        test_sha256=test_sha,
    )
    builder = geom.Geom(config=config, data_dir=str(tmp_path / "tfds"))
    with pytest.raises(ValueError, match="SHA-256"):
        builder.download_and_prepare(
            download_config=tfds.download.DownloadConfig(manual_dir=str(manual))
        )


def test_registered_and_mockable():
    with mock_datasets(4):
        source = open_source("geom/qm9", "train")
        ex = source[0]
    assert len(source) == 4
    assert ex["atom_features"].shape[1] == 43 and ex["conformers"].shape[1] == 3


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def test_mock_records_are_molecules_shaped_as_a_prepared_record(tmp_path):
    """A dry run's ``geom/qm9`` records parse and agree with themselves: the mol block's
    atoms are ``num_atoms`` and ``atomic_numbers``, every stored conformer puts bonded atoms
    0.9–1.8 Å apart, and keys, dtypes, ranks and text types are a prepared record's."""
    _, prepared = _prepared(tmp_path)
    real = prepared["train"][0]
    with mock_datasets(5):
        source = open_source("geom/qm9", "validation")
    assert len(source) == 5
    for i in range(len(source)):
        ex = source[i]
        assert ex.keys() == real.keys()
        for key, value in real.items():
            assert type(ex[key]) is type(value), key
            if isinstance(value, np.ndarray):
                assert (ex[key].dtype, ex[key].ndim) == (value.dtype, value.ndim), key
        mol = Chem.MolFromMolBlock(_text(ex["mol_block"]), removeHs=False)
        n, k = int(ex["num_atoms"]), int(ex["num_conformers"])
        assert mol is not None and mol.GetNumAtoms() == n
        assert Chem.MolToSmiles(Chem.RemoveHs(mol)) == Chem.CanonSmiles(_text(ex["smiles"]))
        assert list(ex["atomic_numbers"]) == [a.GetAtomicNum() for a in mol.GetAtoms()]
        assert ex["conformers"].shape == (k * n, 3) and ex["boltzmann_weights"].shape == (k,)
        assert ex["atom_features"].shape == (n, 43) and ex["eigenfunctions"].shape == (n, 32)
        bonds = np.asarray([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()])
        for positions in ex["conformers"].reshape(k, n, 3):
            lengths = np.linalg.norm(positions[bonds[:, 0]] - positions[bonds[:, 1]], axis=1)
            assert np.all((lengths > 0.9) & (lengths < 1.8)), lengths
    again = pickle.loads(pickle.dumps(source))  # grain's worker processes read a copy
    np.testing.assert_array_equal(again[3]["conformers"], source[3]["conformers"])
    with pytest.raises(IndexError):
        source[5]


def test_mock_example_names_a_wrong_config():
    with pytest.raises(ValueError, match="no config 'qm7'"):
        geom.mock_example(0, "qm7")
    assert "atom_features" not in geom.mock_example(0, "drugs")
