"""The shared harness: meshes, the train loop, whole-run programs, checkpoints, metrics, timing."""

from jaxlab.train.checkpoint import Checkpointer, CheckpointError
from jaxlab.train.loop import create_state, fit
from jaxlab.train.mesh import batch_sharding, make_mesh, put_batch, replicate, replicated
from jaxlab.train.metrics import MetricsWriter
from jaxlab.train.runs import batch_runs, jit_run, scan_run
from jaxlab.train.timing import ratios, time_call, time_interleaved

__all__ = [
    "CheckpointError",
    "Checkpointer",
    "MetricsWriter",
    "batch_runs",
    "batch_sharding",
    "create_state",
    "fit",
    "jit_run",
    "make_mesh",
    "put_batch",
    "ratios",
    "replicate",
    "replicated",
    "scan_run",
    "time_call",
    "time_interleaved",
]
