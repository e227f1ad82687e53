"""Bad input, one row per argument of every public ``jaxlab.explain`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxlab import explain
from tests.bad_inputs import KEY, NAN, Case, case_id, check

IMG = jnp.ones((2, 4, 4, 1))
SAL = jnp.ones((2, 4, 4))
ENC = lambda x: jnp.reshape(x, (x.shape[0], -1))[:, :3]  # noqa: E731  [b, H, W, C] -> [b, 3]
EMB = jnp.eye(2, 3)
MASK = jnp.full((2, 4, 4), 0.5)
STAGES_FN = lambda p, x: (ENC(x), (x, x))  # noqa: E731
NEM_PARAMS = explain.NEMParams(encoder={}, decoder={})

CASES = [
    Case("explain.cosine_distance", "v", lambda: explain.cosine_distance(EMB, jnp.ones((2, 4)))),
    Case(
        "explain.cosine_distance",
        "u",
        lambda: explain.cosine_distance(EMB.at[0, 0].set(NAN), EMB),
        "nan",
    ),
    Case(
        "explain.masked_input", "mask", lambda: explain.masked_input(IMG, jnp.full((2, 4, 4), 2.0))
    ),
    Case("explain.masked_input", "x", lambda: explain.masked_input(jnp.ones((4, 4)), MASK)),
    Case("explain.nem_loss", "mask", lambda: explain.nem_loss(EMB, EMB, jnp.ones((2, 4)))),
    Case("explain.nem_loss", "lambda_f", lambda: explain.nem_loss(EMB, EMB, MASK, lambda_f=-1.0)),
    Case("explain.nem_loss", "emb_masked", lambda: explain.nem_loss(EMB, jnp.ones((2, 4)), MASK)),
    Case(
        "explain.nem_contrastive_loss",
        "form",
        lambda: explain.nem_contrastive_loss(EMB, EMB, EMB, MASK, form="bogus"),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "lambda_c",
        lambda: explain.nem_contrastive_loss(EMB, EMB, EMB, MASK, lambda_c=-1.0),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "emb_complement",
        lambda: explain.nem_contrastive_loss(EMB, EMB, jnp.ones((3, 3)), MASK),
    ),
    Case(
        "explain.smooth_random_masks",
        "p_keep",
        lambda: explain.smooth_random_masks(KEY, 4, 8, 8, p_keep=1.5),
    ),
    Case(
        "explain.smooth_random_masks",
        "num_masks",
        lambda: explain.smooth_random_masks(KEY, 0, 8, 8),
    ),
    Case("explain.smooth_random_masks", "key", lambda: explain.smooth_random_masks(0, 4, 8, 8)),
    Case(
        "explain.smooth_random_masks",
        "cells",
        lambda: explain.smooth_random_masks(KEY, 4, 8, 8, cells=0),
    ),
    Case(
        "explain.relax",
        "chunk_size",
        lambda: explain.relax(ENC, jnp.ones((4, 4, 1)), KEY, num_masks=10, chunk_size=3),
    ),
    Case("explain.relax", "x", lambda: explain.relax(ENC, jnp.ones((4, 4)), KEY, 10, 5)),
    Case("explain.relax", "key", lambda: explain.relax(ENC, jnp.ones((4, 4, 1)), 0, 10, 5)),
    Case(
        "explain.relax",
        "p_keep",
        lambda: explain.relax(ENC, jnp.ones((4, 4, 1)), KEY, 10, 5, p_keep=0.0),
    ),
    Case("explain.gradient_saliency", "x", lambda: explain.gradient_saliency(ENC, jnp.ones(3))),
    Case("explain.gradient_saliency", "encode_fn", lambda: explain.gradient_saliency(None, IMG)),
    Case(
        "explain.pointing_game", "gt_mask", lambda: explain.pointing_game(SAL, jnp.ones((2, 3, 3)))
    ),
    Case(
        "explain.pointing_game",
        "saliency",
        lambda: explain.pointing_game(SAL.at[0, 0, 0].set(NAN), SAL),
        "nan",
    ),
    Case("explain.mass_inside", "gt_mask", lambda: explain.mass_inside(SAL, jnp.ones((2, 3, 3)))),
    Case(
        "explain.mass_inside",
        "saliency",
        lambda: explain.mass_inside(SAL.at[0, 0, 0].set(NAN), SAL),
        "nan",
    ),
    Case(
        "explain.deletion_auc",
        "saliency",
        lambda: explain.deletion_auc(ENC, IMG, jnp.ones((2, 3, 3))),
    ),
    Case(
        "explain.deletion_auc",
        "num_steps",
        lambda: explain.deletion_auc(ENC, IMG, SAL, num_steps=0),
    ),
    Case("explain.insertion_auc", "x", lambda: explain.insertion_auc(ENC, jnp.ones((4, 4)), SAL)),
    Case(
        "explain.insertion_auc",
        "num_steps",
        lambda: explain.insertion_auc(ENC, IMG, SAL, num_steps=0),
    ),
    Case(
        "explain.nem_mask",
        "x",
        lambda: explain.nem_mask(STAGES_FN, explain.MaskDecoder(), NEM_PARAMS, jnp.ones(3)),
    ),
    Case(
        "explain.nem_mask",
        "stages_fn",
        lambda: explain.nem_mask(None, explain.MaskDecoder(), NEM_PARAMS, IMG),
    ),
    Case(
        "explain.nem_objective",
        "lambda_s",
        lambda: explain.nem_objective(
            STAGES_FN, explain.MaskDecoder(), NEM_PARAMS, IMG, lambda_s=-1.0
        ),
    ),
    Case(
        "explain.nem_objective",
        "x",
        lambda: explain.nem_objective(STAGES_FN, explain.MaskDecoder(), NEM_PARAMS, jnp.ones(3)),
    ),
    Case("explain.deletion_auc", "encode_fn", lambda: explain.deletion_auc(None, IMG, SAL)),
    Case("explain.deletion_auc", "x", lambda: explain.deletion_auc(ENC, jnp.ones((4, 4)), SAL)),
    Case("explain.insertion_auc", "encode_fn", lambda: explain.insertion_auc(None, IMG, SAL)),
    Case(
        "explain.insertion_auc",
        "saliency",
        lambda: explain.insertion_auc(ENC, IMG, jnp.ones((2, 3, 3))),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "emb",
        lambda: explain.nem_contrastive_loss(jnp.ones(3), EMB, EMB, MASK),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "emb_masked",
        lambda: explain.nem_contrastive_loss(EMB, jnp.ones((2, 4)), EMB, MASK),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "mask",
        lambda: explain.nem_contrastive_loss(EMB, EMB, EMB, jnp.ones((2, 4))),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "lambda_f",
        lambda: explain.nem_contrastive_loss(EMB, EMB, EMB, MASK, lambda_f=-1.0),
    ),
    Case(
        "explain.nem_contrastive_loss",
        "lambda_s",
        lambda: explain.nem_contrastive_loss(EMB, EMB, EMB, MASK, lambda_s=-1.0),
    ),
    Case("explain.nem_loss", "emb", lambda: explain.nem_loss(jnp.ones(3), EMB, MASK)),
    Case("explain.nem_loss", "lambda_s", lambda: explain.nem_loss(EMB, EMB, MASK, lambda_s=-1.0)),
    Case(
        "explain.nem_objective",
        "stages_fn",
        lambda: explain.nem_objective(None, explain.MaskDecoder(), NEM_PARAMS, IMG),
    ),
    Case(
        "explain.nem_objective",
        "lambda_f",
        lambda: explain.nem_objective(
            STAGES_FN, explain.MaskDecoder(), NEM_PARAMS, IMG, lambda_f=-1.0
        ),
    ),
    Case(
        "explain.relax", "encode_fn", lambda: explain.relax(None, jnp.ones((4, 4, 1)), KEY, 10, 5)
    ),
    Case(
        "explain.relax",
        "num_masks",
        lambda: explain.relax(ENC, jnp.ones((4, 4, 1)), KEY, num_masks=0, chunk_size=5),
    ),
    Case(
        "explain.relax",
        "cells",
        lambda: explain.relax(ENC, jnp.ones((4, 4, 1)), KEY, 10, 5, cells=0),
    ),
    Case(
        "explain.smooth_random_masks", "height", lambda: explain.smooth_random_masks(KEY, 4, 0, 8)
    ),
    Case(
        "explain.smooth_random_masks", "width", lambda: explain.smooth_random_masks(KEY, 4, 8, 2.5)
    ),
    Case(
        "explain.masked_input",
        "baseline",
        lambda: explain.masked_input(IMG, MASK, jnp.ones((3, 3))),
    ),
    Case(
        "explain.deletion_auc",
        "baseline",
        lambda: explain.deletion_auc(ENC, IMG, SAL, baseline=jnp.ones(5)),
    ),
    Case(
        "explain.insertion_auc",
        "baseline",
        lambda: explain.insertion_auc(ENC, IMG, SAL, baseline=jnp.ones(5)),
    ),
    Case("explain.nem_mask", "decoder", lambda: explain.nem_mask(STAGES_FN, None, NEM_PARAMS, IMG)),
    Case(
        "explain.nem_mask",
        "params",
        lambda: explain.nem_mask(STAGES_FN, explain.MaskDecoder(), {}, IMG),
    ),
    Case(
        "explain.nem_objective",
        "decoder",
        lambda: explain.nem_objective(STAGES_FN, None, NEM_PARAMS, IMG),
    ),
    Case(
        "explain.nem_objective",
        "params",
        lambda: explain.nem_objective(STAGES_FN, explain.MaskDecoder(), None, IMG),
    ),
    Case(
        "explain.nem_objective",
        "baseline",
        lambda: explain.nem_objective(
            STAGES_FN, explain.MaskDecoder(), NEM_PARAMS, IMG, baseline=jnp.ones(7)
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
