"""CKA, the affine-coupling proxy, the loss barrier and weight matching."""

import functools
import itertools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.ood import affine_coupling_r2, linear_cka, loss_barrier, weight_match_mlp
from tests.precision import assert_takes_precision


def _np_cka(x, y):
    x, y = x - x.mean(0), y - y.mean(0)
    return np.linalg.norm(y.T @ x) ** 2 / (np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y))


def test_linear_cka_matches_numpy_and_invariances():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 5)), rng.normal(size=(60, 7))
    # Compared at float32 precision: a GPU's default TF32 moves the CKA by ~1e-3.
    cka = lambda a, b: linear_cka(a, b, precision="highest")  # noqa: E731
    np.testing.assert_allclose(cka(x, y), _np_cka(x, y), rtol=1e-5)
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    np.testing.assert_allclose(cka(x, 2.0 * x @ q + 3.0), 1.0, rtol=1e-5)


def test_cka_multiplies_at_the_precision_it_is_given():
    assert_takes_precision(linear_cka, jnp.ones((6, 3)), jnp.ones((6, 2)), count=3)


def test_affine_coupling_proxy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 6))
    a = rng.normal(size=(6, 6))
    assert float(affine_coupling_r2(x, x @ a + 1.0)) > 0.999
    assert float(affine_coupling_r2(x, rng.normal(size=(200, 6)))) < 0.1
    # Nonlinear (ReLU) coupling explains less than affine coupling.
    assert float(affine_coupling_r2(x, np.maximum(x @ a, 0))) < 0.95


def test_loss_barrier_closed_form():
    # L(w) = (w² − 1)²: minima at ±1, L(0) = 1 in the middle of the line.
    res = loss_barrier(
        lambda p: (p["w"] ** 2 - 1) ** 2,
        {"w": jnp.array(-1.0)},
        {"w": jnp.array(1.0)},
        num_points=11,
    )
    np.testing.assert_allclose(res.barrier, 1.0, rtol=1e-6)
    ts = np.linspace(0, 1, 11)
    np.testing.assert_allclose(res.losses, ((2 * ts - 1) ** 2 - 1) ** 2, atol=1e-6)
    # A convex loss has no barrier.
    flat = loss_barrier(lambda p: jnp.sum(p[0] ** 2), [jnp.ones(3)], [-jnp.ones(3)])
    assert float(flat.barrier) <= 1e-6


def test_loss_barrier_bad_inputs():
    with pytest.raises(ValueError, match="structure"):
        loss_barrier(lambda p: 0.0, {"a": 1.0}, {"b": 1.0})
    with pytest.raises(ValueError, match="shape"):
        loss_barrier(lambda p: 0.0, {"a": jnp.ones(2)}, {"a": jnp.ones(3)})
    with pytest.raises(ValueError, match="num_points"):
        loss_barrier(lambda p: 0.0, {"a": 1.0}, {"a": 1.0}, num_points=1)


def test_weight_matching_recovers_a_permuted_copy():
    rng = np.random.default_rng(2)
    sizes = [4, 8, 6, 1]
    a = [
        (rng.normal(size=(i, o)), rng.normal(size=o))
        for i, o in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    p1, p2 = rng.permutation(8), rng.permutation(6)
    b = [(a[0][0][:, p1], a[0][1][p1]), (a[1][0][p1][:, p2], a[1][1][p2]), (a[2][0][p2], a[2][1])]
    aligned = weight_match_mlp(a, b, key=jax.random.key(0))
    for (wa, ba), (wb, bb) in zip(a, aligned, strict=True):
        np.testing.assert_allclose(wa, wb)
        np.testing.assert_allclose(ba, bb)
    # B's function is unchanged by its permutation.
    x = rng.normal(size=(3, 4))

    def f(p):
        h = x
        for w, bias in p[:-1]:
            h = np.maximum(h @ w + bias, 0)
        return h @ p[-1][0] + p[-1][1]

    np.testing.assert_allclose(f(aligned), f(b))
    with pytest.raises(ValueError, match="same layer shapes"):
        weight_match_mlp(a, a[:2], key=jax.random.key(0))


def test_cka_jit_and_errors():
    x = jax.random.normal(jax.random.key(0), (20, 3))
    np.testing.assert_allclose(jax.jit(linear_cka)(x, x), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="same samples"):
        linear_cka(x, x[:10])
    with pytest.raises(ValueError, match="NaN"):
        linear_cka(x.at[0, 0].set(jnp.nan), x)
    with pytest.raises(ValueError, match="at least 4"):
        affine_coupling_r2(x[:3], x[:3])


def _lapack_calls_run_in_sequence(fn, *args) -> bool:
    """Whether every two LAPACK custom calls of ``jit(fn)``'s compiled entry computation
    on the CPU (whatever the default backend) are ordered by a data dependency (so XLA
    never runs two of them at once)."""
    args = jax.device_put(args, jax.devices("cpu")[0])
    text = jax.jit(fn).lower(*args).compile().as_text()
    entry = text[text.index("\nENTRY") :].splitlines()[1:]
    operands, lapack = {}, []
    for line in entry:
        if " = " not in line:
            continue
        name = line.split(" = ")[0].split("%")[-1]
        body = re.sub(r"\b(calls|condition|body|to_apply)=%[\w.-]+", "", line.split(" = ", 1)[1])
        operands[name] = set(re.findall(r"%([\w.-]+)", body))
        if 'custom_call_target="lapack_' in line:
            lapack.append(name)

    @functools.cache
    def ancestors(name: str) -> frozenset:
        direct = operands.get(name, set())
        return frozenset(direct).union(*(ancestors(o) for o in direct))

    assert len(lapack) >= 2, lapack
    return all(a in ancestors(b) or b in ancestors(a) for a, b in itertools.combinations(lapack, 2))


def test_vmapped_coupling_runs_its_lapack_solves_one_after_the_other():
    """Under vmap on XLA:CPU each solve is a batched LAPACK call that waits, on a pool
    thread, for chunks it queued on the same pool: two at once hang a 2-thread pool."""
    x = jax.random.normal(jax.random.key(0), (3, 40, 6))
    assert _lapack_calls_run_in_sequence(jax.vmap(affine_coupling_r2), x, x**3)

    def two_independent_solves(a, b):
        gram = a.mT @ a + jnp.eye(a.shape[-1])
        return jnp.linalg.solve(gram, a.mT @ b), jnp.linalg.solve(gram + 1.0, b.mT @ a)

    assert not _lapack_calls_run_in_sequence(jax.vmap(two_independent_solves), x, x**3)


def test_vmapped_coupling_matches_each_pair_in_float64_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 60, 5))
    y = np.tanh(x @ rng.normal(size=(5, 4)))

    def r2(a, b):
        fit, test = slice(0, 30), slice(30, 60)
        a1 = np.concatenate([a, np.ones((60, 1))], axis=1)
        w = np.linalg.solve(a1[fit].T @ a1[fit] + 1e-6 * np.eye(a1.shape[1]), a1[fit].T @ b[fit])
        resid = b[test] - a1[test] @ w
        return 1 - np.sum(resid**2) / np.sum((b[test] - b[test].mean(0)) ** 2)

    want = [0.5 * (r2(a, b) + r2(b, a)) for a, b in zip(x, y, strict=True)]
    got = jax.vmap(affine_coupling_r2)(jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32))
    np.testing.assert_allclose(got, want, atol=2e-4)
