"""The bad-input table's row type and the values rows of several packages share
(``tests/<package>/test_bad_inputs.py``; the meta-tests are in
``tests/test_bad_inputs.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest

from jaxlab import diffusion

NAN = float("nan")
KEY = jax.random.key(0)


class Case(NamedTuple):
    kernel: str  # "<package>.<name>"
    arg: str  # the argument that carries the bad value
    call: Callable[[], Any]
    expect: str = "raises"  # or "nan"


def case_id(case: Case) -> str:
    return f"{case.kernel}-{case.arg}"


def check(case: Case) -> None:
    """The documented answer: a ``ValueError`` naming ``case.arg``, or NaN in the result."""
    if case.expect == "raises":
        with pytest.raises(ValueError, match=case.arg):
            case.call()
    else:
        assert case.expect == "nan", case.expect
        leaves = jax.tree.leaves(case.call())
        assert leaves and any(np.isnan(np.asarray(leaf, np.float64)).any() for leaf in leaves)


SCHED = diffusion.cosine_beta_schedule(10)
