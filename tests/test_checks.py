"""``jaxlab._checks``, the one module of input checks every kernel package uses: each
refusal is a ``ValueError`` naming the argument and what it got; traced values pass."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import _checks as checks


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: checks.check_range("rate", 1.5, 0.0, 1.0),
            r"rate must lie in \[0.0, 1.0\], got 1.5",
        ),
        (
            lambda: checks.check_range("tol", 0.0, 0.0, None, low_open=True),
            r"tol must lie in \(0.0, inf\], got 0.0",
        ),
        (lambda: checks.check_range("alpha", float("nan"), 0.0, 1.0), "alpha must lie in"),
        (lambda: checks.check_range("lam", "big", 0.0), "lam must be a number, got 'big'"),
        (
            lambda: checks.check_range("p", np.array([0.5, 2.0]), 0.0, 1.0),
            r"p must lie in \[0.0, 1.0\], got array\(\[2.\]\)",
        ),
        (lambda: checks.check_integer("num_nodes", 2.7), "num_nodes must be an int, got 2.7"),
        (lambda: checks.check_integer("flag", True), "flag must be an int, got True"),
        (lambda: checks.check_integer("num_terms", -1, low=0), "num_terms must be >= 0, got -1"),
        (lambda: checks.check_widths("widths", (4, 0)), "widths must be >= 1, got 0"),
        (lambda: checks.check_callable("loss_fn", 3), "loss_fn must be callable, got int"),
        (lambda: checks.check_type("state", 3, (list, tuple)), "state must be a list or tuple"),
        (
            lambda: checks.as_float("x", jnp.ones(3, jnp.complex64)),
            "x must be real-valued, got dtype complex64",
        ),
        (lambda: checks.as_float("x", None), "x must be an array of numbers, got NoneType"),
        (
            lambda: checks.as_float("x", jnp.ones(3), ndim=2),
            r"x must have rank 2, got shape \(3,\)",
        ),
        (
            lambda: checks.check_rank("x", jnp.ones(3), (2, 3)),
            r"x must have rank 2 or 3, got shape \(3,\)",
        ),
        (
            lambda: checks.check_square("adj", jnp.ones((2, 3))),
            r"adj must be a square \[n, n\] matrix, got shape \(2, 3\)",
        ),
        (lambda: checks.check_nonempty("edges", jnp.ones((0, 2))), "edges must not be empty"),
        (
            lambda: checks.check_labels("labels", jnp.array([0.0]), 2),
            "labels must be integer class labels, got dtype float32",
        ),
        (
            lambda: checks.check_labels("labels", jnp.array([0, 3]), 2),
            r"labels must lie in \[0, 2\), got values in \[0, 3\]",
        ),
        (
            lambda: checks.broadcast_as("w", jnp.ones(3), (2, 4)),
            r"w of shape \(3,\) does not broadcast to \(2, 4\)",
        ),
        (lambda: checks.check_key("key", 0), "key must be a jax.random.key, got int 0"),
        (lambda: checks.check_key("key", np.zeros(3, np.uint32)), "key must be a jax.random.key"),
    ],
)
def test_each_refusal_names_the_argument_and_the_value(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_accepted_values_come_back():
    assert checks.check_range("rate", 0.5, 0.0, 1.0) == 0.5
    assert checks.check_integer("n", np.int64(3), low=1) == 3
    assert checks.as_float("x", jnp.array([1, 2])).dtype == jnp.float32
    np.testing.assert_array_equal(checks.as_float("x", jnp.array([1, 2])), [1.0, 2.0])
    checks.check_square("adj", np.eye(3))
    key = jax.random.key(0)
    assert checks.check_key("key", key) is key
    raw = jax.random.PRNGKey(0)
    assert checks.check_key("key", raw) is raw
    assert checks.numpy_seed("key", jax.random.key(7)) == 7


def test_traced_values_pass_unchecked():
    @jax.jit
    def f(alpha, x):
        assert checks.is_traced(alpha) and not checks.has_nan(x)
        checks.check_range("alpha", alpha, 0.0, 1.0)
        return checks.check_labels("labels", x, 2)

    f(5.0, jnp.array([7]))
    assert not checks.is_traced(1.0) and checks.has_nan(np.array([np.nan]))
    with pytest.raises(ValueError, match="key must be concrete"):
        jax.jit(lambda k: checks.numpy_seed("key", k))(jax.random.key(0))
