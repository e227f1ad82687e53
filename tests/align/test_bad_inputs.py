"""Bad input, one row per argument of every public ``jaxlab.align`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxlab import align
from tests.bad_inputs import KEY, NAN, Case, case_id, check

LP = jnp.array([-1.0, -2.0])

CASES = [
    Case(
        "align.dpo_loss",
        "policy_chosen_logps",
        lambda: align.dpo_loss(jnp.zeros(0), jnp.zeros(0), jnp.zeros(0), jnp.zeros(0), 0.1),
    ),
    Case("align.dpo_loss", "beta", lambda: align.dpo_loss(LP, LP, LP, LP, 0.0)),
    Case("align.dpo_loss", "ref_rejected_logps", lambda: align.dpo_loss(LP, LP, LP, LP[:1], 0.1)),
    Case("align.dpo_loss", "reduction", lambda: align.dpo_loss(LP, LP, LP, LP, 0.1, "sum")),
    Case(
        "align.dpo_loss",
        "policy_rejected_logps",
        lambda: align.dpo_loss(LP, LP.at[0].set(NAN), LP, LP, 0.1),
        "nan",
    ),
    Case(
        "align.dpo_reward_margins",
        "beta",
        lambda: align.dpo_reward_margins(LP, LP, LP, LP, jnp.ones(2)),
    ),
    Case(
        "align.dpo_reward_margins",
        "ref_chosen_logps",
        lambda: align.dpo_reward_margins(LP, LP, LP[:1], LP, 0.1),
    ),
    Case("align.preference_accuracy", "margins", lambda: align.preference_accuracy(jnp.zeros(0))),
    Case(
        "align.preference_accuracy",
        "margins",
        lambda: align.preference_accuracy(jnp.array([NAN, 1.0])),
        "nan",
    ),
    Case(
        "align.preference_accuracy",
        "reduction",
        lambda: align.preference_accuracy(LP, reduction="max"),
    ),
    Case(
        "align.one_token_logps",
        "tokens",
        lambda: align.one_token_logps(jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([5])),
    ),
    Case(
        "align.one_token_logps",
        "embeddings",
        lambda: align.one_token_logps(jnp.zeros((2, 3)), jnp.ones((1, 4)), jnp.array([0])),
    ),
    Case(
        "align.one_token_logps",
        "w",
        lambda: align.one_token_logps(jnp.zeros(3), jnp.ones((1, 3)), jnp.array([0])),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "w_ref",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((3, 3)),
            jnp.ones((1, 3)),
            jnp.array([0]),
            jnp.array([1]),
            0.1,
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "rejected",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((2, 3)),
            jnp.ones((1, 3)),
            jnp.array([0]),
            jnp.array([2]),
            0.1,
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "beta",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((2, 3)),
            jnp.ones((1, 3)),
            jnp.array([0]),
            jnp.array([1]),
            -0.1,
        ),
    ),
    Case(
        "align.unembedding_sft_loss",
        "chosen",
        lambda: align.unembedding_sft_loss(jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([0.0])),
    ),
    Case(
        "align.unembedding_sft_loss",
        "embeddings",
        lambda: align.unembedding_sft_loss(jnp.zeros((2, 3)), jnp.ones((0, 3)), jnp.zeros(0, int)),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "noise_scale",
        lambda: align.sample_behaviour_preferences(
            KEY, 4, jnp.eye(2, 4), jnp.ones(2), jnp.zeros(4), jnp.ones(2), -1.0
        ),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "weights",
        lambda: align.sample_behaviour_preferences(
            KEY, 4, jnp.eye(2, 4), jnp.ones(2), jnp.zeros(4), -jnp.ones(2), 0.1
        ),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "num",
        lambda: align.sample_behaviour_preferences(
            KEY, 0, jnp.eye(2, 4), jnp.ones(2), jnp.zeros(4), jnp.ones(2), 0.1
        ),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "key",
        lambda: align.sample_behaviour_preferences(
            0, 4, jnp.eye(2, 4), jnp.ones(2), jnp.zeros(4), jnp.ones(2), 0.1
        ),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "offset",
        lambda: align.sample_behaviour_preferences(
            KEY, 4, jnp.eye(2, 4), jnp.ones(2), jnp.zeros(3), jnp.ones(2), 0.1
        ),
    ),
    Case("align.dpo_loss", "ref_chosen_logps", lambda: align.dpo_loss(LP, LP, LP[:1], LP, 0.1)),
    Case(
        "align.dpo_reward_margins",
        "policy_chosen_logps",
        lambda: align.dpo_reward_margins(LP[:1], LP, LP, LP, 0.1),
    ),
    Case(
        "align.dpo_reward_margins",
        "policy_rejected_logps",
        lambda: align.dpo_reward_margins(LP, LP.astype(jnp.complex64), LP, LP, 0.1),
    ),
    Case(
        "align.dpo_reward_margins",
        "ref_rejected_logps",
        lambda: align.dpo_reward_margins(LP, LP, LP, LP[:1], 0.1),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "directions",
        lambda: align.sample_behaviour_preferences(
            KEY, 4, jnp.ones(4), jnp.ones(2), jnp.zeros(4), jnp.ones(2), 0.1
        ),
    ),
    Case(
        "align.sample_behaviour_preferences",
        "deltas",
        lambda: align.sample_behaviour_preferences(
            KEY, 4, jnp.eye(2, 4), jnp.ones(3), jnp.zeros(4), jnp.ones(2), 0.1
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "w",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros(3), jnp.zeros(3), jnp.ones((1, 3)), jnp.array([0]), jnp.array([1]), 0.1
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "embeddings",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((2, 3)),
            jnp.ones((1, 4)),
            jnp.array([0]),
            jnp.array([1]),
            0.1,
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "chosen",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((2, 3)),
            jnp.ones((1, 3)),
            jnp.array([-1]),
            jnp.array([1]),
            0.1,
        ),
    ),
    Case(
        "align.unembedding_dpo_loss",
        "reduction",
        lambda: align.unembedding_dpo_loss(
            jnp.zeros((2, 3)),
            jnp.zeros((2, 3)),
            jnp.ones((1, 3)),
            jnp.array([0]),
            jnp.array([1]),
            0.1,
            "sum",
        ),
    ),
    Case(
        "align.unembedding_sft_loss",
        "w",
        lambda: align.unembedding_sft_loss(jnp.zeros(3), jnp.ones((1, 3)), jnp.array([0])),
    ),
    Case(
        "align.unembedding_sft_loss",
        "reduction",
        lambda: align.unembedding_sft_loss(
            jnp.zeros((2, 3)), jnp.ones((1, 3)), jnp.array([0]), "sum"
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
