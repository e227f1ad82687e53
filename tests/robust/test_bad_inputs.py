"""Bad input, one row per argument of every public ``jaxlab.robust`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxlab import robust
from tests.bad_inputs import KEY, NAN, Case, case_id, check

W4 = jnp.arange(8.0).reshape(4, 2)
W4_NAN = W4.at[1:3].set(NAN)

CASES = [
    Case("robust.mean", "x", lambda: robust.mean(jnp.ones(()))),
    Case("robust.mean", "x", lambda: robust.mean(W4.at[0, 0].set(NAN)), "nan"),
    Case("robust.coordinate_median", "x", lambda: robust.coordinate_median(W4_NAN), "nan"),
    Case("robust.coordinate_median", "x", lambda: robust.coordinate_median(jnp.zeros((0, 2)))),
    Case("robust.trimmed_mean", "num_byzantine", lambda: robust.trimmed_mean(W4, 2)),
    Case("robust.trimmed_mean", "x", lambda: robust.trimmed_mean(W4_NAN, 1), "nan"),
    Case(
        "robust.geometric_median", "smoothing", lambda: robust.geometric_median(W4, smoothing=0.0)
    ),
    Case("robust.geometric_median", "num_iters", lambda: robust.geometric_median(W4, num_iters=0)),
    Case(
        "robust.geometric_median",
        "x",
        lambda: robust.geometric_median(jnp.full((3, 2), NAN)),
        "nan",
    ),
    Case("robust.krum", "num_byzantine", lambda: robust.krum(W4, -1)),
    Case("robust.krum", "x", lambda: robust.krum({"a": W4, "b": jnp.ones((3, 1))}, 1)),
    Case("robust.multi_krum", "num_selected", lambda: robust.multi_krum(W4, 1, num_selected=9)),
    Case("robust.multi_krum", "num_byzantine", lambda: robust.multi_krum(W4, 1.5)),
    Case("robust.centered_clipping", "radius", lambda: robust.centered_clipping(W4, radius=-1.0)),
    Case(
        "robust.centered_clipping",
        "center",
        lambda: robust.centered_clipping(W4, center=jnp.ones(3)),
    ),
    Case(
        "robust.centered_clipping", "num_iters", lambda: robust.centered_clipping(W4, num_iters=0)
    ),
    Case("robust.nnm", "num_byzantine", lambda: robust.nnm(W4, 2, robust.mean)),
    Case("robust.nnm", "base", lambda: robust.nnm(W4, 1, None)),
    Case("robust.ctma", "num_byzantine", lambda: robust.ctma(W4, 5, robust.mean)),
    Case("robust.ctma", "base", lambda: robust.ctma(W4, 1, "mean")),
    Case("robust.bucketing", "bucket_size", lambda: robust.bucketing(W4, 0, robust.mean, KEY)),
    Case("robust.bucketing", "key", lambda: robust.bucketing(W4, 2, robust.mean, 0)),
    Case("robust.bucketing", "base", lambda: robust.bucketing(W4, 2, None, KEY)),
    Case("robust.bucketing", "x", lambda: robust.bucketing(jnp.zeros((0, 2)), 1, robust.mean, KEY)),
    Case("robust.centered_clipping", "x", lambda: robust.centered_clipping({})),
    Case("robust.ctma", "x", lambda: robust.ctma(jnp.ones(()), 0, robust.mean)),
    Case("robust.multi_krum", "x", lambda: robust.multi_krum({}, 0)),
    Case(
        "robust.nnm", "x", lambda: robust.nnm([jnp.ones((3, 1)), jnp.ones((2, 1))], 0, robust.mean)
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
