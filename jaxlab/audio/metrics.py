"""MIR metrics for LLark's zero-shot understanding tasks, and parsers for generated answers.

``tempo_accuracy`` gives Acc1 / Acc2 (GiantSteps-Tempo convention: within 4 %, and also
accepting the metrical errors ×2, ×½, ×3, ×⅓) with ``mir_eval.tempo``'s hit rule
``|est − ref| ≤ tol·ref``. ``key_weighted_score`` is the MIREX weighted key score as
``mir_eval.key.weighted_score`` (exact 1, fifth above 0.5, relative 0.3, parallel 0.2),
vectorised in JAX over integer-coded keys. Answers that do not parse score 0, never raise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_range

# mir_eval's spellings of the twelve pitch classes (sharps and flats), lower case.
_TONICS = {
    "c": 0,
    "c#": 1,
    "db": 1,
    "d": 2,
    "d#": 3,
    "eb": 3,
    "e": 4,
    "f": 5,
    "f#": 6,
    "gb": 6,
    "g": 7,
    "g#": 8,
    "ab": 8,
    "a": 9,
    "a#": 10,
    "bb": 10,
    "b": 11,
}
_MODES = {"major": 0, "minor": 1, "other": 2}
TEMPO_FACTORS = (1.0, 2.0, 0.5, 3.0, 1.0 / 3.0)


def tempo_accuracy(
    reference_bpm: ArrayLike, estimated_bpm: ArrayLike, tolerance: float = 0.04
) -> tuple[jax.Array, jax.Array]:
    """Tempo Acc1 and Acc2 per clip.

    Acc1 = [|e − r| ≤ tol·r]; Acc2 = max over f ∈ {1, 2, ½, 3, ⅓} of [|e − f·r| ≤ tol·f·r].
    A non-finite estimate (an unparsed answer) is a miss.

    Args:
      reference_bpm: ``[n]`` positive reference tempi.
      estimated_bpm: ``[n]`` estimates (NaN allowed: counted wrong).
      tolerance: relative tolerance (0.04 as in GiantSteps-Tempo evaluations).

    Returns:
      ``(acc1, acc2)``, float arrays ``[n]`` of 0/1.

    Example:
      >>> from jaxlab.audio import tempo_accuracy
      >>> acc1, acc2 = tempo_accuracy(jnp.array([100.0, 100.0]), jnp.array([103.0, 201.0]))
      >>> acc1.tolist(), acc2.tolist()
      ([1.0, 0.0], [1.0, 1.0])

    References:
      Gouyon et al., An experimental comparison of audio tempo induction algorithms, 2006;
      Raffel et al., mir_eval, ISMIR 2014.
    """
    ref = jnp.asarray(reference_bpm, jnp.float32)
    est = jnp.asarray(estimated_bpm, jnp.float32)
    if ref.shape != est.shape or ref.ndim != 1:
        raise ValueError(f"reference_bpm {ref.shape} and estimated_bpm {est.shape} must be [n]")
    check_range("tolerance", tolerance, 0.0, 1.0)  # unchecked when traced
    if not isinstance(ref, jax.core.Tracer) and bool(jnp.any(~(ref > 0))):
        raise ValueError("reference_bpm must be positive and finite")
    factors = jnp.asarray(TEMPO_FACTORS, jnp.float32)[:, None]
    scaled = factors * ref[None, :]
    hits = jnp.abs(est[None, :] - scaled) <= tolerance * scaled  # NaN compares False
    return hits[0].astype(jnp.float32), hits.any(axis=0).astype(jnp.float32)


def encode_key(name: str | None, strict: bool = True) -> tuple[int, int]:
    """``"F# minor"`` → ``(tonic, mode)`` = ``(6, 1)``; ``"X"`` → ``(-1, -1)``.

    Args:
      name: a key in ``mir_eval`` format (tonic with sharps or flats, then ``major``,
        ``minor`` or ``other``), or ``"X"`` (uncategorised).
      strict: raise on an unknown name; otherwise return ``(-2, -2)`` (scores 0).

    Raises:
      ValueError: an unknown key name when ``strict``.
    """
    if not isinstance(strict, bool):
        raise ValueError(f"strict must be a bool, got {strict!r}")
    if isinstance(name, str):
        parts = name.strip().lower().split()
        if parts == ["x"]:
            return -1, -1
        if len(parts) == 2 and parts[0] in _TONICS and parts[1] in _MODES:
            return _TONICS[parts[0]], _MODES[parts[1]]
    if strict:
        raise ValueError(f"unknown key name {name!r}; expected e.g. 'C# major', 'Eb minor' or 'X'")
    return -2, -2


def weighted_key_score_codes(
    reference_tonic: ArrayLike,
    reference_mode: ArrayLike,
    estimated_tonic: ArrayLike,
    estimated_mode: ArrayLike,
) -> jax.Array:
    """MIREX weighted key score on integer-coded keys (``encode_key``), elementwise.

    1 if equal; 0.5 if same mode and the estimate is a fifth above ((e − r) mod 12 = 7);
    0.3 if relative (major→minor 9 semitones up, minor→major 3 up); 0.2 if parallel (same
    tonic, other mode); else 0. Uncategorised (−1) matches only itself; invalid (−2) scores 0.

    Args:
      reference_tonic, reference_mode, estimated_tonic, estimated_mode: int ``[n]``.

    Returns:
      float ``[n]``.
    """
    names = ("reference_tonic", "reference_mode", "estimated_tonic", "estimated_mode")
    arrays = [
        jnp.asarray(a) for a in (reference_tonic, reference_mode, estimated_tonic, estimated_mode)
    ]
    for name, a in zip(names, arrays, strict=True):
        if not jnp.issubdtype(a.dtype, jnp.integer):  # never truncate a float code
            raise ValueError(f"{name} must be integer key codes (encode_key), got {a.dtype}")
        if a.shape != arrays[0].shape:
            raise ValueError(
                f"{name} must have reference_tonic's shape {arrays[0].shape}, got {a.shape}"
            )
    rt, rm, et, em = (a.astype(jnp.int32) for a in arrays)
    valid = (rt >= -1) & (et >= -1)
    exact = (rt == et) & (rm == em) & valid
    tonal = (rt >= 0) & (et >= 0)
    interval = jnp.mod(et - rt, 12)
    fifth = tonal & (rm == em) & (interval == 7)
    relative = tonal & (rm != em) & (((rm == 0) & (interval == 9)) | ((rm == 1) & (interval == 3)))
    parallel = tonal & (rm != em) & (interval == 0)
    weights = [jnp.full(rt.shape, w, jnp.float32) for w in (1.0, 0.5, 0.3, 0.2)]
    return jnp.select([exact, fifth, relative, parallel], weights, jnp.zeros(rt.shape, jnp.float32))


def key_weighted_score(reference: Sequence[str], estimate: Sequence[str | None]) -> jax.Array:
    """The MIREX weighted key score of each estimate (``mir_eval.key.weighted_score``).

    Exact 1, perfect fifth above 0.5, relative major/minor 0.3, parallel major/minor 0.2,
    other 0 (mir_eval's table). Estimates that are ``None`` or not a key name (unparsed
    answers) score 0.

    Args:
      reference: ``n`` key names in mir_eval format (``"C major"``, ``"F# minor"``, ``"X"``).
      estimate: ``n`` key names, ``None`` allowed.

    Returns:
      float ``[n]``.

    Raises:
      ValueError: an unknown reference key name, or lengths that differ.

    Example:
      >>> from jaxlab.audio import key_weighted_score
      >>> key_weighted_score(["C major"] * 5, ["C major", "G major", "A minor", "C minor", None])
      Array([1. , 0.5, 0.3, 0.2, 0. ], dtype=float32)

    References:
      MIREX Audio Key Detection; Raffel et al., mir_eval, ISMIR 2014.
    """
    if isinstance(reference, str) or isinstance(estimate, str):
        raise ValueError("reference and estimate must be sequences of key names, not strings")
    if len(reference) != len(estimate):
        raise ValueError(f"reference has {len(reference)} keys, estimate {len(estimate)}")
    ref = np.array([encode_key(k) for k in reference], np.int32).reshape(-1, 2)
    est = np.array([encode_key(k, strict=False) for k in estimate], np.int32).reshape(-1, 2)
    return weighted_key_score_codes(ref[:, 0], ref[:, 1], est[:, 0], est[:, 1])


_KEY_PATTERN = re.compile(
    r"\b([A-Ga-g])\s*(#|♯|b|♭|sharp|flat)?\s*[- ]?\s*(major|minor)\b", re.IGNORECASE
)
_TEMPO_PATTERN = re.compile(r"(\d+(?:\.\d+)?)\s*(?:bpm|beats)", re.IGNORECASE)


def _check_text(text: str | None) -> None:
    if text is not None and not isinstance(text, str):
        raise ValueError(
            f"text must be a string (a model's answer) or None, got {type(text).__name__}"
        )


def parse_key(text: str) -> str | None:
    """The first key named in ``text`` in mir_eval format, or ``None``.

    Accepts ``"C# minor"``, ``"C♯ minor"``, ``"c sharp minor"``, ``"Bb major"``.

    Example:
      >>> from jaxlab.audio import parse_key
      >>> parse_key("It sounds like it is in c sharp minor."), parse_key("no idea")
      ('C# minor', None)
    """
    _check_text(text)
    match = _KEY_PATTERN.search(text or "")
    if match is None:
        return None
    letter, accidental, mode = match.groups()
    accidental = (accidental or "").lower()
    suffix = (
        "#"
        if accidental in ("#", "♯", "sharp")
        else "b"
        if accidental in ("b", "♭", "flat")
        else ""
    )
    return f"{letter.upper()}{suffix} {mode.lower()}"


def parse_tempo(text: str) -> float:
    """The first ``<number> BPM`` (or ``<number> beats``) in ``text``; NaN when there is none.

    Example:
      >>> from jaxlab.audio import parse_tempo
      >>> parse_tempo("a relaxed groove at about 96 BPM")
      96.0
    """
    _check_text(text)
    match = _TEMPO_PATTERN.search(text or "")
    return float(match.group(1)) if match else float("nan")
