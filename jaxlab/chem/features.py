"""RDKit featurisation of molecular graphs for MCF.

Each atom gets the 43-dimensional feature vector of the MCF reference pipeline for QM9:

=====================  =====  =======================================================
block                  width  values
=====================  =====  =======================================================
element one-hot          5    H, C, N, O, F
aromatic                 1    0 / 1
degree                   8    0 … 6, other
hybridisation            6    SP, SP2, SP3, SP3D, SP3D2, other
implicit valence         8    0 … 6, other
formal charge            4    −1, 0, +1, other
ring-size membership     6    in a ring of size 3, 4, 5, 6, 7, 8
number of rings          5    0 … 3, other
=====================  =====  =======================================================

plus the symmetric 0/1 adjacency matrix of the (hydrogen-explicit) graph. Molecules that
the pipeline cannot use are rejected with :class:`MoleculeRejected`, whose ``reason`` says
why; callers count and list them instead of crashing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from rdkit import Chem

ELEMENTS = ("H", "C", "N", "O", "F")
_DEGREES = (0, 1, 2, 3, 4, 5, 6)
_HYBRIDISATIONS = (
    Chem.rdchem.HybridizationType.SP,
    Chem.rdchem.HybridizationType.SP2,
    Chem.rdchem.HybridizationType.SP3,
    Chem.rdchem.HybridizationType.SP3D,
    Chem.rdchem.HybridizationType.SP3D2,
)
_VALENCES = (0, 1, 2, 3, 4, 5, 6)
_CHARGES = (-1, 0, 1)
_RING_SIZES = (3, 4, 5, 6, 7, 8)
_RING_COUNTS = (0, 1, 2, 3)
MAX_NEIGHBOURS = 4
NUM_ATOM_FEATURES = (
    len(ELEMENTS)
    + 1
    + len(_DEGREES)
    + 1
    + len(_HYBRIDISATIONS)
    + 1
    + len(_VALENCES)
    + 1
    + len(_CHARGES)
    + 1
    + len(_RING_SIZES)
    + len(_RING_COUNTS)
    + 1
)


class MoleculeRejected(ValueError):
    """The molecule cannot be featurised; ``reason`` is a short machine-readable tag."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class MolFeatures(NamedTuple):
    """Features of one molecule with N atoms.

    Attributes:
      atom_features: ``[N, 43]`` float32, the blocks of the module docstring.
      adjacency: ``[N, N]`` float32 symmetric 0/1 matrix, zero diagonal.
      elements: ``[N]`` int32 index into :data:`ELEMENTS`.
    """

    atom_features: np.ndarray
    adjacency: np.ndarray
    elements: np.ndarray


def _one_hot_with_other(value, choices) -> list[float]:
    out = [0.0] * (len(choices) + 1)
    out[choices.index(value) if value in choices else -1] = 1.0
    return out


def mol_from_smiles(smiles: str) -> Chem.Mol:
    """Parses ``smiles`` and adds explicit hydrogens; rejects unparsable SMILES and fragments.

    Raises:
      MoleculeRejected: reason ``"unparsable"`` or ``"fragments"``.
    """
    if not isinstance(smiles, str):
        raise ValueError(f"smiles must be a str, got {type(smiles).__name__}")
    if "." in smiles:
        raise MoleculeRejected("fragments", smiles)
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise MoleculeRejected("unparsable", smiles)
    return Chem.AddHs(mol)


def featurize(mol: Chem.Mol | str) -> MolFeatures:
    """Atom features and adjacency of a molecule (hydrogens included as graph nodes).

    Args:
      mol: an RDKit molecule (used as given: add hydrogens first if they should be nodes)
        or a SMILES string (parsed, hydrogens added).

    Returns:
      :class:`MolFeatures`.

    Raises:
      MoleculeRejected: reason ``"unparsable"`` (RDKit cannot parse or sanitise it),
        ``"fragments"`` (more than one connected component), ``"too_many_neighbours"``
        (an atom with more than 4 neighbours), ``"element"`` (an element outside
        H, C, N, O, F) or ``"empty"``.

    Example:
      >>> f = featurize("c1ccccc1")
      >>> f.atom_features.shape, f.adjacency.shape
      ((12, 43), (12, 12))

    References:
      Wang et al., "Swallowing the Bitter Pill: Simplified Scalable Conformer Generation",
      ICML 2024 (Appendix: input features).
    """
    if isinstance(mol, str):
        mol = mol_from_smiles(mol)
    if not isinstance(mol, Chem.Mol):
        raise ValueError(f"mol must be an RDKit Chem.Mol or a SMILES str, got {type(mol).__name__}")
    if mol is None:
        raise MoleculeRejected("unparsable", "None molecule")
    n = mol.GetNumAtoms()
    if n == 0:
        raise MoleculeRejected("empty")
    if len(Chem.GetMolFrags(mol)) > 1:
        raise MoleculeRejected("fragments", Chem.MolToSmiles(mol))
    try:
        mol.UpdatePropertyCache(strict=False)
        Chem.GetSymmSSSR(mol)
    except Exception as err:  # noqa: BLE001 - RDKit raises many exception types
        raise MoleculeRejected("unparsable", str(err)) from err
    ring = mol.GetRingInfo()
    rows = []
    for atom in mol.GetAtoms():
        symbol = atom.GetSymbol()
        if symbol not in ELEMENTS:
            raise MoleculeRejected("element", symbol)
        if atom.GetDegree() > MAX_NEIGHBOURS:
            raise MoleculeRejected("too_many_neighbours", f"{symbol}{atom.GetIdx()}")
        i = atom.GetIdx()
        row = [0.0] * len(ELEMENTS)
        row[ELEMENTS.index(symbol)] = 1.0
        row.append(float(atom.GetIsAromatic()))
        row += _one_hot_with_other(atom.GetDegree(), _DEGREES)
        row += _one_hot_with_other(atom.GetHybridization(), _HYBRIDISATIONS)
        implicit = atom.GetValence(Chem.ValenceType.IMPLICIT)
        row += _one_hot_with_other(implicit, _VALENCES)
        row += _one_hot_with_other(atom.GetFormalCharge(), _CHARGES)
        row += [float(ring.IsAtomInRingOfSize(i, size)) for size in _RING_SIZES]
        row += _one_hot_with_other(ring.NumAtomRings(i), _RING_COUNTS)
        rows.append(row)
    adjacency = np.zeros((n, n), np.float32)
    for bond in mol.GetBonds():
        a, b = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        adjacency[a, b] = adjacency[b, a] = 1.0
    elements = np.array([ELEMENTS.index(a.GetSymbol()) for a in mol.GetAtoms()], np.int32)
    return MolFeatures(np.asarray(rows, np.float32), adjacency, elements)
