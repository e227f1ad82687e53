"""RDKit conformer utilities: molecules from DFT geometries and ETKDG ensembles.

Two pitfalls of QM9 shape these helpers: bond perception from a DFT geometry fails on
some strained ring systems unless retried with the extended Hückel method, and ETKDG
embedding fails on some molecules unless retried from random coordinates (and, last,
without chirality enforcement).
"""

from __future__ import annotations

import numpy as np
from rdkit import Chem
from rdkit.Chem import AllChem, rdDetermineBonds
from rdkit.Geometry import Point3D

from jaxlab.chem.features import MoleculeRejected


def mol_from_xyz(elements: list[str], positions: np.typing.ArrayLike, charge: int = 0) -> Chem.Mol:
    """An RDKit molecule, bonds perceived from a 3D geometry, atoms in the given order.

    Args:
      elements: N element symbols.
      positions: ``[N, 3]`` coordinates (Å); stored as the molecule's conformer.
      charge: total charge (e.g. from the SMILES), needed for bond-order assignment.

    Returns:
      The sanitised molecule with explicit hydrogens and one conformer.

    Raises:
      MoleculeRejected: reason ``"bond_perception"`` when neither the connectivity
        heuristic nor the Hückel retry yields a valid molecule.
    """
    positions = np.asarray(positions, np.float64)
    if positions.shape != (len(elements), 3):
        raise ValueError(f"positions must be [{len(elements)}, 3]; got {positions.shape}")
    base = Chem.RWMol()
    conf = Chem.Conformer(len(elements))
    for i, symbol in enumerate(elements):
        base.AddAtom(Chem.Atom(symbol))
        conf.SetAtomPosition(i, Point3D(*positions[i]))
    base.AddConformer(conf, assignId=True)
    errors = []
    for use_hueckel in (False, True):
        mol = Chem.Mol(base)
        try:
            rdDetermineBonds.DetermineBonds(mol, charge=charge, useHueckel=use_hueckel)
            Chem.SanitizeMol(mol)
            return mol
        except Exception as err:  # noqa: BLE001 - RDKit raises several exception types
            errors.append(str(err))
    raise MoleculeRejected("bond_perception", "; ".join(errors))


def embed_conformers(mol: Chem.Mol, num_conformers: int, seed: int = 0) -> np.ndarray:
    """ETKDGv3 conformers of ``mol`` (atoms in its order): ``[num_conformers, N, 3]``.

    Retries from random coordinates, then without chirality enforcement, when the default
    embedding fails. Returns fewer conformers (possibly zero) if RDKit cannot embed all.

    Args:
      mol: the molecule with explicit hydrogens.
      num_conformers: how many conformers to embed.
      seed: a non-negative seed (deterministic output for a given seed). RDKit is given
        ``seed + 1``: it derives each conformer's seed from its ``randomSeed`` by
        multiplication, so ``randomSeed = 0`` would embed ``num_conformers`` copies of
        one conformer.

    References:
      Wang, Witek, Landrum & Riniker, "Improving Conformer Generation for Small Rings and
      Macrocycles Based on Distance Geometry and Experimental Torsional-Angle
      Preferences", J. Chem. Inf. Model. 2020 (ETKDGv3).
    """
    if num_conformers < 1:
        raise ValueError(f"num_conformers must be ≥ 1; got {num_conformers}")
    if seed < 0:
        raise ValueError(f"seed must be ≥ 0; got {seed}")
    mol = Chem.Mol(mol)
    for attempt in range(3):
        params = AllChem.ETKDGv3()  # type: ignore[attr-defined]  # absent from rdkit's stubs
        params.randomSeed = seed + 1  # 0 would repeat one conformer (see ``seed``)
        params.useRandomCoords = attempt >= 1
        params.enforceChirality = attempt < 2
        mol.RemoveAllConformers()
        ids = list(AllChem.EmbedMultipleConfs(mol, num_conformers, params))  # type: ignore[attr-defined]  # absent from rdkit's stubs
        if ids:
            return np.stack([mol.GetConformer(i).GetPositions() for i in ids]).astype(np.float32)
    return np.zeros((0, mol.GetNumAtoms(), 3), np.float32)


def random_conformers(
    reference: np.typing.ArrayLike, num_conformers: int, rng: np.random.Generator
) -> np.ndarray:
    """Random coordinates at the scale of a molecule: Gaussian points with the reference's
    centroid and radius of gyration, ``[num_conformers, N, 3]``. The trivial baseline."""
    reference = np.asarray(reference, np.float64)
    centroid = reference.mean(axis=0, keepdims=True)
    gyration = np.sqrt(np.mean(np.sum((reference - centroid) ** 2, axis=-1)))
    out = rng.normal(size=(num_conformers,) + reference.shape)
    out = out - out.mean(axis=1, keepdims=True)
    scale = np.sqrt(np.mean(np.sum(out**2, axis=-1), axis=1, keepdims=True))[..., None]
    return (out / np.maximum(scale, 1e-12) * gyration + centroid).astype(np.float32)
