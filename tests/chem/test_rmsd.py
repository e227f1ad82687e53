"""Kabsch RMSD invariances, agreement with RDKit AlignMol, and best_rmsd."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from rdkit import Chem
from rdkit.Chem import AllChem, rdMolAlign
from scipy.spatial.transform import Rotation

from jaxlab.chem import best_rmsd, best_rmsd_matrix, kabsch_rmsd
from tests.precision import assert_takes_precision

#: The kernel at float32 precision: a GPU's default TF32 leaves ~4e-4 Å where the RMSD is 0.
rmsd = functools.partial(kabsch_rmsd, precision="highest")


def test_kabsch_multiplies_at_the_precision_it_is_given():
    assert_takes_precision(kabsch_rmsd, jnp.ones((4, 3)), jnp.ones((4, 3)), count=5)


def _embedded(smiles, n, seed=0):
    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    params = AllChem.ETKDGv3()
    params.randomSeed = seed
    ids = AllChem.EmbedMultipleConfs(mol, n, params)
    assert len(ids) == n
    return mol, np.stack([mol.GetConformer(i).GetPositions() for i in ids])


def test_invariances():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(9, 3)), rng.normal(size=(9, 3))
    base = float(rmsd(a, b))
    rot = Rotation.random(random_state=1).as_matrix()
    assert float(rmsd(a @ rot.T + 3.0, b)) == pytest.approx(base, abs=1e-5)
    assert float(rmsd(a, b @ rot.T - 1.0)) == pytest.approx(base, abs=1e-5)
    perm = rng.permutation(9)  # the same reordering of both sets
    assert float(rmsd(a[perm], b[perm])) == pytest.approx(base, abs=1e-5)
    assert float(rmsd(a, a @ rot.T + 2.0)) == pytest.approx(0.0, abs=1e-5)
    # A reflection is not a rotation: the mirror image is not matched.
    assert float(rmsd(a, a * np.array([1.0, 1.0, -1.0]))) > 0.1


def test_mask_ignores_padding_and_jit_vmap_grad():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    pad_a = np.concatenate([a, rng.normal(size=(2, 3)) * 50])
    pad_b = np.concatenate([b, rng.normal(size=(2, 3)) * 50])
    mask = np.array([1] * 6 + [0, 0])
    assert float(rmsd(pad_a, pad_b, mask)) == pytest.approx(float(rmsd(a, b)), abs=1e-5)
    batched = jax.vmap(jax.jit(rmsd))(jnp.stack([a, b]), jnp.stack([b, a]))
    np.testing.assert_allclose(batched, [rmsd(a, b)] * 2, rtol=1e-5)
    check_grads(
        lambda x: rmsd(x, b),
        (jnp.asarray(a, jnp.float32),),
        order=1,
        modes=["rev"],
        eps=1e-3,
        atol=2e-2,
        rtol=2e-2,
    )


def test_agrees_with_rdkit_alignmol():
    for smiles in ("CCCO", "OCC(N)C=O", "c1ccncc1C"):
        mol, confs = _embedded(smiles, 2)
        probe, ref = Chem.Mol(mol, confId=0), Chem.Mol(mol)
        rd = rdMolAlign.AlignMol(probe, ref, prbCid=0, refCid=1)  # all atoms, fixed order
        ours = float(rmsd(confs[0], confs[1]))
        assert ours == pytest.approx(rd, abs=1e-4)


def test_best_rmsd_symmetry_aware():
    mol, confs = _embedded("CC(C)(C)O", 2, seed=3)
    # Heavy-atom RMSD with symmetry is at most the fixed-order heavy-atom Kabsch RMSD.
    heavy = np.array([a.GetAtomicNum() > 1 for a in mol.GetAtoms()])
    fixed = float(rmsd(confs[0][heavy], confs[1][heavy]))
    best = best_rmsd(mol, confs[0], confs[1])
    assert best <= fixed + 1e-6
    # Swapping two symmetric methyl carbons (and keeping geometry) changes nothing.
    assert best_rmsd(mol, confs[0], confs[0]) == pytest.approx(0.0, abs=1e-6)
    mat = best_rmsd_matrix(mol, confs[:1], confs)
    assert mat.shape == (1, 2) and mat[0, 0] == pytest.approx(0.0, abs=1e-6)
    assert mat[0, 1] == pytest.approx(best_rmsd(mol, confs[1], confs[0]), abs=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"\[N, 3\]"):
        kabsch_rmsd(np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="mask"):
        kabsch_rmsd(np.zeros((4, 3)), np.zeros((4, 3)), np.ones(3))
    mol, confs = _embedded("CCO", 1)
    with pytest.raises(ValueError, match="coords_a"):
        best_rmsd(mol, confs[0][:3], confs[0])
    with pytest.raises(ValueError, match="NaN"):
        best_rmsd(mol, confs[0] * np.nan, confs[0])
