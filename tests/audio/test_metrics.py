"""Tempo accuracy and the weighted key score against mir_eval on random label pairs."""

import jax
import jax.numpy as jnp
import mir_eval
import numpy as np
import pytest

from jaxlab.audio import (
    KEYS,
    encode_key,
    key_weighted_score,
    parse_key,
    parse_tempo,
    tempo_accuracy,
)

FLATS = ("C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B")
ALL_NAMES = list(KEYS) + [f"{t} {m}" for t in FLATS for m in ("major", "minor", "other")] + ["X"]


def test_key_score_equals_mir_eval_on_random_pairs():
    rng = np.random.default_rng(0)
    ref = list(rng.choice(ALL_NAMES, 400))
    est = list(rng.choice(ALL_NAMES, 400))
    # make the related cases frequent: fifths, relatives, parallels of the reference
    for i in range(0, 400, 4):
        tonic, mode = encode_key(ref[i])
        if tonic >= 0 and mode < 2:
            shift = int(rng.choice([0, 7, 9 if mode == 0 else 3]))
            other = int(rng.integers(2))
            est[i] = f"{FLATS[(tonic + shift) % 12]} {('major', 'minor')[other]}"
    ours = np.asarray(key_weighted_score(ref, est))
    expected = np.array([mir_eval.key.weighted_score(r, e) for r, e in zip(ref, est, strict=True)])
    np.testing.assert_allclose(ours, expected)
    assert {0.0, 0.2, 0.3, 0.5, 1.0} <= set(expected.tolist())


def test_key_score_bad_inputs():
    np.testing.assert_allclose(key_weighted_score(["C major"] * 2, [None, "H major"]), [0, 0])
    with pytest.raises(ValueError, match="unknown key name"):
        key_weighted_score(["H major"], ["C major"])
    with pytest.raises(ValueError, match="estimate"):
        key_weighted_score(["C major"], [])
    with pytest.raises(ValueError, match="sequences"):
        key_weighted_score("C major", "C major")


def _mir_eval_hit(ref, est, tol):
    return mir_eval.tempo.detection(np.array([ref, ref]), 0.5, np.array([est, est]), tol)[1]


def test_tempo_accuracy_equals_mir_eval_convention():
    rng = np.random.default_rng(1)
    ref = rng.uniform(60, 180, 300)
    factor = rng.choice([1.0, 2.0, 0.5, 3.0, 1 / 3, 1.5], 300)
    est = ref * factor * (1 + rng.uniform(-0.08, 0.08, 300))
    acc1, acc2 = jax.jit(tempo_accuracy)(ref, est)
    exp1 = [_mir_eval_hit(r, e, 0.04) for r, e in zip(ref, est, strict=True)]
    exp2 = [
        any(_mir_eval_hit(f * r, e, 0.04) for f in (1, 2, 0.5, 3, 1 / 3))
        for r, e in zip(ref, est, strict=True)
    ]
    np.testing.assert_array_equal(np.asarray(acc1), np.array(exp1, float))
    np.testing.assert_array_equal(np.asarray(acc2), np.array(exp2, float))
    assert 0 < np.mean(exp1) < np.mean(exp2) < 1


def test_tempo_accuracy_nan_and_bad_inputs():
    acc1, acc2 = tempo_accuracy(jnp.array([100.0]), jnp.array([jnp.nan]))
    assert float(acc1[0]) == 0.0 and float(acc2[0]) == 0.0
    with pytest.raises(ValueError, match="positive"):
        tempo_accuracy(jnp.array([0.0]), jnp.array([1.0]))
    with pytest.raises(ValueError, match="must be"):
        tempo_accuracy(jnp.ones(3), jnp.ones(2))


def test_parsers():
    assert parse_key("This one is in F# minor, I think") == "F# minor"
    assert parse_key("b flat major") == "Bb major"
    assert parse_key("E♭ minor") == "Eb minor"
    assert parse_key("") is None and parse_key("majorly minor") is None
    assert parse_tempo("around 128 BPM") == 128.0
    assert np.isnan(parse_tempo("quite fast")) and np.isnan(parse_tempo(None))
