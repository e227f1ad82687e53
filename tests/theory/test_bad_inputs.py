"""Bad input, one row per argument of every public ``jaxlab.theory`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxlab import theory
from tests.bad_inputs import KEY, NAN, Case, case_id, check

ICLP = theory.init_icl_params(KEY, 4, 2)
PAT_POS, PAT_IRR = theory.make_icl_patterns(KEY, 4, 2, 2)
DEMOS = jnp.ones((3, 4))
QUERY = jnp.ones(4)

CASES = [
    Case("theory.init_icl_params", "num_neurons", lambda: theory.init_icl_params(KEY, 4, 3)),
    Case("theory.init_icl_params", "dim", lambda: theory.init_icl_params(KEY, 0, 2)),
    Case(
        "theory.init_icl_params",
        "init_scale",
        lambda: theory.init_icl_params(KEY, 4, 2, init_scale=-1.0),
    ),
    Case("theory.init_icl_params", "key", lambda: theory.init_icl_params(0, 4, 2)),
    Case(
        "theory.make_icl_patterns", "num_relevant", lambda: theory.make_icl_patterns(KEY, 4, 0, 1)
    ),
    Case("theory.make_icl_patterns", "dim", lambda: theory.make_icl_patterns(KEY, 2, 2, 2)),
    Case("theory.make_icl_patterns", "key", lambda: theory.make_icl_patterns(1, 4, 2, 2)),
    Case(
        "theory.sample_icl_prompt",
        "alpha",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 1.5, 4),
    ),
    Case(
        "theory.sample_icl_prompt",
        "length",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 0),
    ),
    Case(
        "theory.sample_icl_prompt",
        "kappa",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 4, kappa=-0.5),
    ),
    Case(
        "theory.sample_icl_prompt",
        "noise",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 4, noise=-1.0),
    ),
    Case(
        "theory.sample_icl_prompt",
        "negative",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], PAT_POS[0][:2], PAT_IRR, 0.5, 4),
    ),
    Case(
        "theory.icl_attention", "demos", lambda: theory.icl_attention(ICLP, jnp.ones((3, 5)), QUERY)
    ),
    Case("theory.icl_forward", "query", lambda: theory.icl_forward(ICLP, DEMOS, jnp.ones(5))),
    Case(
        "theory.icl_forward",
        "demos",
        lambda: theory.icl_forward(ICLP, DEMOS.at[0, 0].set(NAN), QUERY),
        "nan",
    ),
    Case(
        "theory.icl_hinge_loss",
        "label",
        lambda: theory.icl_hinge_loss(ICLP, DEMOS, QUERY, jnp.ones(2)),
    ),
    Case("theory.weighted_vote", "query", lambda: theory.weighted_vote(DEMOS, jnp.ones(5))),
    Case("theory.magnitude_prune", "rate", lambda: theory.magnitude_prune(ICLP, 1.5)),
    Case("theory.magnitude_prune", "order", lambda: theory.magnitude_prune(ICLP, 0.5, "bogus")),
    Case(
        "theory.magnitude_prune",
        "key",
        lambda: theory.magnitude_prune(ICLP, 0.5, "random", key=None),
    ),
    Case("theory.icl_attention", "query", lambda: theory.icl_attention(ICLP, DEMOS, jnp.ones(5))),
    Case(
        "theory.icl_hinge_loss",
        "demos",
        lambda: theory.icl_hinge_loss(ICLP, jnp.ones((3, 5)), QUERY, 1.0),
    ),
    Case(
        "theory.icl_hinge_loss",
        "query",
        lambda: theory.icl_hinge_loss(ICLP, DEMOS, jnp.ones(5), 1.0),
    ),
    Case(
        "theory.init_icl_params",
        "attention_dim",
        lambda: theory.init_icl_params(KEY, 4, 2, attention_dim=0),
    ),
    Case(
        "theory.init_icl_params",
        "value_dim",
        lambda: theory.init_icl_params(KEY, 4, 2, value_dim=-1),
    ),
    Case(
        "theory.make_icl_patterns", "num_irrelevant", lambda: theory.make_icl_patterns(KEY, 4, 2, 0)
    ),
    Case(
        "theory.sample_icl_prompt",
        "key",
        lambda: theory.sample_icl_prompt(0, PAT_POS[0], -PAT_POS[0], PAT_IRR, 0.5, 4),
    ),
    Case(
        "theory.sample_icl_prompt",
        "positive",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS, -PAT_POS[0], PAT_IRR, 0.5, 4),
    ),
    Case(
        "theory.sample_icl_prompt",
        "irrelevant",
        lambda: theory.sample_icl_prompt(KEY, PAT_POS[0], -PAT_POS[0], PAT_IRR[0], 0.5, 4),
    ),
    Case("theory.weighted_vote", "demos", lambda: theory.weighted_vote(jnp.ones(4), QUERY)),
    Case("theory.icl_attention", "params", lambda: theory.icl_attention(None, DEMOS, QUERY)),
    Case("theory.icl_forward", "params", lambda: theory.icl_forward((1, 2), DEMOS, QUERY)),
    Case("theory.icl_hinge_loss", "params", lambda: theory.icl_hinge_loss(None, DEMOS, QUERY, 1.0)),
    Case("theory.magnitude_prune", "params", lambda: theory.magnitude_prune(None, 0.5)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
