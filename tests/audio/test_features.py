"""Frozen features against librosa (mel spectrogram, chroma_stft, onset_strength)."""

import jax
import jax.numpy as jnp
import librosa
import numpy as np
import pytest

from jaxlab.audio import (
    FeatureConfig,
    audio_features,
    num_frames,
    pool_frames,
    render_clip,
    sample_metadata,
    short_time_features,
)

CONFIG = FeatureConfig()


@pytest.fixture(scope="module")
def clip():
    meta = sample_metadata(np.random.default_rng(3), duration_range=(2.0, 2.0))
    return render_clip(meta, CONFIG.sample_rate)


def _librosa_features(y, c=CONFIG):
    power = (
        np.abs(
            librosa.stft(
                y,
                n_fft=c.n_fft,
                hop_length=c.hop_length,
                center=True,
                window="hann",
                pad_mode="constant",
            )
        )
        ** 2
    )
    mel = librosa.feature.melspectrogram(S=power, sr=c.sample_rate, n_mels=c.n_mels, fmin=c.fmin)
    log_mel = librosa.power_to_db(mel, top_db=c.top_db)
    chroma = librosa.feature.chroma_stft(S=power, sr=c.sample_rate, tuning=0.0, n_fft=c.n_fft)
    onset = librosa.onset.onset_strength(
        S=log_mel, sr=c.sample_rate, n_fft=c.n_fft, hop_length=c.hop_length
    )
    return log_mel.T, chroma.T, onset


def test_short_time_features_match_librosa(clip):
    ours = short_time_features(clip[None], CONFIG)
    ref = _librosa_features(clip)
    for name, a, b in zip(("log_mel", "chroma", "onset"), ours, ref, strict=True):
        assert a.shape[1:] == b.shape, name
        np.testing.assert_allclose(
            np.asarray(a[0]), b, atol=2e-2 if name != "chroma" else 2e-3, err_msg=name
        )


def test_pooled_features_are_means_of_ten_frames(clip):
    feats = audio_features(clip, CONFIG)
    log_mel, chroma, onset = _librosa_features(clip)
    frames = np.concatenate([log_mel, chroma, onset[:, None]], axis=1)
    t = num_frames(len(clip), CONFIG)
    assert feats.shape == (t, CONFIG.num_features) and t == 20
    ref = frames[: t * 10].reshape(t, 10, -1).mean(axis=1)
    np.testing.assert_allclose(np.asarray(feats), ref, atol=2e-2)
    np.testing.assert_allclose(np.asarray(pool_frames(jnp.arange(7.0)[None], 3))[0], [1, 4])


def test_jit_vmap_batch_and_grad(clip):
    batch = np.stack([clip[:4800], 0.5 * clip[16000:20800]])
    batched = jax.jit(audio_features)(batch)
    single = jax.vmap(audio_features)(batch)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(single), atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(batched[1]), np.asarray(audio_features(batch[1])), atol=1e-4
    )
    grad = jax.grad(lambda y: audio_features(y)[:, -1].sum())(jnp.asarray(batch[0]))
    assert bool(jnp.all(jnp.isfinite(grad)))


def test_silent_and_short_clips():
    silent = audio_features(np.zeros(16000, np.float32))
    assert bool(jnp.all(jnp.isfinite(silent)))
    np.testing.assert_allclose(np.asarray(silent[:, 40:]), 0.0)
    assert audio_features(np.zeros(9 * 160)).shape == (1, 53)  # exactly one pooled frame
    with pytest.raises(ValueError, match="fewer than one pooled frame"):
        audio_features(np.zeros(9 * 160 - 1))
    with pytest.raises(ValueError, match="audio must be"):
        audio_features(np.zeros((1, 2, 16000)))
