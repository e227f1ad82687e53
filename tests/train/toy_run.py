"""Runs the toy model with ``jaxlab.train.fit`` in a fresh process (for the harness tests).

Usage: python -m tests.train.toy_run OUT.npz [--workdir D] [--steps N] [--sleep S]
       [--devices K] [--mesh] [--coordinator HOST:PORT --num_processes P --process_id I]

With ``--mesh`` it also runs the lifecycle on the mesh: ``batch_runs`` over ``runs``,
``to_host`` of a runs-sharded array, ``resumable`` twice (the second call loads the piece),
and one epoch of a ``fit`` fed by a ``DeviceStream`` (each process reads its own shard);
the examples each step read are saved.
"""

from __future__ import annotations

import argparse
import os
import time

import jax


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--workdir")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--mesh", action="store_true")
    parser.add_argument("--checkpoint_every", type=int, default=5)
    parser.add_argument("--coordinator")
    parser.add_argument("--num_processes", type=int, default=1)
    parser.add_argument("--process_id", type=int, default=0)
    args = parser.parse_args()

    os.environ["JAX_PLATFORMS"] = "cpu"
    jax.config.update("jax_num_cpu_devices", args.devices)
    if args.coordinator:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(
            args.coordinator, num_processes=args.num_processes, process_id=args.process_id
        )

    import numpy as np

    from jaxlab.train import batch_runs, fit, make_mesh
    from tests.train import toy

    get_batch = toy.batches()

    def batch_at(step):
        time.sleep(args.sleep)
        return get_batch(step)

    state, history = fit(
        state=toy.make_state(),
        train_step=toy.train_step,
        batch_at=batch_at,
        num_steps=args.steps,
        key=jax.random.key(1),
        workdir=args.workdir,
        checkpoint_every=args.checkpoint_every,
        log_every=1,
        mesh=make_mesh() if args.mesh else None,
        progress=False,
    )
    params = (
        jax.tree.map(
            lambda p: np.asarray(jax.experimental.multihost_utils.process_allgather(p, tiled=True)),
            state.params,
        )
        if args.coordinator
        else state.params
    )
    flat = np.concatenate([np.ravel(np.asarray(p)) for p in jax.tree.leaves(params)])
    losses = np.asarray([row["loss"] for row in history if "loss" in row])
    runs = {}
    if args.mesh:  # batch_runs over the runs axis: key and float outputs of every run
        draw = batch_runs(
            lambda k: (jax.random.split(k)[0], jax.random.normal(k)), mesh=make_mesh({"runs": -1})
        )
        next_keys, draws = draw(jax.random.split(jax.random.key(2), 8))
        runs = {
            "run_keys": np.asarray(jax.random.key_data(next_keys)),
            "run_draws": np.asarray(draws),
        }
    if args.mesh:
        runs.update(_lifecycle(args, make_mesh))
    if args.process_id == 0:
        np.savez(args.out, params=flat, losses=losses, **runs)


def _lifecycle(args, make_mesh) -> dict:
    """The lifecycle helpers and a streamed fit on the mesh (see the module docstring)."""
    from pathlib import Path

    import jax.numpy as jnp
    import numpy as np

    from jaxlab.data.streaming import make_loader
    from jaxlab.train import DeviceStream, fit, resumable, runs_sharding, to_host
    from tests.train import toy

    runs = make_mesh({"runs": -1})
    sharded = jax.device_put(jnp.arange(16.0).reshape(8, 2), runs_sharding(runs))
    calls = []

    def piece():
        calls.append(1)
        return {"x": sharded * 2}

    pieces = Path(args.out).parent / f"pieces-{Path(args.out).stem}"
    first = resumable(pieces, "piece", {"n": 8}, piece)
    second = resumable(pieces, "piece", {"n": 8}, piece)

    data = toy.make_data(0, 64)
    source = [{"x": data["x"][i], "y": data["y"][i], "id": np.int32(i)} for i in range(64)]
    stream = DeviceStream(make_loader(source, [], global_batch=16, seed=0), make_mesh())

    def step(state, batch, key):  # the metrics name the whole global batch's examples
        state, metrics = toy.train_step(state, {"x": batch["x"], "y": batch["y"]}, key)
        return state, {
            **metrics,
            **{f"id{i}": batch["id"][i].astype(jnp.float32) for i in range(16)},
        }

    _, history = fit(
        state=toy.make_state(),
        train_step=step,
        batches=stream,
        num_steps=4,
        key=jax.random.key(3),
        log_every=1,
        mesh=stream.mesh,
        progress=False,
    )
    stream.close()
    return {
        "host": to_host(sharded),
        "piece_first": first["x"],
        "piece_second": second["x"],
        "piece_calls": np.asarray(len(calls)),
        "stream_ids": np.asarray([[row[f"id{i}"] for i in range(16)] for row in history]),
    }


if __name__ == "__main__":
    main()
