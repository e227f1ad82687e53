"""Bad input, one row per argument of every public ``jaxlab.audio`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import audio
from tests.bad_inputs import KEY, NAN, Case, case_id, check

META = audio.ClipMetadata(0, "major", 90.0, 4, (0, 3, 4, 0), "organ", "rock", -3.0, 1.0, 0)
CLIP = jnp.zeros((1, 4000))
AUDIO_TOK = audio.WordTokenizer.fit(["what key is it in ?"])
SMALL = audio.FeatureConfig(sample_rate=8000, n_fft=256, hop_length=80, n_mels=8, pool=2)


def _meta(**changes):
    return lambda: dataclasses.replace(META, **changes)


CASES = [
    Case("audio.audio_features", "audio", lambda: audio.audio_features(jnp.ones((1, 2, 3)))),
    Case("audio.audio_features", "config", lambda: audio.audio_features(CLIP, {"pool": 2})),
    Case("audio.audio_features", "audio", lambda: audio.audio_features(CLIP[:, :10], SMALL)),
    Case("audio.power_spectrogram", "audio", lambda: audio.power_spectrogram(jnp.ones(5))),
    Case(
        "audio.power_spectrogram",
        "audio",
        lambda: audio.power_spectrogram(jnp.ones((1, 400), complex), SMALL),
    ),
    Case(
        "audio.power_spectrogram",
        "config",
        lambda: audio.power_spectrogram(CLIP, SMALL._replace(n_fft=0)),
    ),
    Case(
        "audio.short_time_features",
        "config",
        lambda: audio.short_time_features(CLIP, SMALL._replace(fmin=5000.0)),
    ),
    Case(
        "audio.short_time_features", "audio", lambda: audio.short_time_features(jnp.ones(()), SMALL)
    ),
    Case("audio.num_frames", "num_samples", lambda: audio.num_frames(100.7)),
    Case("audio.num_frames", "config", lambda: audio.num_frames(100, SMALL._replace(pool=0))),
    Case("audio.pool_frames", "factor", lambda: audio.pool_frames(jnp.ones((1, 4, 2)), 0)),
    Case("audio.pool_frames", "x", lambda: audio.pool_frames(jnp.ones(4), 2)),
    Case(
        "audio.tempo_accuracy",
        "tolerance",
        lambda: audio.tempo_accuracy(jnp.ones(2), jnp.ones(2), tolerance=1.5),
    ),
    Case(
        "audio.tempo_accuracy",
        "reference_bpm",
        lambda: audio.tempo_accuracy(jnp.array([0.0, 90.0]), jnp.ones(2)),
    ),
    Case(
        "audio.tempo_accuracy",
        "estimated_bpm",
        lambda: audio.tempo_accuracy(jnp.ones(2), jnp.ones(3)),
    ),
    Case("audio.encode_key", "name", lambda: audio.encode_key("H major")),
    Case("audio.encode_key", "strict", lambda: audio.encode_key("C major", strict="yes")),
    Case(
        "audio.key_weighted_score",
        "reference",
        lambda: audio.key_weighted_score("C major", ["C major"]),
    ),
    Case(
        "audio.key_weighted_score",
        "estimate",
        lambda: audio.key_weighted_score(["C major"], ["C major", "D minor"]),
    ),
    Case(
        "audio.weighted_key_score_codes",
        "reference_tonic",
        lambda: audio.weighted_key_score_codes(
            jnp.array([0.5]), jnp.zeros(1, int), jnp.zeros(1, int), jnp.zeros(1, int)
        ),
    ),
    Case(
        "audio.weighted_key_score_codes",
        "reference_mode",
        lambda: audio.weighted_key_score_codes(
            jnp.zeros(1, int), jnp.zeros(2, int), jnp.zeros(1, int), jnp.zeros(1, int)
        ),
    ),
    Case(
        "audio.weighted_key_score_codes",
        "estimated_tonic",
        lambda: audio.weighted_key_score_codes(
            jnp.zeros(1, int), jnp.zeros(1, int), jnp.ones(1), jnp.zeros(1, int)
        ),
    ),
    Case(
        "audio.weighted_key_score_codes",
        "estimated_mode",
        lambda: audio.weighted_key_score_codes(
            jnp.zeros(1, int), jnp.zeros(1, int), jnp.zeros(1, int), jnp.zeros(3, int)
        ),
    ),
    Case("audio.parse_key", "text", lambda: audio.parse_key(3)),
    Case("audio.parse_tempo", "text", lambda: audio.parse_tempo(["96 BPM"])),
    Case("audio.render_clip", "sample_rate", lambda: audio.render_clip(META, sample_rate=100)),
    Case("audio.render_clip", "meta", lambda: audio.render_clip({"tonic": 0})),
    Case(
        "audio.sample_metadata",
        "duration_range",
        lambda: audio.sample_metadata(np.random.default_rng(0), duration_range=(0.0, 1.0)),
    ),
    Case(
        "audio.sample_metadata",
        "tempo_range",
        lambda: audio.sample_metadata(np.random.default_rng(0), tempo_range=(90.0, 60.0)),
    ),
    Case("audio.sample_metadata", "rng", lambda: audio.sample_metadata(KEY)),
    Case("audio.make_instructions", "tasks", lambda: audio.make_instructions([META], ["bogus"])),
    Case(
        "audio.make_instructions",
        "held_out",
        lambda: audio.make_instructions([META], ["key"], held_out=-1),
    ),
    Case("audio.make_instructions", "metas", lambda: audio.make_instructions([{"tonic": 0}])),
    Case("audio.make_instructions", "rng", lambda: audio.make_instructions([META], rng=KEY)),
    Case(
        "audio.make_instructions",
        "split",
        lambda: audio.make_instructions([META], ["key"], split=3),
    ),
    Case(
        "audio.encode_example",
        "length",
        lambda: audio.encode_example(AUDIO_TOK, "what key", "it", 2, 3),
    ),
    Case(
        "audio.encode_example",
        "num_audio",
        lambda: audio.encode_example(AUDIO_TOK, "what key", "it", -1, 30),
    ),
    Case(
        "audio.encode_example",
        "tokenizer",
        lambda: audio.encode_example(None, "what key", "it", 2, 30),
    ),
    Case(
        "audio.encode_example",
        "question",
        lambda: audio.encode_example(AUDIO_TOK, None, "it", 2, 30),
    ),
    Case(
        "audio.encode_example",
        "answer_text",
        lambda: audio.encode_example(AUDIO_TOK, "what key", 5, 2, 30),
    ),
    Case("audio.WordTokenizer", "vocabulary", lambda: audio.WordTokenizer(["a", "b"])),
    Case("audio.ClipMetadata", "tonic", _meta(tonic=12)),
    Case("audio.ClipMetadata", "mode", _meta(mode="dorian")),
    Case("audio.ClipMetadata", "tempo_bpm", _meta(tempo_bpm=0.0)),
    Case("audio.ClipMetadata", "beats_per_bar", _meta(beats_per_bar=0)),
    Case("audio.ClipMetadata", "progression", _meta(progression=())),
    Case("audio.ClipMetadata", "instrument", _meta(instrument="kazoo")),
    Case("audio.ClipMetadata", "drums", _meta(drums="jazz")),
    Case("audio.ClipMetadata", "level_db", _meta(level_db=NAN)),
    Case("audio.ClipMetadata", "duration_s", _meta(duration_s=-1.0)),
    Case("audio.ClipMetadata", "seed", _meta(seed=1.5)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
