"""Deterministic music with exact labels: a chord progression in one of 24 keys over a drum track.

LLark's instruction data is generated from per-track metadata (madmom estimates of key, tempo,
downbeats and chords plus dataset tags). This renderer inverts that: it samples the metadata
first and synthesises a clip from it, so every label is exact. Hand-written in numpy (no
maintained library renders labelled music); it is data generation, not a differentiable kernel.

A clip: ``duration_s`` seconds at ``sample_rate`` Hz; one chord per bar following the
progression (bass root plus a triad, re-struck on every beat), in the timbre of one of
``INSTRUMENTS`` (additive sines, band-limited sawtooth, plucked string), over one of
``DRUM_PATTERNS``, scaled to ``level_db`` dBFS peak.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxlab._checks import check_integer, check_range

PITCH_CLASSES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
MODES = ("major", "minor")
KEYS = tuple(f"{p} {m}" for m in MODES for p in PITCH_CLASSES)
INSTRUMENTS = ("organ", "synth", "plucked")
DRUM_PATTERNS = ("rock", "four_on_the_floor", "waltz", "sparse")
# Progressions as scale degrees (0-based) of the key's diatonic triads.
PROGRESSIONS = {
    "major": ((0, 3, 4, 0), (0, 4, 5, 3), (0, 5, 3, 4), (0, 3, 0, 4)),
    "minor": ((0, 3, 4, 0), (0, 5, 2, 6), (0, 3, 6, 0), (0, 6, 5, 4)),
}
_SCALES = {"major": (0, 2, 4, 5, 7, 9, 11), "minor": (0, 2, 3, 5, 7, 8, 10)}
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII")


@dataclasses.dataclass(frozen=True)
class ClipMetadata:
    """The ground truth of one clip (every field is exact by construction).

    Attributes:
      tonic: pitch class of the key's tonic, 0 (C) .. 11 (B).
      mode: ``"major"`` or ``"minor"``.
      tempo_bpm: beats per minute, in [60, 180].
      beats_per_bar: 3 or 4 (the time signature's numerator, over 4).
      progression: scale degrees (0-based) of the chords, one per bar, cycled.
      instrument: one of ``INSTRUMENTS``.
      drums: one of ``DRUM_PATTERNS``.
      level_db: peak level in dBFS.
      duration_s: length in seconds.
      seed: seed of the voicing and the noise.
    """

    tonic: int
    mode: str
    tempo_bpm: float
    beats_per_bar: int
    progression: tuple[int, ...]
    instrument: str
    drums: str
    level_db: float
    duration_s: float
    seed: int

    def __post_init__(self) -> None:
        check_integer("tonic", self.tonic, low=0)
        if self.tonic >= 12:
            raise ValueError(f"tonic must be a pitch class in [0, 12), got {self.tonic}")
        for name, allowed in (
            ("mode", MODES),
            ("instrument", INSTRUMENTS),
            ("drums", DRUM_PATTERNS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        check_range("tempo_bpm", self.tempo_bpm, 0.0, low_open=True)
        check_integer("beats_per_bar", self.beats_per_bar, low=1)
        if not self.progression or any(not 0 <= d < 7 for d in self.progression):
            raise ValueError(
                f"progression must be scale degrees in [0, 7), got {self.progression!r}"
            )
        check_range("level_db", self.level_db)  # NaN refused
        check_range("duration_s", self.duration_s, 0.0, low_open=True)
        check_integer("seed", self.seed, low=0)

    @property
    def key(self) -> str:
        """The key in ``mir_eval`` format, e.g. ``"F# minor"``."""
        return f"{PITCH_CLASSES[self.tonic]} {self.mode}"

    @property
    def chords(self) -> tuple[str, ...]:
        """The progression as roman numerals (lower case for minor triads)."""
        out = []
        for degree in self.progression:
            quality = _triad_quality(self.mode, degree)
            numeral = _ROMAN[degree]
            out.append(numeral if quality == "major" else numeral.lower())
        return tuple(out)


def _triad_quality(mode: str, degree: int) -> str:
    scale = _SCALES[mode]
    third = (scale[(degree + 2) % 7] - scale[degree]) % 12
    return "major" if third == 4 else "minor"


def sample_metadata(
    rng: np.random.Generator,
    duration_range: tuple[float, float] = (6.0, 10.0),
    tempo_range: tuple[float, float] = (60.0, 180.0),
) -> ClipMetadata:
    """Draws one clip's metadata uniformly: key, integer tempo, metre, progression, timbre, level.

    Args:
      rng: a numpy ``Generator``.
      duration_range: seconds, ``(low, high)``; a duration is drawn on a 0.5 s grid.
      tempo_range: BPM, ``(low, high)``; integer tempi are drawn.

    Returns:
      A ``ClipMetadata``.

    Example:
      >>> from jaxlab.audio import sample_metadata
      >>> meta = sample_metadata(np.random.default_rng(0))
      >>> meta.key in __import__("jaxlab.audio", fromlist=["KEYS"]).KEYS
      True
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy Generator (host-side sampling), got {type(rng).__name__}"
        )
    lo, hi = duration_range
    if not 0 < lo <= hi:
        raise ValueError(f"duration_range must satisfy 0 < low <= high, got {duration_range}")
    if not 0 < tempo_range[0] <= tempo_range[1]:
        raise ValueError(f"tempo_range must satisfy 0 < low <= high, got {tempo_range}")
    mode = MODES[int(rng.integers(2))]
    beats_per_bar = int(rng.choice((3, 4), p=(0.25, 0.75)))
    drums = (
        "waltz" if beats_per_bar == 3 else str(rng.choice(("rock", "four_on_the_floor", "sparse")))
    )
    progressions = PROGRESSIONS[mode]
    return ClipMetadata(
        tonic=int(rng.integers(12)),
        mode=mode,
        tempo_bpm=float(rng.integers(int(tempo_range[0]), int(tempo_range[1]) + 1)),
        beats_per_bar=beats_per_bar,
        progression=tuple(progressions[int(rng.integers(len(progressions)))]),
        instrument=INSTRUMENTS[int(rng.integers(len(INSTRUMENTS)))],
        drums=drums,
        level_db=float(rng.uniform(-12.0, -1.0)),
        duration_s=float(np.round(rng.uniform(lo, hi) * 2) / 2),
        seed=int(rng.integers(2**31 - 1)),
    )


def _midi_to_hz(midi: int) -> float:
    return float(440.0 * 2.0 ** ((np.asarray(midi, float) - 69.0) / 12.0))


def _tone(
    freq: float, n: int, sample_rate: int, instrument: str, rng: np.random.Generator
) -> np.ndarray:
    """One note of ``n`` samples: harmonics below Nyquist with the instrument's envelope."""
    t = np.arange(n) / sample_rate
    if instrument == "organ":
        amps = np.array([1.0, 0.5, 0.25, 0.12])
        env = np.minimum(1.0, t / 0.01) * np.exp(-t * 1.5)
    elif instrument == "synth":
        amps = 1.0 / np.arange(1, 13)
        env = np.minimum(1.0, t / 0.005) * np.exp(-t * 3.0)
    else:  # plucked: bright attack, fast decay, upper harmonics decay faster
        amps = 0.8 ** np.arange(10)
        env = np.exp(-t * 6.0)
    out = np.zeros(n)
    phase = rng.uniform(0, 2 * np.pi)
    for k, a in enumerate(amps, start=1):
        if k * freq >= 0.45 * sample_rate:
            break
        decay = np.exp(-t * 2.0 * k) if instrument == "plucked" else 1.0
        out += a * decay * np.sin(2 * np.pi * k * freq * t + k * phase)
    return out * env


def _drum(kind: str, n: int, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / sample_rate
    if kind == "kick":  # a falling sine sweep
        freq = 50.0 + 100.0 * np.exp(-t * 30.0)
        return np.sin(2 * np.pi * np.cumsum(freq) / sample_rate) * np.exp(-t * 18.0)
    noise = rng.standard_normal(n)
    if kind == "snare":
        return 0.6 * noise * np.exp(-t * 25.0)
    return 0.25 * np.diff(noise, prepend=0.0) * np.exp(-t * 80.0)  # hat: high-passed noise


def _drum_hits(pattern: str, beats_per_bar: int) -> list[tuple[float, str]]:
    """(beat offset within the bar, drum) pairs."""
    if pattern == "rock":
        hits = [(0.0, "kick"), (2.0, "kick"), (1.0, "snare"), (3.0, "snare")]
    elif pattern == "four_on_the_floor":
        hits = [(float(b), "kick") for b in range(beats_per_bar)] + [(1.0, "snare"), (3.0, "snare")]
    elif pattern == "waltz":
        hits = [(0.0, "kick"), (1.0, "snare"), (2.0, "snare")]
    else:
        hits = [(0.0, "kick")]
    hits += [(b + 0.5 * h, "hat") for b in range(beats_per_bar) for h in range(2)]
    return [(b, d) for b, d in hits if b < beats_per_bar]


def render_clip(meta: ClipMetadata, sample_rate: int = 16_000) -> np.ndarray:
    """Synthesises the clip that ``meta`` describes.

    One chord per bar (``meta.progression`` cycled): the root in octave 2 and the triad in
    octave 4, re-struck on every beat, so the beat and the harmony are both audible. Beat 1 of
    each bar is accented. The drum track follows ``meta.drums``; the mix is scaled to a peak of
    ``meta.level_db`` dBFS.

    Args:
      meta: the clip's metadata.
      sample_rate: samples per second.

    Returns:
      ``float32 [round(duration_s * sample_rate)]`` in [-1, 1].

    Example:
      >>> from jaxlab.audio import render_clip, sample_metadata
      >>> meta = sample_metadata(np.random.default_rng(0))
      >>> audio = render_clip(meta, sample_rate=8000)
      >>> audio.shape == (int(round(meta.duration_s * 8000)),)
      True
    """
    if not isinstance(meta, ClipMetadata):
        raise ValueError(f"meta must be a ClipMetadata, got {type(meta).__name__}")
    check_integer("sample_rate", sample_rate, low=4000)
    rng = np.random.default_rng(meta.seed)
    n = int(round(meta.duration_s * sample_rate))
    beat = 60.0 / meta.tempo_bpm
    beat_samples = int(round(beat * sample_rate))
    harmony = np.zeros(n)
    drums = np.zeros(n)
    scale = _SCALES[meta.mode]
    num_beats = int(np.ceil(meta.duration_s / beat))
    note_len = min(beat_samples, int(1.5 * sample_rate))
    for b in range(num_beats):
        start = int(round(b * beat * sample_rate))
        if start >= n:
            break
        bar, pos = divmod(b, meta.beats_per_bar)
        degree = meta.progression[bar % len(meta.progression)]
        root = meta.tonic + scale[degree]
        triad = [root + (scale[(degree + k) % 7] - scale[degree]) % 12 for k in (0, 2, 4)]
        length = min(note_len, n - start)
        accent = 1.0 if pos == 0 else 0.7
        chord = _tone(_midi_to_hz(36 + root % 12), length, sample_rate, meta.instrument, rng)
        for midi in triad:
            chord += 0.6 * _tone(
                _midi_to_hz(60 + midi % 12), length, sample_rate, meta.instrument, rng
            )
        harmony[start : start + length] += accent * chord
    hit_len = int(0.3 * sample_rate)
    hits = _drum_hits(meta.drums, meta.beats_per_bar)
    for bar_start in range(0, num_beats, meta.beats_per_bar):
        for offset, kind in hits:
            start = int(round((bar_start + offset) * beat * sample_rate))
            if start >= n:
                continue
            length = min(hit_len, n - start)
            drums[start : start + length] += _drum(kind, length, sample_rate, rng)
    mix = harmony / max(np.abs(harmony).max(), 1e-9) + 0.5 * drums / max(np.abs(drums).max(), 1e-9)
    mix = mix / max(np.abs(mix).max(), 1e-9) * 10.0 ** (meta.level_db / 20.0)
    return mix.astype(np.float32)
