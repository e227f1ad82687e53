"""jaxlab.nn: normalisers (MultiMax, sparsemax, entmax-1.5), attention and transformers."""

from jaxlab.nn.attention import (
    MultiHeadAttention,
    attention_weights,
    make_attention_fn,
    normalized_dot_product_attention,
)
from jaxlab.nn.layers import NORMALIZERS, MultiMax, multimax_decay_mask, normalize
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
    "TransformerBlock",
    "TransformerLM",
    "ViT",
    "answer_loss",
    "attention_weights",
    "entmax15",
    "generate",
    "init_multimax_params",
    "make_attention_fn",
    "multimax",
    "multimax_decay_mask",
    "multimax_modulate",
    "normalize",
    "normalized_dot_product_attention",
    "sparsemax",
    "splice_audio",
]
