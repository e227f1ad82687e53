"""Baselines run through the same CI-test callables: causal-learn's PC (stable).

causal-learn calls a ``CIT_Base`` object for p-values; :func:`pc_adjacency` registers an
adapter that forwards each query to any ``ci_test(u, v, cond) -> bool`` (so a
``CountingCITest`` counts PC's queries exactly like CCPG's) and returns 1.0 / 0.0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jaxlab._optional import import_optional


def pc_adjacency(num_vars: int, ci_test: Callable[..., bool], stable: bool = True) -> np.ndarray:
    """Runs causal-learn's PC with ``ci_test``; returns the learned CPDAG as ``[n, n]`` codes.

    Returns ``out`` with ``out[i, j] = 1`` for a directed edge i → j and
    ``out[i, j] = out[j, i] = 1`` for an undirected (or bidirected) edge.
    """
    pc = import_optional("causallearn.search.ConstraintBased.PC", extra="causal").pc
    cit = import_optional("causallearn.utils.cit", extra="causal")

    cit_base: Any = cit.CIT_Base  # a class of a runtime-imported module

    class _Adapter(cit_base):
        def __init__(self, data, test=None, **kwargs):
            super().__init__(data, **kwargs)
            self.method = "jaxlab_callable"
            self.test = test

        def __call__(self, x, y, condition_set=None):
            cond = () if condition_set is None else tuple(int(c) for c in condition_set)
            return 1.0 if self.test(int(x), int(y), cond) else 0.0

    cit.register_ci_test("jaxlab_callable", _Adapter)
    dummy = np.zeros((num_vars + 3, num_vars))
    cg = pc(
        dummy,
        alpha=0.5,
        indep_test="jaxlab_callable",
        stable=stable,
        show_progress=False,
        test=ci_test,
    )
    g = cg.G.graph  # g[j, i] = 1 and g[i, j] = -1: i → j; both -1: i — j
    out = np.zeros((num_vars, num_vars), dtype=np.int8)
    for i in range(num_vars):
        for j in range(num_vars):
            if i != j and g[i, j] != 0 and g[j, i] != 0 and not (g[i, j] == 1 and g[j, i] == -1):
                out[i, j] = 1
    return out
