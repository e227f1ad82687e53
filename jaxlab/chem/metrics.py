"""Conformer-ensemble metrics: coverage (COV) and matching (MAT), recall and precision."""

from __future__ import annotations

import numpy as np


def coverage_matching(rmsd: np.typing.ArrayLike, threshold: float) -> dict[str, float]:
    """COV-R, MAT-R, COV-P and MAT-P of one molecule from its RMSD matrix.

    With R[j, i] the RMSD between reference j (of K) and generated conformer i (of M):

        COV-R = (1/K) Σ_j 1[min_i R_ji ≤ δ]     MAT-R = (1/K) Σ_j min_i R_ji
        COV-P = (1/M) Σ_i 1[min_j R_ji ≤ δ]     MAT-P = (1/M) Σ_i min_j R_ji

    Args:
      rmsd: ``[K, M]`` RMSD matrix (Å), K ≥ 1 references and M ≥ 1 generated conformers.
      threshold: δ (0.5 Å for QM9, 0.75 Å for GEOM-Drugs).

    Returns:
      ``{"cov_r", "mat_r", "cov_p", "mat_p"}`` as floats (coverage as a fraction in [0, 1]).

    Example:
      >>> coverage_matching(np.array([[0.2, 0.9], [0.7, 0.6]]), 0.5)["cov_r"]
      0.5

    References:
      Xu et al., "Learning Neural Generative Dynamics for Molecular Conformation
      Generation", ICLR 2021 (the COV/MAT metrics); Ganea et al., "GeoMol", NeurIPS 2021
      (the precision variants).
    """
    rmsd = np.asarray(rmsd, np.float64)
    if rmsd.ndim != 2 or 0 in rmsd.shape:
        raise ValueError(f"rmsd must be a non-empty [num_ref, num_gen] matrix; got {rmsd.shape}")
    if not np.all(np.isfinite(rmsd)) or np.any(rmsd < 0):
        raise ValueError("rmsd must be finite and non-negative")
    if not threshold > 0:
        raise ValueError(f"threshold must be positive; got {threshold}")
    best_per_ref = rmsd.min(axis=1)
    best_per_gen = rmsd.min(axis=0)
    return {
        "cov_r": float(np.mean(best_per_ref <= threshold)),
        "mat_r": float(np.mean(best_per_ref)),
        "cov_p": float(np.mean(best_per_gen <= threshold)),
        "mat_p": float(np.mean(best_per_gen)),
    }
