"""jaxlab.audio: labelled music rendering, frozen audio features and MIR metrics (LLark)."""

from jaxlab.audio.features import (
    FeatureConfig,
    audio_features,
    num_frames,
    pool_frames,
    power_spectrogram,
    short_time_features,
)
from jaxlab.audio.instructions import (
    FAMILIES,
    QUESTIONS,
    Instruction,
    WordTokenizer,
    encode_example,
    make_instructions,
)
from jaxlab.audio.metrics import (
    encode_key,
    key_weighted_score,
    parse_key,
    parse_tempo,
    tempo_accuracy,
    weighted_key_score_codes,
)
from jaxlab.audio.render import (
    DRUM_PATTERNS,
    INSTRUMENTS,
    KEYS,
    MODES,
    PITCH_CLASSES,
    ClipMetadata,
    render_clip,
    sample_metadata,
)

__all__ = [
    "DRUM_PATTERNS",
    "FAMILIES",
    "INSTRUMENTS",
    "KEYS",
    "MODES",
    "PITCH_CLASSES",
    "QUESTIONS",
    "ClipMetadata",
    "FeatureConfig",
    "Instruction",
    "WordTokenizer",
    "audio_features",
    "encode_example",
    "encode_key",
    "key_weighted_score",
    "make_instructions",
    "num_frames",
    "parse_key",
    "parse_tempo",
    "pool_frames",
    "power_spectrogram",
    "render_clip",
    "sample_metadata",
    "short_time_features",
    "tempo_accuracy",
    "weighted_key_score_codes",
]
