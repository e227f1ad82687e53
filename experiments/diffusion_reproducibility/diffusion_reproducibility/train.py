"""Train two EDM denoiser families per (seed, n), sample shared noises, score reproducibility.

Datasets: scikit-learn ``digits`` and the generated ``molrg`` (quick, smoke: 64-d items,
8x8x1 images), or TFDS ``cifar10`` (paper: 32x32x3 images, read through
:func:`jaxlab.data.streaming.open_source`). The items of one config share one shape,
``config.image_shape``; every (dataset, seed, n) run is a lane of one batched program over
the mesh's ``runs`` axis.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import scipy.linalg
from matplotlib.figure import Figure
from sklearn.datasets import load_digits

from jaxlab import diffusion
from jaxlab.data.streaming import open_source
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    jit_run,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    segmented_scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract

DATASETS = ("digits", "molrg", "cifar10")
FAMILIES = ("mlp", "unet")


def _fourier(c_noise: jax.Array, num: int = 8) -> jax.Array:
    freqs = 2.0 ** jnp.arange(num, dtype=c_noise.dtype)
    angles = c_noise[:, None] * freqs[None, :]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class MLPDenoiser(nn.Module):
    """Raw network F(x_in, c_noise) as an MLP with the noise embedding added to every layer."""

    width: int
    depth: int

    @nn.compact
    def __call__(self, x, c_noise):
        emb = nn.silu(nn.Dense(self.width)(_fourier(c_noise)))
        h = nn.Dense(self.width)(x)
        for _ in range(self.depth):
            h = nn.silu(nn.Dense(self.width)(nn.silu(h) + emb))
        return nn.Dense(x.shape[-1])(h)


class UNetDenoiser(nn.Module):
    """Raw network F(x_in, c_noise) as a two-level conv U-Net on the ``shape`` image
    (``[H, W, C]``, H and W even; the flat item is its row-major pixels)."""

    channels: int
    shape: tuple[int, int, int] = (8, 8, 1)

    @nn.compact
    def __call__(self, x, c_noise):
        c = self.channels
        b = x.shape[0]
        img = x.reshape((b, *self.shape))
        emb = nn.silu(nn.Dense(4 * c)(_fourier(c_noise)))
        h1 = nn.silu(nn.Conv(c, (3, 3))(img) + nn.Dense(c)(emb)[:, None, None, :])
        h1 = nn.silu(nn.Conv(c, (3, 3))(h1))
        h2 = nn.avg_pool(h1, (2, 2), strides=(2, 2))
        h2 = nn.silu(nn.Conv(2 * c, (3, 3))(h2) + nn.Dense(2 * c)(emb)[:, None, None, :])
        h2 = nn.silu(nn.Conv(2 * c, (3, 3))(h2))
        up = jnp.repeat(jnp.repeat(h2, 2, axis=1), 2, axis=2)
        h = nn.silu(nn.Conv(c, (3, 3))(jnp.concatenate([up, h1], axis=-1)))
        return nn.Conv(self.shape[-1], (3, 3))(h).reshape(b, -1)


class Pool(NamedTuple):
    """A dataset's ``size`` items by index: ``take(ids [...])`` the items ``[..., D]``
    (float32); ``items``, all of them ``[size, D]`` where they are held in memory, else
    ``None`` (read from the source at each ``take``)."""

    size: int
    take: Callable[[np.ndarray], np.ndarray]
    items: np.ndarray | None


def _held(items: np.ndarray) -> Pool:
    return Pool(len(items), lambda ids: items[ids], items)


def _load(name: str, config, rng: np.random.Generator) -> Pool:
    """The dataset's items: digits (D = 64) and MoLRG (D = 64, scaled so that its
    per-coordinate std is about ``config.sigma_data``) held in memory; CIFAR-10's training
    images (D = 32·32·3, the TFDS ``cifar10`` train split) in [-1, 1], each ``take``
    reading only the records it asks for from
    :func:`jaxlab.data.streaming.open_source`."""
    if name == "digits":
        return _held((load_digits().data / 8.0 - 1.0).astype(np.float32))  # [-1, 1]
    if name == "cifar10":
        source = open_source("cifar10", "train", data_dir=config.data_dir or None)

        def take(ids: np.ndarray) -> np.ndarray:
            ids = np.asarray(ids)
            images = np.stack([np.asarray(source[int(i)]["image"]) for i in ids.ravel()])
            return (images.reshape(*ids.shape, -1) / 127.5 - 1.0).astype(np.float32)

        return Pool(len(source), take, None)
    k, r, n = config.molrg_components, config.molrg_rank, max(config.n_values)
    bases = [np.linalg.qr(rng.normal(size=(64, r)))[0] for _ in range(k)]
    comp = rng.integers(0, k, size=n)
    coef = rng.normal(size=(n, r)) * config.sigma_data * np.sqrt(64 / r)
    return _held(
        np.stack([bases[c] @ a for c, a in zip(comp, coef, strict=True)]).astype(np.float32)
    )


def pool_proxy(pool: Pool, num_components: int, chunk: int = 4096) -> diffusion.PCAProxy:
    """The PCA proxy (:func:`jaxlab.diffusion.pca_proxy`) of all ``pool.size`` items.

    Items held in memory, or at most ``chunk`` of them: ``pca_proxy`` on all of them (an
    SVD). A larger pool read from its source: read ``chunk`` items ``[chunk, D]`` at a time,
    accumulating their sum and their scatter matrix ``Σ x xᵀ`` ``[D, D]`` in float64; the
    components are the top ``num_components`` eigenvectors of the centred scatter matrix,
    the principal axes of the same PCA (up to signs, which the proxy's cosines do not see).

    Raises:
      ValueError: ``num_components`` is not in 1 … min(``pool.size``, D).
    """
    if pool.items is not None or pool.size <= chunk:
        items = pool.items if pool.items is not None else pool.take(np.arange(pool.size))
        return diffusion.pca_proxy(items, num_components)
    total: np.ndarray | float = 0.0  # Σ x [D]
    scatter: np.ndarray | float = 0.0  # Σ x xᵀ [D, D]
    for start in range(0, pool.size, chunk):
        x = pool.take(np.arange(start, min(start + chunk, pool.size))).astype(np.float64)
        total, scatter = total + x.sum(axis=0), scatter + x.T @ x
    mean = np.asarray(total) / pool.size
    dim = mean.shape[0]
    if not 1 <= num_components <= min(pool.size, dim):
        raise ValueError(f"need 1 <= num_components <= {min(pool.size, dim)}, got {num_components}")
    scatter = scatter - pool.size * np.outer(mean, mean)
    _, vectors = scipy.linalg.eigh(scatter, subset_by_index=[dim - num_components, dim - 1])
    return diffusion.PCAProxy(
        mean=jnp.asarray(mean, jnp.float32),
        components=jnp.asarray(vectors[:, ::-1].T, jnp.float32),  # by decreasing variance
    )


def chance_threshold(features: np.ndarray, chance_rate: float) -> float:
    """τ at which a pair of distinct, unrelated items agrees with probability ``chance_rate``.

    The (1 − ``chance_rate``)-quantile of cos(e_i, e_j) over all pairs i < j of the items'
    embeddings ``features [N, k]``: RP's definition (Sec. 2 of Zhang et al.: a pair counts
    when its cosine exceeds τ) then scores two independent generators at about
    ``chance_rate``, so the chance floor is measurable and RP above it means agreement.
    """
    if not 0.0 < chance_rate < 1.0:
        raise ValueError(f"chance_rate must be in (0, 1), got {chance_rate}")
    e = features / np.linalg.norm(features, axis=1, keepdims=True)
    cos = (e @ e.T)[np.triu_indices(len(e), k=1)]
    return float(np.quantile(cos, 1.0 - chance_rate))


def _denoiser(model: nn.Module, params, config):
    """EDM's preconditioned denoiser D(x, σ) of ``model`` at ``params``."""
    return lambda x, s: diffusion.edm_denoise(
        lambda u, c: model.apply(params, u, c), x, s, config.sigma_data
    )


def _init(model: nn.Module, tx, key, train_set):
    """``(params, opt_state)`` of one run (``train_set [N, D]`` gives the input shape)."""
    params = model.init(key, train_set[:2], jnp.zeros((2,)))
    return params, tx.init(params)


def _train_step(model: nn.Module, tx, config, carry, t, train_key, n, train_set):
    """One EDM training step of a run: a batch of ``config.batch_size`` of the first ``n``
    items of ``train_set [N, D]``, keys folded from ``train_key`` at step ``t``."""
    k_batch, k_loss = jax.random.split(jax.random.fold_in(train_key, t))
    idx = jax.random.randint(k_batch, (config.batch_size,), 0, n)

    def loss_fn(params, batch):
        items, key = batch
        return diffusion.edm_loss(
            _denoiser(model, params, config), items, key, sigma_data=config.sigma_data
        )

    return optimizer_step(loss_fn, tx)(carry, (train_set[idx], k_loss))


def _models(config) -> tuple[nn.Module, ...]:
    """The two denoiser families, in :data:`FAMILIES` order."""
    return (
        MLPDenoiser(config.mlp_width, config.mlp_depth),
        UNetDenoiser(config.unet_channels, tuple(config.image_shape)),
    )


def _run_init(models, tx, key, n, train_set):
    """A run's training carry: every family's ``(params, opt_state)`` from the same init key,
    and the run's data ``(train_key, n, train_set [N, D])`` that each step reads."""
    init_key, train_key = jax.random.split(key)
    return tuple(_init(m, tx, init_key, train_set) for m in models), (train_key, n, train_set)


def _run_step(models, tx, config, carry, t):
    """Step ``t`` of every family of a run (``carry`` as :func:`_run_init`); their losses."""
    states, data = carry
    out = [
        _train_step(m, tx, config, state, t, *data) for m, state in zip(models, states, strict=True)
    ]
    return (tuple(state for state, _ in out), data), jnp.stack([loss for _, loss in out])


def _train(config, mesh, workdir: str, keys, ns, sets) -> tuple:
    """Both families of every run (``keys [R]``, ``ns [R]``, ``sets [R, N, D]``) trained as
    one scan of ``config.num_steps`` steps in ``config.segments`` pieces, checkpointed in
    ``workdir``, the runs split over ``mesh``'s ``runs`` axis; the params per family."""
    models = _models(config)
    tx = make_optimizer(config.optimizer)
    init = batch_runs(
        lambda key, n, train_set: _run_init(models, tx, key, n, train_set), method="auto", mesh=mesh
    )
    step = batch_runs(
        lambda carry, t: _run_step(models, tx, config, carry, t),
        in_axes=(0, None),
        method="auto",
        mesh=mesh,
    )
    (states, _), _ = segmented_scan_run(
        step,
        init(keys, ns, sets),
        length=config.num_steps,
        segments=config.segments,
        checkpointer=Checkpointer(os.path.join(workdir, "denoisers")),
        mesh=mesh,
    )
    return tuple(params for params, _ in states)


def _sample(model: nn.Module, config, params, noise, sigmas):
    """The Heun ODE samples of ``noise [K, D]`` under ``model`` at ``params``."""
    return diffusion.edm_heun_sample(_denoiser(model, params, config), noise, sigmas)


def _dstar_samples(train: jax.Array, noise: jax.Array, sigmas: jax.Array) -> jax.Array:
    """D*'s samples from the shared noises (compiled once per training-set size)."""
    return diffusion.edm_heun_sample(
        lambda x, s: diffusion.optimal_denoiser(x, s, train), noise, sigmas
    )


def _dataset(name: str, config, seeds: list[int]) -> dict:
    """A dataset's pool, its training sets per seed and the rng of its later draws.

    Seed ``s`` trains on the first n items of a permutation of the pool (its own rng), for
    every n in ``n_values``: ``train_sets [S, max(n), D]`` holds the first max(n) of each
    seed's permutation, read from the pool, and no other items. The method's optimal
    denoiser D* is the softmax-weighted mean of all of a run's training items, so each
    run's whole training set is in memory (and on its device for training) in any case.
    """
    rng = np.random.default_rng(config.seed + 1000 * DATASETS.index(name))
    pool = _load(name, config, rng)
    n_values = tuple(min(n, pool.size) for n in config.n_values)
    perms = np.stack([np.random.default_rng(s).permutation(pool.size) for s in seeds])
    return {
        "rng": rng,
        "pool": pool,
        "n_values": n_values,
        "train_sets": pool.take(perms[:, : max(n_values)]),
    }  # [S, max(n), D]: seed s trains on its first n items


def _grid(data: dict, seeds: list[int], noise: np.ndarray, lanes: int):
    """The runs ``(keys, ns, sets [R, N, D], noises [R, K, D])``: (dataset, seed, n)
    flattened, then copies of run 0 up to ``lanes`` runs (a multiple of the devices).

    Every n and family of a seed shares its noises. Only the first max(n) items are ever
    drawn: the datasets then share one shape (zeros pad a smaller one) and one compiled
    program trains every run.
    """
    grid = [(d, i, n) for d in data.values() for i in range(len(seeds)) for n in d["n_values"]]
    width = max(max(d["n_values"]) for d in data.values())
    dim = noise.shape[-1]
    sets = np.zeros((len(grid), width, dim), np.float32)
    for r, (d, i, _) in enumerate(grid):
        items = d["train_sets"][i, :width]
        sets[r, : len(items)] = items
    keys = jnp.stack([jax.random.fold_in(jax.random.key(seeds[i]), n) for _, i, n in grid])
    ns = jnp.asarray([n for *_, n in grid], jnp.int32)
    zs = np.stack([noise[i] for _, i, _ in grid])
    return tuple(
        jnp.concatenate([x, jnp.repeat(x[:1], lanes - len(grid), axis=0)])
        for x in (keys, ns, jnp.asarray(sets), jnp.asarray(zs))
    )


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    seeds = [config.seed + i for i in range(config.num_seeds)]
    n_values = tuple(config.n_values)
    results: dict[str, list[float]] = {}
    curves = {}
    sigmas = diffusion.edm_sigma_steps(config.heun_steps, config.sigma_min, config.sigma_max)
    mesh = mesh_from_config(config, RUNS_AXIS)
    data = {name: _dataset(name, config, seeds) for name in config.datasets}
    dim = int(np.prod(config.image_shape))
    noise = np.stack(
        [np.asarray(jax.random.normal(jax.random.key(s), (config.num_samples, dim))) for s in seeds]
    )
    count = len(data) * len(seeds) * len(n_values)
    lanes = padded_runs(count, mesh)
    keys, ns, sets, zs = _grid(data, seeds, noise, lanes)
    shape = (len(data), len(seeds), len(n_values), config.num_samples, dim)
    all_samples = {}
    for fam, model, params in zip(
        FAMILIES, _models(config), _train(config, mesh, workdir, keys, ns, sets), strict=True
    ):
        sample = batch_runs(
            lambda p, z, s, model=model: _sample(model, config, p, z, s),
            in_axes=(0, 0, None),
            method="auto",
            mesh=mesh,
        )
        all_samples[fam] = to_host(sample(params, zs, sigmas))[:count].reshape(shape)
    dstar_fn = jit_run(_dstar_samples, fast_compile=config.fast_compile)
    for d, (name, ds) in enumerate(data.items()):
        rng, pool, n_values_ds, train_sets = (
            ds[k] for k in ("rng", "pool", "n_values", "train_sets")
        )
        samples = {fam: s[d] for fam, s in all_samples.items()}
        dstar = np.stack(
            [
                np.stack(
                    [np.asarray(dstar_fn(train_sets[i, :n], noise[i], sigmas)) for n in n_values_ds]
                )
                for i in range(len(seeds))
            ]
        )

        proxy = pool_proxy(pool, config.pca_components)
        # The thresholds are calibrated on the items, or on ``calibration_items`` of them
        # at random where the pool is larger (their pairs are a [N, N] matrix).
        calib_ids = np.arange(pool.size)
        if config.calibration_items and pool.size > config.calibration_items:
            pick = np.random.default_rng(config.seed + 1).choice(
                pool.size, config.calibration_items, replace=False
            )
            calib_ids = np.sort(pick)
        calib = pool.take(calib_ids)
        pool_emb = np.asarray(diffusion.pca_embed(proxy, calib))
        # RP's τ: calibrated on unrelated pairs, so that the chance floor is not 0.
        tau = chance_threshold(pool_emb, config.chance_rate)
        # The memorization score asks another question (is a sample a copy of a training
        # item?): its τ separates lightly noised copies from nearest distinct items.
        copies = calib + config.copy_noise * rng.normal(size=calib.shape).astype(np.float32)
        copy_tau = float(
            diffusion.calibrate_threshold(pool_emb, diffusion.pca_embed(proxy, copies))
        )
        results[f"{name}_threshold"] = [tau] * len(seeds)
        results[f"{name}_copy_threshold"] = [copy_tau] * len(seeds)

        def emb(x, proxy=proxy):
            return diffusion.pca_embed(proxy, x)

        per = {
            k: np.zeros((len(seeds), len(n_values_ds)))
            for k in (
                "rp_ab",
                "rp_floor",
                "rp_mlp_dstar",
                "rp_unet_dstar",
                "mem_mlp",
                "mem_unet",
                "nn_ratio_mlp",
                "nn_ratio_unet",
                "nn_ratio_dstar",
                "cos_ab",
                "cos_floor",
                "cos_mlp_dstar",
            )
        }
        for i in range(len(seeds)):
            for j, n in enumerate(n_values_ds):
                ea, eb, ed = emb(samples["mlp"][i, j]), emb(samples["unet"][i, j]), emb(dstar[i, j])
                train_n = train_sets[i, :n]
                et = emb(train_n)
                per["rp_ab"][i, j] = diffusion.reproducibility_score(ea, eb, tau)
                per["rp_floor"][i, j] = diffusion.reproducibility_score(
                    ea, jnp.roll(eb, 1, axis=0), tau
                )
                per["rp_mlp_dstar"][i, j] = diffusion.reproducibility_score(ea, ed, tau)
                per["rp_unet_dstar"][i, j] = diffusion.reproducibility_score(eb, ed, tau)
                per["cos_ab"][i, j] = jnp.mean(diffusion.pair_cosine(ea, eb))
                per["cos_floor"][i, j] = jnp.mean(diffusion.pair_cosine(ea, jnp.roll(eb, 1, 0)))
                per["cos_mlp_dstar"][i, j] = jnp.mean(diffusion.pair_cosine(ea, ed))
                per["mem_mlp"][i, j] = diffusion.memorization_score(ea, et, copy_tau)
                per["mem_unet"][i, j] = diffusion.memorization_score(eb, et, copy_tau)
                for fam, x in (
                    ("mlp", samples["mlp"][i, j]),
                    ("unet", samples["unet"][i, j]),
                    ("dstar", dstar[i, j]),
                ):
                    per[f"nn_ratio_{fam}"][i, j] = jnp.mean(
                        diffusion.nearest_neighbor_ratio(x, train_n)
                    )
        for key, values in per.items():
            for j, n in enumerate(n_values):
                results[f"{name}_{key}_n{n}"] = values[:, j].tolist()
        rp = per["rp_ab"]
        results[f"{name}_rp_ab_small"] = rp[:, 0].tolist()
        results[f"{name}_rp_ab_large"] = rp[:, -1].tolist()
        results[f"{name}_rp_floor_small"] = per["rp_floor"][:, 0].tolist()
        results[f"{name}_rp_floor_large"] = per["rp_floor"][:, -1].tolist()
        results[f"{name}_rp_ends"] = np.minimum(rp[:, 0], rp[:, -1]).tolist()
        results[f"{name}_rp_middle"] = rp[:, 1:-1].min(axis=1).tolist()
        results[f"{name}_rp_mlp_dstar_small"] = per["rp_mlp_dstar"][:, 0].tolist()
        results[f"{name}_rp_unet_dstar_small"] = per["rp_unet_dstar"][:, 0].tolist()
        for key in ("cos_ab", "cos_floor", "cos_mlp_dstar"):
            results[f"{name}_{key}_small"] = per[key][:, 0].tolist()
            results[f"{name}_{key}_large"] = per[key][:, -1].tolist()
        curves[name] = {k: v.mean(axis=0) for k, v in per.items()}
    _plot(curves, n_values, workdir)
    return results


def _plot(curves: dict, n_values, workdir: str) -> None:
    """RP curves against the training-set size, one panel per dataset."""
    fig = Figure(figsize=(5 * len(curves), 3.5))
    axes = fig.subplots(1, len(curves), squeeze=False)
    for ax, (name, c) in zip(axes[0], curves.items(), strict=True):
        for key, label in (
            ("rp_ab", "RP(MLP, U-Net)"),
            ("rp_mlp_dstar", "RP(MLP, D*)"),
            ("rp_unet_dstar", "RP(U-Net, D*)"),
            ("rp_floor", "chance floor"),
            ("mem_mlp", "memorization (MLP)"),
        ):
            ax.plot(n_values, c[key], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("training-set size n")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(name)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(workdir, exist_ok=True)
    fig.savefig(os.path.join(workdir, "rp_vs_n.png"), dpi=100)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one training step of both denoiser families (MLP and U-Net) of
    every (dataset, seed, n) run, the runs split over ``runs`` (padded to it): the step of
    :func:`_train`'s scan, batched as on an accelerator (``vmap``).

    The final Heun sampling of both families (``heun_steps`` × 2 evaluations of
    ``num_samples`` noises per run, one call for every run) is a program of its own; D* and
    the scores are not planned.
    """
    runs = mesh.shape.get(RUNS_AXIS, 1)
    count = len(config.datasets) * config.num_seeds * len(config.n_values)
    lanes = padded_runs(count, mesh)
    tx = make_optimizer(config.optimizer)
    models = _models(config)
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    ns = jax.ShapeDtypeStruct((lanes,), jnp.int32)
    dim = int(np.prod(config.image_shape))
    sets = jax.ShapeDtypeStruct((lanes, max(config.n_values), dim), jnp.float32)
    carry = jax.eval_shape(jax.vmap(lambda k, n, x: _run_init(models, tx, k, n, x)), keys, ns, sets)
    spmd = RUNS_AXIS if runs > 1 else None

    def fn(carry, t):
        return jax.vmap(lambda c: _run_step(models, tx, config, c, t), spmd_axis_name=spmd)(carry)

    args = (
        abstract(carry, runs_sharding(mesh)),
        abstract(jax.ShapeDtypeStruct((), jnp.int32), replicated(mesh)),
    )
    sigmas = jax.eval_shape(
        lambda: diffusion.edm_sigma_steps(config.heun_steps, config.sigma_min, config.sigma_max)
    )
    noise = jax.ShapeDtypeStruct((lanes, config.num_samples, dim), jnp.float32)

    def sample(params, zs, sigmas):
        return tuple(
            jax.vmap(lambda p, z, m=m: _sample(m, config, p, z, sigmas))(q, zs)
            for m, q in zip(models, params, strict=True)
        )

    sampling = PlanSpec(
        fn=sample,
        abstract_args=(
            abstract(tuple(params for params, _ in carry[0]), runs_sharding(mesh)),
            abstract(noise, runs_sharding(mesh)),
            abstract(sigmas, replicated(mesh)),
        ),
        steps_per_run=1,
        num_runs=count,
        runs_per_call=count,
        note=f"Heun sampling of {config.num_samples} noises per run, both families",
        name="sample",
    )
    return PlanSpec(
        fn=fn,
        abstract_args=args,
        steps_per_run=config.num_steps,
        num_runs=count,
        runs_per_call=count,
        note=f"one EDM training step (batch {config.batch_size}) of the MLP and the U-Net of "
        f"{count} (dataset, seed, n) runs ({lanes} with padding, over runs); D* and the "
        "scores not planned",
        programs=(sampling,),
    )
