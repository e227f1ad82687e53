"""Featurisation on known molecules and the rejection paths."""

import numpy as np
import pytest
from rdkit import Chem

from jaxlab.chem import NUM_ATOM_FEATURES, MoleculeRejected, featurize

# Column offsets of the blocks (element 5, aromatic 1, degree 8, hybridisation 6,
# implicit valence 8, charge 4, ring sizes 6, ring count 5).
AROMATIC, DEGREE, HYBRID, VALENCE, CHARGE, RING_SIZE, RING_COUNT = 5, 6, 14, 20, 28, 32, 38


def test_width_is_43():
    assert NUM_ATOM_FEATURES == 43


def test_benzene():
    f = featurize("c1ccccc1")
    assert f.atom_features.shape == (12, 43)
    carbons = f.elements == 1
    assert carbons.sum() == 6
    x = f.atom_features
    assert np.all(x[carbons, AROMATIC] == 1) and np.all(x[~carbons, AROMATIC] == 0)
    assert np.all(x[carbons, DEGREE + 3] == 1)  # degree 3 (two C, one H)
    assert np.all(x[carbons, HYBRID + 1] == 1)  # SP2
    assert np.all(x[carbons, RING_SIZE + 3] == 1)  # six-membered ring
    assert np.all(x[carbons, RING_COUNT + 1] == 1)  # in exactly one ring
    assert np.all(x[~carbons, RING_COUNT + 0] == 1)
    # Every block is a one-hot (except the multi-hot ring sizes and the aromatic flag).
    for start, width in (
        (0, 5),
        (DEGREE, 8),
        (HYBRID, 6),
        (VALENCE, 8),
        (CHARGE, 4),
        (RING_COUNT, 5),
    ):
        np.testing.assert_array_equal(x[:, start : start + width].sum(1), 1)
    a = f.adjacency
    np.testing.assert_array_equal(a, a.T)
    assert a.sum() == 2 * 12  # 12 bonds
    np.testing.assert_array_equal(np.diag(a), 0)


def test_charged_atoms():
    f = featurize("C[NH3+]")  # methylammonium
    n = int(np.flatnonzero(f.elements == 2)[0])
    assert f.atom_features[n, CHARGE + 2] == 1  # +1
    g = featurize("CC(=O)[O-]")  # acetate
    charged_o = [i for i in np.flatnonzero(g.elements == 3) if g.atom_features[i, CHARGE] == 1]
    assert len(charged_o) == 1


def test_accepts_mol_and_ring_sizes():
    mol = Chem.AddHs(Chem.MolFromSmiles("C1CC1C1CCC1"))  # cyclopropyl-cyclobutane
    x = featurize(mol).atom_features
    heavy = [a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() == "C"]
    assert x[heavy, RING_SIZE + 0].sum() == 3 and x[heavy, RING_SIZE + 1].sum() == 4


@pytest.mark.parametrize(
    "smiles, reason",
    [
        ("C1CC", "unparsable"),
        ("not a molecule", "unparsable"),
        ("CC.O", "fragments"),
        ("FS(F)(F)(F)(F)F", "element"),
    ],
)
def test_rejections(smiles, reason):
    with pytest.raises(MoleculeRejected) as err:
        featurize(smiles)
    assert err.value.reason == reason


def test_too_many_neighbours():
    # A pentavalent carbon, built without sanitisation (RDKit would refuse it otherwise).
    mol = Chem.MolFromSmiles("CC(C)(C)(C)C", sanitize=False)
    with pytest.raises(MoleculeRejected) as err:
        featurize(mol)
    assert err.value.reason == "too_many_neighbours"


def test_fragmented_mol_object_rejected():
    with pytest.raises(MoleculeRejected, match="fragments"):
        featurize(Chem.MolFromSmiles("[Na+].[Cl-]"))
