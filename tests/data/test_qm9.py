"""The QM9 conformer builder: splits, features, DFT coordinates, metadata, rejections."""

import numpy as np
import pytest

from jaxlab.chem import MoleculeRejected, kabsch_rmsd
from jaxlab.data import qm9


@pytest.fixture(scope="module")
def builder():
    return qm9.qm9_builder("tiny")  # built once into the jaxlab cache, then reused


def test_splits_by_molecule(builder):
    splits = {name: qm9.load_split(builder, name) for name in ("train", "validation", "test")}
    assert [len(splits[s]) for s in ("train", "validation", "test")] == [32, 4, 4]
    indices = [{int(ex["index"]) for ex in v} for v in splits.values()]
    assert not (indices[0] & indices[1]) and not (indices[0] & indices[2])
    assert not (indices[1] & indices[2])


def test_examples_match_qm9pack(builder):
    rows = {int(r[0]): r for r in qm9.read_qm9()}
    for ex in qm9.load_split(builder, "test"):
        index, smiles, elements, xyz = rows[int(ex["index"])]
        assert ex["smiles"] == smiles
        _, positions = qm9.parse_row(elements, xyz)
        np.testing.assert_allclose(ex["positions"], positions, atol=1e-5)
        n = int(ex["num_atoms"])
        assert ex["atom_features"].shape == (n, 43)
        assert ex["eigenfunctions"].shape == (n, 32)
        k = len(ex["etkdg_positions"])
        assert ex["etkdg_positions"].shape == (k, n, 3) and k in (0, 2)
        for conf in ex["etkdg_positions"]:  # a plausible conformer of the same molecule
            assert float(kabsch_rmsd(conf, ex["positions"])) < 2.0


def test_metadata_normalization_constants(builder):
    train = qm9.load_split(builder, "train")
    centred = np.concatenate([ex["positions"] - ex["positions"].mean(0) for ex in train])
    meta = builder.info.metadata
    np.testing.assert_allclose(meta["position_min"], centred.min(0), atol=1e-5)
    np.testing.assert_allclose(meta["position_max"], centred.max(0), atol=1e-5)
    assert meta["rejected"] == [] or all("reason" in r for r in meta["rejected"])


def test_pad_molecules(builder):
    test = qm9.load_split(builder, "test")
    arrays = qm9.pad_molecules(test)
    assert arrays["atom_coords"].shape == (4, qm9.MAX_ATOMS, 75)
    np.testing.assert_array_equal(arrays["mask"].sum(1), [int(ex["num_atoms"]) for ex in test])
    with pytest.raises(ValueError, match="max_atoms"):
        qm9.pad_molecules(test, max_atoms=2)


def test_rejections_and_parsing():
    with pytest.raises(MoleculeRejected, match="fragments"):
        qm9.process_molecule("C.C", ["C", "C"], np.zeros((2, 3)))
    with pytest.raises(MoleculeRejected, match="unparsable"):
        qm9.process_molecule("C1CC", ["C"], np.zeros((1, 3)))
    symbols, pos = qm9.parse_row("['C','H']", "[[0.0,1.5*^-3,0.0],[1.0,0.0,0.0]]")
    assert symbols == ["C", "H"] and pos[0, 1] == pytest.approx(1.5e-3)
    with pytest.raises(MoleculeRejected, match="malformed"):
        qm9.parse_row("['C','H']", "[[0.0,0.0,0.0]]")
