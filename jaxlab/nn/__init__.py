"""jaxlab.nn: normalisers (MultiMax, sparsemax, entmax-1.5), attention, transformers and
contrastive losses (SimCLR, SupCon)."""

from jaxlab.nn.attention import (
    MultiHeadAttention,
    attention_weights,
    make_attention_fn,
    normalized_dot_product_attention,
)
from jaxlab.nn.contrastive import simclr_loss, supcon_loss
from jaxlab.nn.layers import NORMALIZERS, MultiMax, multimax_decay_mask, normalize
from jaxlab.nn.multimax import MultiMaxParams, init_multimax_params, multimax, multimax_modulate
from jaxlab.nn.sparse import entmax15, sparsemax
from jaxlab.nn.transformer import TransformerBlock, TransformerLM, ViT

__all__ = [
    "NORMALIZERS",
    "MultiHeadAttention",
    "MultiMax",
    "MultiMaxParams",
    "TransformerBlock",
    "TransformerLM",
    "ViT",
    "attention_weights",
    "entmax15",
    "init_multimax_params",
    "make_attention_fn",
    "multimax",
    "multimax_decay_mask",
    "multimax_modulate",
    "normalize",
    "normalized_dot_product_attention",
    "simclr_loss",
    "sparsemax",
    "supcon_loss",
]
