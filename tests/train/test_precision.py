"""The config's numerics: names checked, and ``numerics_scope`` sets the traced precision."""

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from jaxlab.report import base_config
from jaxlab.train import compute_dtype, numerics_scope, param_dtype


def _dot_precision(x):
    """The ``precision`` the jaxpr of ``x @ x`` records when traced here."""
    jaxpr = jax.make_jaxpr(lambda a: a @ a)(x)
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    return eqn.params["precision"]


@pytest.mark.parametrize("preset", ["smoke", "quick", "paper"])
def test_every_preset_names_its_numerics(preset):
    config = base_config(preset)
    assert config.matmul_precision == "highest"
    assert compute_dtype(config) == jnp.float32
    assert param_dtype(config) == jnp.float32


def test_scope_traces_matrix_products_at_the_config_precision():
    x = jnp.ones((3, 3))
    config = base_config("quick")
    with numerics_scope(config):
        highest = _dot_precision(x)
    config.matmul_precision = "default"
    with numerics_scope(config):
        default = _dot_precision(x)
    assert highest == (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)
    assert highest != default


def test_scope_without_the_field_runs_at_highest():
    with numerics_scope(ml_collections.ConfigDict({"seed": 0})):
        assert _dot_precision(jnp.ones((2, 2)))[0] == jax.lax.Precision.HIGHEST


@pytest.mark.parametrize(
    "field, value",
    [("matmul_precision", "tf32"), ("compute_dtype", "int8"), ("param_dtype", "bfloat16")],
)
def test_bad_names_are_refused(field, value):
    config = base_config("quick")
    config[field] = value
    with pytest.raises(ValueError, match=field):
        with numerics_scope(config):
            pass


def test_bfloat16_compute_dtype_is_a_dtype():
    config = base_config("paper")
    config.compute_dtype = "bfloat16"
    assert np.dtype(compute_dtype(config)) == jnp.bfloat16
