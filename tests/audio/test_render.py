"""The renderer's labels are recovered by librosa's beat tracker and a chroma key template."""

import librosa
import numpy as np
import pytest

from jaxlab.audio import (
    KEYS,
    ClipMetadata,
    key_weighted_score,
    render_clip,
    sample_metadata,
    tempo_accuracy,
)

# Krumhansl-Kessler key profiles (an independent key estimator, as in librosa's docs).
MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


def _estimate_key(y, sr):
    chroma = librosa.feature.chroma_stft(y=y, sr=sr, tuning=0.0).mean(axis=1)
    scores = [np.corrcoef(np.roll(p, t), chroma)[0, 1] for p in (MAJOR, MINOR) for t in range(12)]
    return KEYS[int(np.argmax(scores))]


def test_rendered_key_and_tempo_are_recovered():
    rng = np.random.default_rng(1)
    metas = [sample_metadata(rng) for _ in range(6)]
    ref_bpm, est_bpm, keys = [], [], []
    for meta in metas:
        y = render_clip(meta)
        tempo, _ = librosa.beat.beat_track(y=y, sr=16000)
        ref_bpm.append(meta.tempo_bpm)
        est_bpm.append(float(np.atleast_1d(tempo)[0]))
        keys.append(_estimate_key(y, 16000))
    _, acc2 = tempo_accuracy(np.array(ref_bpm), np.array(est_bpm))
    score = key_weighted_score([m.key for m in metas], keys)
    assert float(acc2.mean()) >= 5 / 6, (ref_bpm, est_bpm)
    assert float(score.mean()) >= 0.75, ([m.key for m in metas], keys)


def test_render_is_deterministic_and_labelled():
    meta = sample_metadata(np.random.default_rng(7))
    a, b = render_clip(meta), render_clip(meta)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and a.shape == (int(round(meta.duration_s * 16000)),)
    np.testing.assert_allclose(np.abs(a).max(), 10 ** (meta.level_db / 20), rtol=1e-5)
    assert 6 <= meta.duration_s <= 10 and 60 <= meta.tempo_bpm <= 180
    assert meta.key in KEYS and len(meta.chords) == 4


def test_chords_follow_the_mode():
    meta = ClipMetadata(0, "minor", 90.0, 4, (0, 3, 4, 0), "organ", "rock", -3.0, 1.0, 0)
    assert meta.chords == ("i", "iv", "v", "i") and meta.key == "C minor"
    major = ClipMetadata(2, "major", 90.0, 4, (0, 5, 3, 4), "synth", "rock", -3.0, 1.0, 0)
    assert major.chords == ("I", "vi", "IV", "V")


def test_bad_inputs():
    with pytest.raises(ValueError, match="duration_s"):
        ClipMetadata(0, "major", 90.0, 4, (0,), "organ", "rock", -3.0, 0.0, 0)
    meta = ClipMetadata(0, "major", 90.0, 4, (0,), "organ", "rock", -3.0, 1.0, 0)
    with pytest.raises(ValueError, match="sample_rate"):
        render_clip(meta, sample_rate=2000)
    with pytest.raises(ValueError, match="duration_range"):
        sample_metadata(np.random.default_rng(0), duration_range=(3.0, 2.0))
