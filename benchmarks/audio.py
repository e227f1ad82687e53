"""LLark miniature: feature-extraction throughput and answer generation with and without a KV cache.

Usage: ``jaxlab bench audio [--quick]`` (or ``python benchmarks/audio.py``).

1. Frozen features (log-mel + chroma + onset strength, pooled to 10 fps) of a batch of 8 s
   clips at 16 kHz: ``jaxlab.audio.audio_features`` jitted over the batch against librosa
   called clip by clip (``melspectrogram`` + ``power_to_db`` + ``chroma_stft`` +
   ``onset_strength`` on one shared STFT, the same work). Clips per second.
2. Greedy answers of ``jaxlab.nn.generate`` for a batch of prompts (80 audio frames, a
   question, room for the answer) with the key/value cache against recomputing the whole
   prefix at each step. Answers per second.

Every pair is timed round-robin with ``jaxlab.train.time_interleaved`` in the same run.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import librosa
import numpy as np

from jaxlab.audio import FeatureConfig, audio_features, render_clip, sample_metadata
from jaxlab.nn import AudioLM, generate
from jaxlab.train.timing import time_interleaved


def _librosa_features(y: np.ndarray, c: FeatureConfig) -> np.ndarray:
    power = np.abs(librosa.stft(y, n_fft=c.n_fft, hop_length=c.hop_length)) ** 2
    log_mel = librosa.power_to_db(
        librosa.feature.melspectrogram(S=power, sr=c.sample_rate, n_mels=c.n_mels, fmin=c.fmin),
        top_db=c.top_db,
    )
    chroma = librosa.feature.chroma_stft(S=power, sr=c.sample_rate, tuning=0.0, n_fft=c.n_fft)
    onset = librosa.onset.onset_strength(
        S=log_mel, sr=c.sample_rate, n_fft=c.n_fft, hop_length=c.hop_length
    )
    frames = np.concatenate([log_mel, chroma, onset[None]], axis=0).T
    t = frames.shape[0] // c.pool
    return frames[: t * c.pool].reshape(t, c.pool, -1).mean(axis=1)


def bench_features(num_clips: int, repeats: int) -> None:
    config = FeatureConfig()
    rng = np.random.default_rng(0)
    clips = np.stack([render_clip(sample_metadata(rng, (8.0, 8.0))) for _ in range(num_clips)])
    ours = jax.jit(audio_features)
    batch = jnp.asarray(clips)
    times = time_interleaved(
        {
            "jaxlab (jit, batched)": lambda: ours(batch),
            "librosa (clip by clip)": lambda: [_librosa_features(y, config) for y in clips],
        },
        repeats=repeats,
    )
    print(f"\nfeatures of {num_clips} clips of 8 s at 16 kHz ({jax.default_backend()})")
    print(f"{'pipeline':28s} {'clips/s':>10s} {'speed-up':>9s}")
    for name, t in times.items():
        print(f"{name:28s} {num_clips / t:10.1f} {times['librosa (clip by clip)'] / t:8.1f}x")


def bench_generation(batch: int, repeats: int) -> None:
    frames, length = 80, 128
    model = AudioLM(
        vocab_size=200, audio_token_id=5, max_len=length, dim=128, depth=2, num_heads=4, mlp_dim=512
    )
    rng = np.random.default_rng(0)
    prompt = rng.integers(8, 200, (batch, length)).astype(np.int32)
    prompt[:, 1 : 1 + frames] = 5
    prompt_length = np.full(batch, frames + 16, np.int32)
    audio = rng.standard_normal((batch, frames, 54)).astype(np.float32)
    params = model.init(jax.random.key(0), prompt[:1], audio[:1])
    key = jax.random.key(1)
    cached = jax.jit(lambda p: generate(p, model, prompt, prompt_length, audio, key))
    full = jax.jit(lambda p: generate(p, model, prompt, prompt_length, audio, key, use_cache=False))
    times = time_interleaved(
        {"KV cache": lambda: cached(params), "no cache (recompute prefix)": lambda: full(params)},
        repeats=repeats,
    )
    print(
        f"\ngreedy answers, batch {batch}, context {length} ({frames} audio frames), "
        f"2 layers width 128"
    )
    print(f"{'decoder':28s} {'answers/s':>10s} {'speed-up':>9s}")
    for name, t in times.items():
        print(f"{name:28s} {batch / t:10.1f} {times['no cache (recompute prefix)'] / t:8.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    args = parser.parse_args(argv)
    bench_features(num_clips=8 if args.quick else 32, repeats=3 if args.quick else 5)
    bench_generation(batch=8 if args.quick else 32, repeats=3 if args.quick else 5)


if __name__ == "__main__":
    main()
