"""jaxlab.align: preference-alignment kernels (DPO) and the one-token model of its dynamics."""

from jaxlab.align.dpo import (
    PreferenceBatch,
    dpo_loss,
    dpo_reward_margins,
    one_token_logps,
    preference_accuracy,
    sample_behaviour_preferences,
    unembedding_dpo_loss,
    unembedding_sft_loss,
)

__all__ = [
    "PreferenceBatch",
    "dpo_loss",
    "dpo_reward_margins",
    "one_token_logps",
    "preference_accuracy",
    "sample_behaviour_preferences",
    "unembedding_dpo_loss",
    "unembedding_sft_loss",
]
