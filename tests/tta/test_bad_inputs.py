"""Bad input, one row per argument of every public ``jaxlab.tta`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxlab import tta
from tests.bad_inputs import NAN, Case, case_id, check

SRC = {"w": jnp.ones(3)}
TTA_STATE = tta.slwi_init(SRC)

CASES = [
    Case("tta.slwi_update", "zeta", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, zeta=-1.0)),
    Case("tta.slwi_update", "warmup", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, warmup=-1)),
    Case(
        "tta.slwi_update",
        "zeta",  # traced: cannot raise, so the answer is NaN
        lambda: jax.jit(lambda z: tta.slwi_update(TTA_STATE, SRC, SRC, zeta=z)[0])(-1.0),
        "nan",
    ),
    Case(
        "tta.slwi_update",
        "warmup",
        lambda: jax.jit(lambda w: tta.slwi_update(TTA_STATE, SRC, SRC, warmup=w)[0])(-1),
        "nan",
    ),
    Case("tta.slwi_update", "a", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, a=1.5)),
    Case("tta.slwi_update", "q", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, q=0.0)),
    Case("tta.slwi_update", "b", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, b=-0.1)),
    Case("tta.slwi_update", "alpha", lambda: tta.slwi_update(TTA_STATE, SRC, SRC, alpha=1.0)),
    Case("tta.slwi_update", "observed", lambda: tta.slwi_update(TTA_STATE, {"v": 1.0}, SRC)),
    Case("tta.slwi_update", "update", lambda: tta.slwi_update(TTA_STATE, SRC, [1.0])),
    Case(
        "tta.slwi_update",
        "observed",
        lambda: tta.slwi_update(TTA_STATE, {"w": jnp.full(3, NAN)}, SRC),
        "nan",
    ),
    Case("tta.slwi_init", "init_var", lambda: tta.slwi_init(SRC, init_var=0.0)),
    Case("tta.slwi_init", "source", lambda: tta.slwi_init({})),
    Case("tta.mean_reversion", "a", lambda: tta.mean_reversion(SRC, SRC, 2.0)),
    Case("tta.mean_reversion", "source", lambda: tta.mean_reversion(SRC, [1.0], 0.5)),
    Case("tta.entropy_loss", "logits", lambda: tta.entropy_loss(jnp.ones(3))),
    Case("tta.entropy_loss", "logits", lambda: tta.entropy_loss(jnp.array([[NAN, 1.0]])), "nan"),
    Case("tta.tent", "optimizer", lambda: tta.tent("sgd", SRC)),
    Case(
        "tta.tent_step",
        "apply_fn",
        lambda: tta.tent_step(
            SRC, (), jnp.ones((2, 3)), None, tta.tent(__import__("optax").sgd(0.1), {"w": True})
        ),
    ),
    Case(
        "tta.tent_step",
        "optimizer",
        lambda: tta.tent_step(SRC, (), jnp.ones((2, 3)), lambda p, x: x, None),
    ),
    Case("tta.mean_reversion", "params", lambda: tta.mean_reversion([1.0], SRC, 0.5)),
    Case("tta.slwi_update", "state", lambda: tta.slwi_update(SRC, SRC, SRC)),
    Case(
        "tta.tent_step",
        "batch",
        lambda: tta.tent_step(
            SRC,
            (),
            jnp.ones(()),
            lambda p, x: x,
            tta.tent(__import__("optax").sgd(0.1), {"w": True}),
        ),
    ),
    Case("tta.mean_reversion", "mask", lambda: tta.mean_reversion(SRC, SRC, 0.5, mask=[True])),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
