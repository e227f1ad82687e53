"""Frozen audio features, the stand-in for LLark's Jukebox encoder: log-mel, chroma, onset strength.

LLark mean-pools the activations of a frozen Jukebox prior to 10 frames per second and never
trains them. Here the encoder is the MIR field's standard front end, computed in JAX (batched,
``jit``-able, differentiable) with the filterbanks of ``librosa.filters``, and tested against
``librosa.feature.melspectrogram``, ``librosa.feature.chroma_stft`` and
``librosa.onset.onset_strength`` frame by frame. Short-time frames (``hop_length`` samples
apart, ``center=True`` as librosa) are mean-pooled by ``pool`` to the paper's rate.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_range
from jaxlab._optional import lazy_import

librosa = lazy_import("librosa", extra="audio")


class FeatureConfig(NamedTuple):
    """Front-end settings (defaults: 16 kHz, 64 ms windows, 10 ms hop, pooled to 10 fps).

    Attributes:
      sample_rate: samples per second.
      n_fft: FFT / window length in samples (Hann window, centred frames).
      hop_length: samples between short-time frames.
      n_mels: mel bands.
      fmin: lowest mel frequency in Hz.
      top_db: log-mel floor below the clip's maximum (librosa's ``power_to_db``).
      pool: short-time frames averaged into one output frame.
    """

    sample_rate: int = 16_000
    n_fft: int = 1024
    hop_length: int = 160
    n_mels: int = 40
    fmin: float = 30.0
    top_db: float = 80.0
    pool: int = 10

    @property
    def num_features(self) -> int:
        """Width of a feature frame: ``n_mels`` log-mel + 12 chroma + 1 onset strength."""
        return self.n_mels + 12 + 1

    @property
    def frames_per_second(self) -> float:
        return self.sample_rate / (self.hop_length * self.pool)


DEFAULT_FEATURES = FeatureConfig()


def num_frames(num_samples: int, config: FeatureConfig = DEFAULT_FEATURES) -> int:
    """Pooled frames of a clip of ``num_samples`` samples: ``(1 + n // hop) // pool``."""
    check_integer("num_samples", num_samples, low=0)
    _check_config(config)
    return (1 + int(num_samples) // config.hop_length) // config.pool


def _check_config(config: FeatureConfig) -> None:
    """Refuses a ``config`` that is not a ``FeatureConfig`` or holds an impossible setting."""
    if not isinstance(config, FeatureConfig):
        raise ValueError(f"config must be a FeatureConfig, got {type(config).__name__}")
    for name in ("sample_rate", "n_fft", "hop_length", "n_mels", "pool"):
        check_integer(f"config.{name}", getattr(config, name), low=1)
    check_range("config.fmin", config.fmin, 0.0, config.sample_rate / 2, high_open=True)
    check_range("config.top_db", config.top_db, 0.0, low_open=True)


def _check_audio(audio: ArrayLike) -> jax.Array:
    """``audio`` as float32 ``[batch, samples]`` (ints promoted, complex refused)."""
    audio = as_float("audio", audio, ndim=2)
    return audio.astype(jnp.float32)


@functools.lru_cache(maxsize=8)
def _filterbanks(config: FeatureConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mel = librosa.filters.mel(
        sr=config.sample_rate, n_fft=config.n_fft, n_mels=config.n_mels, fmin=config.fmin
    )
    chroma = librosa.filters.chroma(sr=config.sample_rate, n_fft=config.n_fft, tuning=0.0)
    window = librosa.filters.get_window("hann", config.n_fft, fftbins=True)
    return mel.astype(np.float32), chroma.astype(np.float32), window.astype(np.float32)


def power_spectrogram(audio: ArrayLike, config: FeatureConfig = DEFAULT_FEATURES) -> jax.Array:
    """|STFT|² with a Hann window and centred, zero-padded frames (librosa's ``stft``).

    Args:
      audio: ``[batch, samples]``.
      config: the front end.

    Returns:
      ``[batch, frames, n_fft // 2 + 1]`` with ``frames = 1 + samples // hop_length``.
    """
    audio = _check_audio(audio)
    _check_config(config)
    _, _, window = _filterbanks(config)
    pad = config.n_fft // 2
    padded = jnp.pad(audio, ((0, 0), (pad, pad)))
    frames = 1 + audio.shape[1] // config.hop_length
    index = np.arange(frames)[:, None] * config.hop_length + np.arange(config.n_fft)[None, :]
    spectrum = jnp.fft.rfft(padded[:, index] * window[None, None, :], axis=-1)
    return jnp.real(spectrum) ** 2 + jnp.imag(spectrum) ** 2


def short_time_features(
    audio: ArrayLike, config: FeatureConfig = DEFAULT_FEATURES
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Per short-time frame: log-mel (dB), chroma (max-normalised) and onset strength.

    log-mel = max(10·log10(max(M·|X|², 1e-10)), max − top_db) (``librosa.power_to_db``);
    chroma = C·|X|² divided by its per-frame maximum (``chroma_stft`` with ``tuning=0``);
    onset(t) = mean_f max(0, logmel(f, t) − logmel(f, t − 1)), delayed by
    ``1 + n_fft // (2·hop)`` frames as ``librosa.onset.onset_strength`` does.

    Args:
      audio: ``[batch, samples]``.
      config: the front end.

    Returns:
      ``(log_mel [b, T, n_mels], chroma [b, T, 12], onset [b, T])``, ``T = 1 + samples // hop``.
    """
    _check_config(config)
    mel_fb, chroma_fb, _ = _filterbanks(config)
    power = power_spectrogram(audio, config)
    mel = jnp.einsum("btk,mk->btm", power, mel_fb)
    log_mel = 10.0 * jnp.log10(jnp.maximum(mel, 1e-10))
    log_mel = jnp.maximum(log_mel, log_mel.max(axis=(1, 2), keepdims=True) - config.top_db)
    chroma = jnp.einsum("btk,ck->btc", power, chroma_fb)
    norm = chroma.max(axis=-1, keepdims=True)
    chroma = chroma / jnp.where(norm < np.finfo(np.float32).tiny, 1.0, norm)
    flux = jnp.maximum(0.0, log_mel[:, 1:] - log_mel[:, :-1]).mean(axis=-1)
    delay = 1 + config.n_fft // (2 * config.hop_length)
    onset = jnp.pad(flux, ((0, 0), (delay, 0)))[:, : log_mel.shape[1]]
    return log_mel, chroma, onset


def pool_frames(x: ArrayLike, factor: int) -> jax.Array:
    """Mean over consecutive groups of ``factor`` frames; a trailing partial group is dropped.

    Args:
      x: ``[batch, frames, ...]``.
      factor: frames per group.

    Returns:
      ``[batch, frames // factor, ...]``.
    """
    x = jnp.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be [batch, frames, ...], got shape {x.shape}")
    check_integer("factor", factor, low=1)
    out = x.shape[1] // factor
    return x[:, : out * factor].reshape(x.shape[0], out, factor, *x.shape[2:]).mean(axis=2)


def audio_features(audio: ArrayLike, config: FeatureConfig = DEFAULT_FEATURES) -> jax.Array:
    """Frozen frame features of clips, mean-pooled to ``config.frames_per_second`` (10 by default).

    The Jukebox stand-in of the miniature: [log-mel | chroma | onset strength] per frame,
    pooled like LLark's mean-pooling of Jukebox activations to 10 frames per second. Never
    trained. Silent clips give finite features (log-mel floor −100 dB, chroma and onset 0).

    Args:
      audio: ``[batch, samples]`` or ``[samples]`` at ``config.sample_rate``.
      config: the front end.

    Returns:
      ``[batch, num_frames(samples), n_mels + 13]`` (no batch axis for 1-D input).

    Raises:
      ValueError: fewer samples than one pooled frame needs.

    Example:
      >>> from jaxlab.audio import FeatureConfig, audio_features
      >>> clip = jnp.sin(2 * jnp.pi * 440.0 * jnp.arange(16000) / 16000)
      >>> audio_features(clip).shape
      (10, 53)

    References:
      Gardner et al., LLark, ICML 2024, Sec. 3 (frozen encoder, 10 Hz mean-pooling);
      McFee et al., librosa, SciPy 2015.
    """
    audio = jnp.asarray(audio)
    single = audio.ndim == 1
    if single:
        audio = audio[None]
    if audio.ndim != 2:
        raise ValueError(f"audio must be [samples] or [batch, samples], got shape {audio.shape}")
    if num_frames(audio.shape[1], config) < 1:
        raise ValueError(
            f"audio has {audio.shape[1]} samples, fewer than one pooled frame needs "
            f"({(config.pool - 1) * config.hop_length} at hop {config.hop_length}, pool "
            f"{config.pool})"
        )
    log_mel, chroma, onset = short_time_features(audio, config)
    frames = jnp.concatenate([log_mel, chroma, onset[..., None]], axis=-1)
    pooled = pool_frames(frames, config.pool)
    return pooled[0] if single else pooled
