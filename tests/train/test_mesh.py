import jax
import numpy as np
import pytest

from jaxlab.train import make_mesh, put_batch, replicate

pytestmark = pytest.mark.devices(8)


def test_make_mesh_shapes():
    assert dict(make_mesh().shape) == {"data": 8}
    assert dict(make_mesh({"data": 2, "workers": -1}).shape) == {"data": 2, "workers": 4}
    with pytest.raises(ValueError, match="do not fit"):
        make_mesh({"data": 16})
    with pytest.raises(ValueError, match="at most one"):
        make_mesh({"a": -1, "b": -1})


def test_put_batch_splits_rows_and_checks_divisibility():
    mesh = make_mesh()
    x = np.arange(32.0).reshape(16, 2)
    placed = put_batch({"x": x}, mesh)["x"]
    np.testing.assert_array_equal(np.asarray(placed), x)
    assert {s.data.shape for s in placed.addressable_shards} == {(2, 2)}
    with pytest.raises(ValueError, match="cannot be split"):
        put_batch({"x": np.zeros((12, 2))}, mesh)


def test_replicate_keeps_values_and_keys():
    mesh = make_mesh()
    tree = {"w": np.ones((3, 2)), "key": jax.random.key(3)}
    out = replicate(tree, mesh)
    np.testing.assert_array_equal(np.asarray(out["w"]), tree["w"])
    np.testing.assert_array_equal(jax.random.key_data(out["key"]), jax.random.key_data(tree["key"]))
    assert len(out["w"].sharding.device_set) == 8


def test_mesh_from_config_orders_axes_and_defaults():
    import ml_collections

    from jaxlab.train.mesh import mesh_from_config

    config = ml_collections.ConfigDict({"mesh": {"data": -1, "runs": 2}})
    assert dict(mesh_from_config(config).shape) == {"runs": 2, "data": 4}
    assert mesh_from_config(config).axis_names == ("runs", "data")
    assert dict(mesh_from_config(ml_collections.ConfigDict(), "runs").shape) == {"runs": 8}
    one = mesh_from_config(ml_collections.ConfigDict({"mesh": {"runs": 1}}))
    assert one.devices.tolist() == jax.devices()[:1]
    with pytest.raises(ValueError, match="positive"):
        make_mesh({"runs": 0})
