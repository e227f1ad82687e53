"""jaxlab.nn: normalisers (MultiMax, sparsemax, entmax-1.5, NormSoftmax), attention, models
and contrastive losses (SimCLR, SupCon)."""

from jaxlab.nn.attention import (
    MultiHeadAttention,
    attention_weights,
    make_attention_fn,
    normalized_dot_product_attention,
)
from jaxlab.nn.contrastive import simclr_loss, supcon_loss
from jaxlab.nn.eureka import heat_treatment_schedule, norm_softmax
from jaxlab.nn.layers import (
    NORMALIZERS,
    MultiMax,
    Normalizer,
    multimax_decay_mask,
    normalize,
    resolve_normalizer,
)
from jaxlab.nn.multimax import MultiMaxParams, init_multimax_params, multimax, multimax_modulate
from jaxlab.nn.multimodal import AudioLM, answer_loss, generate, splice_audio
from jaxlab.nn.sparse import entmax15, sparsemax
from jaxlab.nn.transformer import TransformerBlock, TransformerLM, ViT

__all__ = [
    "NORMALIZERS",
    "AudioLM",
    "MultiHeadAttention",
    "MultiMax",
    "MultiMaxParams",
    "Normalizer",
    "TransformerBlock",
    "TransformerLM",
    "ViT",
    "answer_loss",
    "attention_weights",
    "entmax15",
    "heat_treatment_schedule",
    "generate",
    "init_multimax_params",
    "make_attention_fn",
    "multimax",
    "multimax_decay_mask",
    "multimax_modulate",
    "norm_softmax",
    "normalize",
    "normalized_dot_product_attention",
    "resolve_normalizer",
    "simclr_loss",
    "sparsemax",
    "supcon_loss",
    "splice_audio",
]
