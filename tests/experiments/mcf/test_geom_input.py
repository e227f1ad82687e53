"""The paper preset's GEOM input: a record's MCF input, conformer blocks and normalized
positions (checked against PositionScale), and records of mock data with ragged lengths."""

import numpy as np

from jaxlab.chem.training import PositionScale
from jaxlab.data.qm9 import MAX_ATOMS
from jaxlab_experiments.mcf.mcf_qm9 import train

SCALE = PositionScale(np.array([-9.9898, -4.3612, -3.4942]), np.array([9.9814, 4.3942, 3.6662]))


def _record(n=5, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "num_atoms": np.int32(n),
        "eigenfunctions": rng.normal(size=(n, 32)),
        "atom_features": rng.normal(size=(n, 43)),
        "conformers": rng.normal(size=(k * n, 3)).astype(np.float32),
    }


def test_train_example_is_one_of_the_first_conformers_normalized():
    record = _record()
    example = train._TrainConformer(SCALE, max_confs=2).random_map(record, np.random.default_rng(1))
    assert example["atom_coords"].shape == (MAX_ATOMS, 75)
    assert example["mask"].sum() == 5 and example["positions"][5:].sum() == 0
    blocks = record["conformers"].reshape(3, 5, 3)
    mask = np.ones((1, 5), np.float32)
    candidates = [SCALE.normalize(b[None], mask)[0] for b in blocks[:2]]
    assert any(np.allclose(example["positions"][:5], c, atol=1e-5) for c in candidates)
    np.testing.assert_allclose(example["atom_coords"][:5, :32], record["eigenfunctions"])


def test_ragged_mock_records_give_whole_blocks_and_a_real_atom():
    record = _record(n=4)
    record["atom_features"] = record["atom_features"][:2]  # lengths drawn independently
    record["conformers"] = record["conformers"][:5]
    coords, mask, n = train._geom_inputs(record)
    assert n == 2 and mask.sum() == 2 and coords.shape == (MAX_ATOMS, 75)
    assert train._geom_conformers(record, n).shape == (2, 2, 3)
    empty = dict(record, atom_features=np.zeros((0, 43)))
    assert train._geom_inputs(empty)[1].sum() == 1


def test_sample_rows_copy_their_molecule():
    rows = train._SampleRows(
        [(np.zeros((2, 3)), np.ones(2)), (np.ones((2, 3)), np.ones(2))], [0, 1, 1]
    )
    assert len(rows) == 3 and rows[2]["atom_coords"].sum() == 6 and int(rows[2]["row"]) == 2
