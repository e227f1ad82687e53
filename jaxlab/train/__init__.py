"""The shared harness: meshes, the train loop, whole-run programs, checkpoints, metrics, timing."""

from jaxlab.train.checkpoint import Checkpointer, CheckpointError
from jaxlab.train.lifecycle import (
    atomic_write_json,
    atomic_write_npz,
    atomic_write_text,
    config_digest,
    from_process_0,
    padded_runs,
    place,
    place_runs,
    resumable,
    run_lanes,
    runs_sharding,
    to_host,
)
from jaxlab.train.loop import create_state, fit
from jaxlab.train.mesh import (
    batch_sharding,
    make_mesh,
    mesh_from_config,
    put_batch,
    replicate,
    replicated,
)
from jaxlab.train.metrics import MetricsWriter, log_history, log_result
from jaxlab.train.optim import make_optimizer, make_schedule, optimizer_step
from jaxlab.train.precision import compute_dtype, numerics_scope, param_dtype
from jaxlab.train.prefetch import DeviceStream, device_batches
from jaxlab.train.runs import batch_runs, jit_run, scan_run, segmented_scan_run
from jaxlab.train.timing import ratios, time_call, time_interleaved, time_min_of_k

__all__ = [
    "CheckpointError",
    "Checkpointer",
    "DeviceStream",
    "MetricsWriter",
    "atomic_write_json",
    "atomic_write_npz",
    "atomic_write_text",
    "config_digest",
    "from_process_0",
    "batch_runs",
    "batch_sharding",
    "compute_dtype",
    "create_state",
    "device_batches",
    "fit",
    "jit_run",
    "log_history",
    "log_result",
    "make_mesh",
    "make_optimizer",
    "make_schedule",
    "mesh_from_config",
    "numerics_scope",
    "optimizer_step",
    "padded_runs",
    "param_dtype",
    "place",
    "place_runs",
    "put_batch",
    "ratios",
    "replicate",
    "replicated",
    "resumable",
    "run_lanes",
    "runs_sharding",
    "scan_run",
    "segmented_scan_run",
    "time_call",
    "time_interleaved",
    "time_min_of_k",
    "to_host",
]
