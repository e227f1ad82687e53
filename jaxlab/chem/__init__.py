"""jaxlab.chem: molecular featurisation, spectral coordinates, conformer metrics and MCF.

Needs the ``[chem]`` extra (RDKit).
"""

from jaxlab.chem.features import (
    ELEMENTS,
    NUM_ATOM_FEATURES,
    MoleculeRejected,
    MolFeatures,
    featurize,
    mol_from_smiles,
)
from jaxlab.chem.mcf import (
    SIZES,
    MCFDenoiser,
    MCFSize,
    center_positions,
    mcf_loss,
    mcf_sample,
    timestep_embedding,
)
from jaxlab.chem.metrics import coverage_matching
from jaxlab.chem.rmsd import best_rmsd, best_rmsd_matrix, kabsch_rmsd
from jaxlab.chem.spectral import laplacian_eigenfunctions

__all__ = [
    "ELEMENTS",
    "NUM_ATOM_FEATURES",
    "SIZES",
    "MCFDenoiser",
    "MCFSize",
    "MolFeatures",
    "MoleculeRejected",
    "best_rmsd",
    "best_rmsd_matrix",
    "center_positions",
    "coverage_matching",
    "featurize",
    "kabsch_rmsd",
    "laplacian_eigenfunctions",
    "mcf_loss",
    "mcf_sample",
    "mol_from_smiles",
    "timestep_embedding",
]
