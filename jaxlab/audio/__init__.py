"""jaxlab.audio: labelled music rendering, frozen audio features and MIR metrics (LLark)."""

from jaxlab.audio.features import (
    FeatureConfig,
    audio_features,
    num_frames,
    pool_frames,
    power_spectrogram,
    short_time_features,
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
    "INSTRUMENTS",
    "KEYS",
    "MODES",
    "PITCH_CLASSES",
    "ClipMetadata",
    "FeatureConfig",
    "audio_features",
    "encode_key",
    "key_weighted_score",
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
