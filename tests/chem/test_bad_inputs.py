"""Bad input, one row per argument of every public ``jaxlab.chem`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import chem
from tests.bad_inputs import KEY, NAN, SCHED, Case, case_id, check

MCF_BATCH = {
    "atom_coords": jnp.ones((1, 5, 4)),
    "positions": jnp.ones((1, 5, 3)),
    "mask": jnp.ones((1, 5)),
}
COORDS = jnp.asarray(np.random.default_rng(0).normal(size=(5, 3)))

CASES = [
    Case("chem.kabsch_rmsd", "b", lambda: chem.kabsch_rmsd(COORDS, COORDS[:4])),
    Case("chem.kabsch_rmsd", "mask", lambda: chem.kabsch_rmsd(COORDS, COORDS, jnp.ones(3))),
    Case(
        "chem.kabsch_rmsd", "a", lambda: chem.kabsch_rmsd(COORDS.at[0, 0].set(NAN), COORDS), "nan"
    ),
    Case(
        "chem.best_rmsd",
        "coords_b",
        lambda: chem.best_rmsd(chem.mol_from_smiles("C"), np.zeros((5, 3)), np.zeros((4, 3))),
    ),
    Case("chem.best_rmsd", "mol", lambda: chem.best_rmsd("C", np.zeros((5, 3)), np.zeros((5, 3)))),
    Case(
        "chem.best_rmsd_matrix",
        "generated",
        lambda: chem.best_rmsd_matrix(
            chem.mol_from_smiles("C"), np.zeros((1, 5, 3)), np.zeros((1, 4, 3))
        ),
    ),
    Case(
        "chem.best_rmsd_matrix",
        "references",
        lambda: chem.best_rmsd_matrix(
            chem.mol_from_smiles("C"), np.zeros((5, 3)), np.zeros((1, 5, 3))
        ),
    ),
    Case(
        "chem.coverage_matching", "threshold", lambda: chem.coverage_matching(np.ones((2, 2)), 0.0)
    ),
    Case(
        "chem.coverage_matching", "rmsd", lambda: chem.coverage_matching(np.full((2, 2), NAN), 1.0)
    ),
    Case(
        "chem.center_positions",
        "mask",
        lambda: chem.center_positions(jnp.ones((1, 5, 3)), jnp.ones((1, 4))),
    ),
    Case(
        "chem.center_positions", "x", lambda: chem.center_positions(jnp.ones((5, 3)), jnp.ones(5))
    ),
    Case("chem.featurize", "mol", lambda: chem.featurize(42)),
    Case("chem.mol_from_smiles", "smiles", lambda: chem.mol_from_smiles(None)),
    Case(
        "chem.laplacian_eigenfunctions", "k", lambda: chem.laplacian_eigenfunctions(jnp.eye(3), k=0)
    ),
    Case(
        "chem.laplacian_eigenfunctions",
        "adjacency",
        lambda: chem.laplacian_eigenfunctions(jnp.ones((3, 2))),
    ),
    Case(
        "chem.laplacian_eigenfunctions",
        "mask",
        lambda: chem.laplacian_eigenfunctions(jnp.eye(3), k=2, mask=jnp.ones(2)),
    ),
    Case("chem.timestep_embedding", "dim", lambda: chem.timestep_embedding(jnp.arange(3), 0)),
    Case(
        "chem.timestep_embedding",
        "max_period",
        lambda: chem.timestep_embedding(jnp.arange(3), 4, max_period=0.0),
    ),
    Case("chem.timestep_embedding", "t", lambda: chem.timestep_embedding(jnp.ones((2, 2)), 4)),
    Case(
        "chem.mcf_loss",
        "batch",
        lambda: chem.mcf_loss(lambda *a: a[2], {}, SCHED, {"positions": jnp.ones((1, 5, 3))}, KEY),
    ),
    Case("chem.mcf_loss", "key", lambda: chem.mcf_loss(lambda *a: a[2], {}, SCHED, MCF_BATCH, 0)),
    Case(
        "chem.mcf_sample",
        "mask",
        lambda: chem.mcf_sample(
            lambda *a: a[2], {}, SCHED, jnp.ones((1, 5, 4)), jnp.ones((1, 4)), KEY
        ),
    ),
    Case(
        "chem.mcf_sample",
        "eta",
        lambda: chem.mcf_sample(
            lambda *a: a[2], {}, SCHED, jnp.ones((1, 5, 4)), jnp.ones((1, 5)), KEY, eta=-1.0
        ),
    ),
    Case(
        "chem.mcf_sample",
        "key",
        lambda: chem.mcf_sample(
            lambda *a: a[2], {}, SCHED, jnp.ones((1, 5, 4)), jnp.ones((1, 5)), None
        ),
    ),
    Case(
        "chem.best_rmsd",
        "coords_a",
        lambda: chem.best_rmsd(chem.mol_from_smiles("C"), np.full((5, 3), NAN), np.zeros((5, 3))),
    ),
    Case(
        "chem.best_rmsd_matrix",
        "mol",
        lambda: chem.best_rmsd_matrix("C", np.zeros((1, 5, 3)), np.zeros((1, 5, 3))),
    ),
    Case(
        "chem.mcf_loss",
        "schedule",
        lambda: chem.mcf_loss(lambda *a: a[2], {}, None, MCF_BATCH, KEY),
    ),
    Case("chem.mcf_loss", "apply_fn", lambda: chem.mcf_loss(None, {}, SCHED, MCF_BATCH, KEY)),
    Case(
        "chem.mcf_sample",
        "apply_fn",
        lambda: chem.mcf_sample(None, {}, SCHED, jnp.ones((1, 5, 4)), jnp.ones((1, 5)), KEY),
    ),
    Case(
        "chem.mcf_sample",
        "schedule",
        lambda: chem.mcf_sample(
            lambda *a: a[2], {}, None, jnp.ones((1, 5, 4)), jnp.ones((1, 5)), KEY
        ),
    ),
    Case(
        "chem.mcf_sample",
        "atom_coords",
        lambda: chem.mcf_sample(lambda *a: a[2], {}, SCHED, jnp.ones(5), jnp.ones((1, 5)), KEY),
    ),
    Case(
        "chem.mcf_sample",
        "num_steps",
        lambda: chem.mcf_sample(
            lambda *a: a[2], {}, SCHED, jnp.ones((1, 5, 4)), jnp.ones((1, 5)), KEY, num_steps=0
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
