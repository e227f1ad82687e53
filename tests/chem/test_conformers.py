"""Molecules from DFT geometries, ETKDG ensembles, random baselines, position scaling."""

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxlab.chem.conformers import embed_conformers, mol_from_xyz, random_conformers
from jaxlab.chem.features import MoleculeRejected
from jaxlab.chem.training import PositionScale


def _geometry(smiles):
    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    return mol, [a.GetSymbol() for a in mol.GetAtoms()], mol.GetConformer().GetPositions()


@pytest.mark.parametrize("smiles", ["CC(=O)O", "c1ccoc1", "C[NH3+]"])
def test_mol_from_xyz_recovers_the_molecule(smiles):
    mol, elements, xyz = _geometry(smiles)
    rebuilt = mol_from_xyz(elements, xyz, charge=Chem.GetFormalCharge(mol))
    assert Chem.MolToSmiles(Chem.RemoveHs(rebuilt)) == Chem.MolToSmiles(Chem.RemoveHs(mol))
    assert [a.GetSymbol() for a in rebuilt.GetAtoms()] == elements


def test_mol_from_xyz_rejects_nonsense():
    with pytest.raises(MoleculeRejected, match="bond_perception"):
        mol_from_xyz(["C", "C"], np.zeros((2, 3)))  # two atoms on top of each other
    with pytest.raises(ValueError, match="positions"):
        mol_from_xyz(["C"], np.zeros((2, 3)))


def test_embed_conformers_deterministic():
    mol, _, _ = _geometry("OCCN")
    a, b = embed_conformers(mol, 3, seed=1), embed_conformers(mol, 3, seed=1)
    assert a.shape == (3, mol.GetNumAtoms(), 3)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        embed_conformers(mol, 0)
    with pytest.raises(ValueError, match="seed"):
        embed_conformers(mol, 3, seed=-1)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_embed_conformers_are_distinct_for_every_seed(seed):
    """Each of a seed's conformers differs from the others (RDKit's seed 0 repeats one)."""
    mol, _, _ = _geometry("OCCCN")
    confs = embed_conformers(mol, 4, seed=seed)
    assert confs.shape[0] == 4
    for i in range(4):
        for j in range(i + 1, 4):
            assert np.abs(confs[i] - confs[j]).max() > 1e-3, (i, j)


def test_random_conformers_match_centroid_and_gyration():
    ref = np.random.default_rng(0).normal(size=(9, 3)) * 2 + 5
    out = random_conformers(ref, 4, np.random.default_rng(1))
    np.testing.assert_allclose(out.mean(1), np.broadcast_to(ref.mean(0), (4, 3)), atol=1e-5)
    gyr = lambda x: np.sqrt(np.mean(np.sum((x - x.mean(0)) ** 2, -1)))
    np.testing.assert_allclose([gyr(o) for o in out], gyr(ref), rtol=1e-5)


def test_position_scale_roundtrip():
    scale = PositionScale(np.array([-2.0, -4.0, -1.0]), np.array([2.0, 4.0, 3.0]))
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.float32)
    y = scale.normalize(x, mask)
    np.testing.assert_allclose((y * mask[..., None]).sum(1), 0, atol=1e-5)
    back = scale.denormalize(y)
    for b in range(2):
        n = int(mask[b].sum())
        centred = x[b, :n] - x[b, :n].mean(0)
        np.testing.assert_allclose(back[b, :n], centred, atol=1e-5)
