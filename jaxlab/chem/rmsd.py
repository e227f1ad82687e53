"""RMSD after optimal superposition: a JAX Kabsch kernel and RDKit's symmetry-aware RMSD."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from rdkit import Chem
from rdkit.Chem import rdMolAlign
from rdkit.Geometry import Point3D


def kabsch_rmsd(
    a: jax.typing.ArrayLike,
    b: jax.typing.ArrayLike,
    mask: jax.typing.ArrayLike | None = None,
    *,
    precision: jax.lax.PrecisionLike = None,
) -> jax.Array:
    """RMSD between two point sets after the optimal rotation and translation (Kabsch).

    RMSD = min_{R ∈ SO(3), t} √( Σᵢ wᵢ ‖R aᵢ + t − bᵢ‖² / Σᵢ wᵢ )

    With centered points a', b' and H = Σ wᵢ a'ᵢ b'ᵢᵀ = U S Vᵀ, the optimum is
    R = V diag(1, 1, d) Uᵀ with d = sign det(V Uᵀ) (no reflections).

    Atom order is taken as given (no symmetry matching); use :func:`best_rmsd` for that.

    Args:
      a: ``[N, 3]`` points to move.
      b: ``[N, 3]`` target points.
      mask: optional ``[N]`` weights (1 = real atom, 0 = padding).
      precision: the precision of the covariance and rotation products
        (``jax.lax.PrecisionLike``); ``None`` multiplies at the ambient
        ``jax.default_matmul_precision``. The residual ``R a' − b'`` of a near-rigid pair
        cancels, so TF32 (a GPU's default) leaves ~1e-3 of the coordinates' scale where the
        RMSD is 0; ``"highest"`` gives a float32 RMSD (``docs/precision.md``).

    Returns:
      A scalar RMSD in the units of the inputs.

    Example:
      >>> x = np.random.default_rng(0).normal(size=(5, 3))
      >>> c, s = np.cos(0.3), np.sin(0.3)
      >>> rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
      >>> moved = x @ rotation.T + 1.0  # a rigid motion (numpy, float64): RMSD ≈ 0
      >>> bool(kabsch_rmsd(x, moved, precision="highest") < 1e-5)
      True

    References:
      Kabsch, "A solution for the best rotation to relate two sets of vectors",
      Acta Crystallographica A 32, 1976.
    """
    a, b = jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)
    if a.ndim != 2 or a.shape[-1] != 3 or a.shape != b.shape:
        raise ValueError(f"a and b must both be [N, 3]; got {a.shape} and {b.shape}")
    w = jnp.ones(a.shape[:1], jnp.float32) if mask is None else jnp.asarray(mask, jnp.float32)
    if w.shape != a.shape[:1]:
        raise ValueError(f"mask must be [N] = {a.shape[:1]}; got {w.shape}")
    total = jnp.maximum(jnp.sum(w), 1e-12)
    a_c = a - jnp.sum(w[:, None] * a, axis=0, keepdims=True) / total
    b_c = b - jnp.sum(w[:, None] * b, axis=0, keepdims=True) / total
    mm = functools.partial(jnp.matmul, precision=precision)
    h = mm((w[:, None] * a_c).T, b_c)  # H = Σ w a' b'ᵀ
    u, _, vt = jnp.linalg.svd(h)
    d = jnp.sign(jnp.linalg.det(mm(vt.T, u.T)))
    correction = jnp.diag(jnp.array([1.0, 1.0, 1.0]).at[2].set(jnp.where(d == 0, 1.0, d)))
    rotation = mm(mm(vt.T, correction), u.T)  # R = V diag(1, 1, d) Uᵀ
    diff = mm(a_c, rotation.T) - b_c
    return jnp.sqrt(jnp.sum(w * jnp.sum(diff * diff, axis=-1)) / total)


def _check_mol(mol: Chem.Mol) -> int:
    if not isinstance(mol, Chem.Mol):
        raise ValueError(f"mol must be an RDKit Chem.Mol, got {type(mol).__name__}")
    return mol.GetNumAtoms()


def _check_conformers(name: str, coords: np.typing.ArrayLike, n: int) -> np.ndarray:
    coords = np.asarray(coords, np.float64)
    if coords.ndim != 3 or coords.shape[1:] != (n, 3) or not np.all(np.isfinite(coords)):
        raise ValueError(f"{name} must be finite [K, {n}, 3] conformers, got shape {coords.shape}")
    return coords


def _with_coords(mol: Chem.Mol, coords: np.ndarray) -> Chem.Mol:
    out = Chem.Mol(mol)
    out.RemoveAllConformers()
    conf = Chem.Conformer(mol.GetNumAtoms())
    for i, (x, y, z) in enumerate(np.asarray(coords, np.float64)):
        conf.SetAtomPosition(i, Point3D(x, y, z))
    out.AddConformer(conf, assignId=True)
    return Chem.RemoveHs(out, sanitize=False)


def best_rmsd(mol: Chem.Mol, coords_a: np.typing.ArrayLike, coords_b: np.typing.ArrayLike) -> float:
    """Symmetry-aware heavy-atom RMSD (Å) between two conformers of ``mol``.

    Hydrogens are stripped, then RDKit's ``rdMolAlign.GetBestRMS`` aligns the two heavy-atom
    conformers under every graph automorphism and returns the smallest RMSD: the metric of
    the MCF / GeoMol / Torsional Diffusion evaluations.

    Args:
      mol: the molecule, with the atoms (hydrogens included) in the order of the coords.
      coords_a: ``[N, 3]`` conformer (the probe).
      coords_b: ``[N, 3]`` conformer (the reference).

    Returns:
      The RMSD as a Python float.
    """
    n = _check_mol(mol)
    coords_a, coords_b = np.asarray(coords_a), np.asarray(coords_b)
    for name, c in (("coords_a", coords_a), ("coords_b", coords_b)):
        if c.shape != (n, 3):
            raise ValueError(f"{name} must be [{n}, 3] for this molecule; got {c.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError(f"{name} contains NaN or inf")
    return float(rdMolAlign.GetBestRMS(_with_coords(mol, coords_a), _with_coords(mol, coords_b)))


def best_rmsd_matrix(
    mol: Chem.Mol, references: np.typing.ArrayLike, generated: np.typing.ArrayLike
) -> np.ndarray:
    """``R[j, i] = best_rmsd(mol, generated[i], references[j])`` for every pair.

    Args:
      mol: the molecule (hydrogens included, in the order of the coordinates).
      references: ``[K, N, 3]`` reference conformers.
      generated: ``[M, N, 3]`` generated conformers.

    Returns:
      ``[K, M]`` float64 RMSD matrix (Å).
    """
    n = _check_mol(mol)
    references = _check_conformers("references", references, n)
    generated = _check_conformers("generated", generated, n)
    heavy_refs = [_with_coords(mol, r) for r in references]
    heavy_gens = [_with_coords(mol, g) for g in generated]
    out = np.empty((len(heavy_refs), len(heavy_gens)), np.float64)
    for j, ref in enumerate(heavy_refs):
        for i, gen in enumerate(heavy_gens):
            out[j, i] = rdMolAlign.GetBestRMS(Chem.Mol(gen), ref)
    return out
