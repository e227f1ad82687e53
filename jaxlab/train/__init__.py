"""The shared harness: meshes, the train loop, checkpoints and metrics."""

from jaxlab.train.checkpoint import Checkpointer, CheckpointError
from jaxlab.train.loop import create_state, fit
from jaxlab.train.mesh import batch_sharding, make_mesh, put_batch, replicate, replicated
from jaxlab.train.metrics import MetricsWriter

__all__ = [
    "CheckpointError",
    "Checkpointer",
    "MetricsWriter",
    "batch_sharding",
    "create_state",
    "fit",
    "make_mesh",
    "put_batch",
    "replicate",
    "replicated",
]
