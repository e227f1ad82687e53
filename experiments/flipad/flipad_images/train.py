"""Fit three conv-transpose VAE decoders on digits; FLIPAD vs RawPAD vs DCTPAD AUCs.

Every jitted program takes the data and parameters as arguments and is built once per
process (``_programs``), so the seeds after the first reuse the compiled code.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score

from jaxlab import attribution
from jaxlab.train import (
    Checkpointer,
    jit_run,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    scan_run,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import DATA_AXIS, batch_sharding, replicated
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab_experiments.flipad.queries import over_queries

GENERATORS = ("a1", "a2", "b")  # a1, a2: architecture A with two seeds; b: architecture B
METHODS = ("flipad", "rawpad", "dctpad")
STANDARDISE = {"flipad": "target", "rawpad": "none", "dctpad": "all"}


def _to_pixels(x: np.ndarray) -> np.ndarray:
    """Images in [−1, 1] → 8-bit grey levels, as the reference stores every sample (PNG)."""
    return np.clip(np.round(x * 127.5 + 128.0), 0, 255)


def _from_pixels(p: np.ndarray) -> np.ndarray:
    """8-bit levels → [−1, 1] (``to_tensor`` then ``Normalize(0.5, 0.5)``)."""
    return (p / 255.0 * 2.0 - 1.0).astype(np.float32)


class LastLayer(nn.Module):
    """ψ(z) = W ∗ z + b: stride-2 transposed convolution 4×4×C → 8×8×1 (pre-tanh)."""

    @nn.compact
    def __call__(self, z):
        return nn.ConvTranspose(1, (4, 4), strides=(2, 2), padding="SAME", name="conv")(z)


class Decoder(nn.Module):
    """u ↦ tanh(ψ(G₁(u))): the generator; ``penult`` returns G₁(u) ∈ ℝ^{4×4×C}."""

    channels: int
    arch: str  # "a": dense → 4×4×C; "b": dense → 2×2×2C → conv-transpose → 4×4×C

    def setup(self):
        c = self.channels
        if self.arch == "a":
            self.body = nn.Sequential(
                [
                    nn.Dense(128),
                    nn.relu,
                    nn.Dense(16 * c),
                    nn.relu,
                    lambda h: h.reshape(h.shape[0], 4, 4, c),
                ]
            )
        else:
            self.body = nn.Sequential(
                [
                    nn.Dense(8 * c),
                    nn.relu,
                    lambda h: h.reshape(h.shape[0], 2, 2, 2 * c),
                    nn.ConvTranspose(c, (3, 3), strides=(2, 2), padding="SAME"),
                    nn.relu,
                ]
            )
        self.last = LastLayer()

    def penult(self, u):
        return self.body(u)

    def __call__(self, u):
        return jnp.tanh(self.last(self.body(u)))[..., 0]  # [n, 8, 8]


class Encoder(nn.Module):
    """q(u | x) = N(μ(x), diag σ²(x)); used only to fit the decoder."""

    latent_dim: int

    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Dense(128)(x.reshape(x.shape[0], -1)))
        out = nn.Dense(2 * self.latent_dim)(h)
        return out[:, : self.latent_dim], out[:, self.latent_dim :]


def _fit_vae(key, real, *, arch, channels, latent_dim, steps, optimizer, batch, sigma):
    """A VAE with Gaussian likelihood N(x; G(u), σ²I); returns the decoder's parameters.

    ``optimizer``: the optimiser's config entry as ``(key, value)`` pairs (static).
    """
    dec, enc = Decoder(channels, arch), Encoder(latent_dim)
    k_dec, k_enc, k_run = jax.random.split(key, 3)
    params = {"dec": dec.init(k_dec, jnp.zeros((1, latent_dim))), "enc": enc.init(k_enc, real[:1])}
    tx = make_optimizer(dict(optimizer))

    def loss_fn(params, draws):
        x, eps = draws
        mu, logvar = enc.apply(params["enc"], x)
        u = mu + jnp.exp(0.5 * logvar) * eps
        recon = jnp.sum((dec.apply(params["dec"], u) - x) ** 2, axis=(1, 2)) / (2 * sigma**2)
        kl = 0.5 * jnp.sum(jnp.exp(logvar) + mu**2 - 1.0 - logvar, axis=1)
        return jnp.mean(recon + kl)

    update = optimizer_step(loss_fn, tx)

    def step(carry, t):
        k1, k2 = jax.random.split(jax.random.fold_in(k_run, t))
        x = real[jax.random.randint(k1, (batch,), 0, real.shape[0])]
        eps = jax.random.normal(k2, (batch, latent_dim))
        return update(carry, (x, eps))

    (params, _), _ = scan_run(step, (params, tx.init(params)), length=steps)
    return params["dec"]


def _sample(params, key, *, arch, channels, latent_dim, n):
    """(images [n, 8, 8], penultimate activations [n, 4, 4, C]) of u ~ N(0, I)."""
    dec = Decoder(channels, arch)
    u = jax.random.normal(key, (n, latent_dim))
    return dec.apply(params, u), dec.apply(params, u, method=Decoder.penult)


def _invert(last_params, anchor, xs, alpha, *, iters, eps):
    """FLIPAD features ẑ(x) for a batch ``xs: [n, 8, 8]`` → ``[n, 4, 4, C]``."""
    layer = LastLayer()

    def last_layer(z):  # ψ(z) = W ∗ z + b, one map [4, 4, C] → one image [8, 8]
        return layer.apply(last_params, z[None])[0, ..., 0]

    bias = last_layer(jnp.zeros_like(anchor))

    def apply_w(z):
        return last_layer(z) - bias

    apply_wt = attribution.linear_adjoint(apply_w, anchor)
    # One step size 1/(1.01 L) for all queries (L = ‖W‖²_op by power iteration).
    step = 1.0 / (1.01 * attribution.lipschitz_constant(apply_w, apply_wt, anchor.shape))
    return jax.vmap(
        lambda x: attribution.final_layer_inversion(
            last_layer, x, anchor, alpha=alpha, num_iters=iters, eps=eps, step=step
        )
    )(xs)


def _deep_sad(
    key, train_x, labels, std_weights, test_x, *, features, steps, optimizer, eta, std_eps
):
    """Standardise the features, fit Deep SAD full-batch, score ``test_x``.

    ``optimizer``: the optimiser's config entry as ``(key, value)`` pairs (static).

    ``std_weights: [n]`` selects the rows whose mean and std standardise the features,
    (x − μ)/(σ + ``std_eps``); all zeros = no standardisation. As the reference pipeline: FLIPAD
    features use G's training samples, DCT features all training data, raw pixels none.
    """
    w = std_weights[:, None]
    count = jnp.maximum(jnp.sum(w), 2.0)
    mu = jnp.sum(w * train_x, axis=0, keepdims=True) / count
    sd = jnp.sqrt(jnp.sum(w * (train_x - mu) ** 2, axis=0, keepdims=True) / (count - 1.0))
    use = jnp.sum(w) > 0
    tr = jnp.where(use, (train_x - mu) / (sd + std_eps), train_x)
    te = jnp.where(use, (test_x - mu) / (sd + std_eps), test_x)
    net = attribution.DeepSADNet(features)
    params = net.init(key, tr[:2])
    center = attribution.deep_sad_center(net.apply(params, tr))
    tx = make_optimizer(dict(optimizer))
    step = optimizer_step(
        lambda p, _: attribution.deep_sad_loss(net.apply(p, tr), center, labels, eta=eta), tx
    )

    (params, _), _ = scan_run(step, (params, tx.init(params)), length=steps)
    return attribution.deep_sad_score(net.apply(params, te), center)


@functools.cache
def _programs(fast_compile: bool):
    """The jitted programs, built once per process (static hyper-parameters by name)."""

    def jit(fun, static):
        return jit_run(fun, fast_compile=fast_compile, static_argnames=static)

    return {
        "fit": jit(_fit_vae, ("arch", "channels", "latent_dim", "steps", "optimizer", "batch")),
        "sample": jit(_sample, ("arch", "channels", "latent_dim", "n")),
        "invert": jit(_invert, ("iters", "eps")),
        "sad": jit(_deep_sad, ("features", "steps", "optimizer")),
        "dct": jax.jit(attribution.log_dct),
    }


def _static(spec: ml_collections.ConfigDict) -> tuple:
    """An optimiser's config entry as hashable ``(key, value)`` pairs, for a static argument."""
    return tuple(sorted(spec.to_dict().items()))


def _category(target: str, outsider: str) -> str:
    if outsider == "real":
        return "real"
    return "same_arch" if target[0] == outsider[0] else "other_arch"


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    """One seed: fits the three generators (saved as the checkpoint of step ``gen_steps`` in
    ``workdir``), then for each target: FLIPAD, RawPAD and DCTPAD detectors and their AUCs."""
    prog = _programs(bool(config.fast_compile))
    seed = config.seed
    rng = np.random.default_rng(seed)
    digits = load_digits().images.astype(np.float32)  # [1797, 8, 8], values 0..16
    real = _from_pixels(_to_pixels(digits / 8.0 - 1.0))  # 8-bit images in [−1, 1]
    perm = rng.permutation(len(real))
    real_train, real_test = real[perm[: len(real) // 2]], real[perm[len(real) // 2 :]]
    n_tr, n_te, dim = config.num_train, config.num_test, config.latent_dim

    key = jax.random.key(seed)
    k_fit, k_sample, k_sad = jax.random.split(key, 3)
    arch = {"a1": "a", "a2": "a", "b": "b"}
    gen, samples = {}, {}
    for i, name in enumerate(GENERATORS):
        gen[name] = prog["fit"](
            jax.random.fold_in(k_fit, i),
            jnp.asarray(real_train),
            arch=arch[name],
            channels=config.channels,
            latent_dim=dim,
            steps=config.gen_steps,
            optimizer=_static(config.gen_optimizer),
            batch=config.gen_batch,
            sigma=config.vae_sigma,
        )
        # G's training samples, its held-out samples, and ``anchor_draws`` for the anchor z̄;
        # samples are stored as 8-bit images, as the reference saves them (PNG).
        images, acts = prog["sample"](
            gen[name],
            jax.random.fold_in(k_sample, i),
            arch=arch[name],
            channels=config.channels,
            latent_dim=dim,
            n=n_tr + n_te + config.anchor_draws,
        )
        images = _from_pixels(_to_pixels(np.asarray(images[: n_tr + n_te])))
        samples[name] = {
            "train": images[:n_tr],
            "test": images[n_tr:],
            "anchor": jnp.mean(acts[n_tr + n_te :], axis=0),
        }

    # Perturbation as the reference's GaussianNoise: N(0, (σ·255)²) added to the 8-bit
    # levels, rounded, clipped to [0, 255]. "_noisy": the detector is trained on clean
    # images and tested on noisy ones (σ = query_noise); "_immune": trained and tested on
    # noisy images (σ = immune_noise; the reference's --immunization, its Table 3 setting).
    noise_rng = np.random.default_rng(seed + 1)

    def perturb(images, std):
        return _from_pixels(_to_pixels(images + 2.0 * std * noise_rng.normal(size=images.shape)))

    checkpoints = Checkpointer(workdir)
    if checkpoints.latest_step() is None:
        checkpoints.save(config.gen_steps, gen)
    checkpoints.close()

    clean = {"real": real_test[:n_te], **{g: samples[g]["test"] for g in GENERATORS}}
    queries = {
        "": clean,
        "_noisy": {k: perturb(v, config.query_noise) for k, v in clean.items()},
        "_immune": {k: perturb(v, config.immune_noise) for k, v in clean.items()},
    }
    labels = jnp.concatenate([jnp.ones(n_tr, jnp.int32), -jnp.ones(n_tr, jnp.int32)])

    mesh = mesh_from_config(config)

    def invert(last, anchor, alpha, xs):
        return prog["invert"](
            last, anchor, xs, alpha, iters=config.lasso_iters, eps=config.tanh_eps
        )

    results: dict[str, float] = {}
    pooled: dict[str, list[float]] = {}
    for t_idx, target in enumerate(GENERATORS):
        outsiders = ["real", *(g for g in GENERATORS if g != target)]
        order = [target, *outsiders]
        train_img = np.concatenate([samples[target]["train"], real_train[:n_tr]])
        test_img = {tag: np.concatenate([q[s] for s in order]) for tag, q in queries.items()}
        last = {"params": gen[target]["params"]["last"]}
        anchor = samples[target]["anchor"]
        # All queries of this target in one batch: clean and noisy training images, then
        # the clean, the noisy and the immunization test sets.
        all_img = jnp.asarray(
            np.concatenate(
                [
                    train_img,
                    perturb(train_img, config.immune_noise),
                    test_img[""],
                    test_img["_noisy"],
                    test_img["_immune"],
                ]
            )
        )
        n_train_img = len(train_img)
        std_weights = {
            "target": (labels == 1).astype(jnp.float32),
            "all": jnp.ones(n_train_img),
            "none": jnp.zeros(n_train_img),
        }
        for m_idx, method in enumerate(METHODS):
            if method == "flipad":
                feats = jnp.asarray(
                    over_queries(  # the queries split over ``data``
                        invert, (last, anchor, config.alpha), all_img, mesh
                    )
                )
            elif method == "dctpad":
                feats = prog["dct"](all_img)
            else:
                feats = all_img
            feats = feats.reshape(feats.shape[0], -1)
            train_clean, train_noisy, test_x = jnp.split(feats, [n_train_img, 2 * n_train_img])
            # Two detectors per (target, method): trained on clean images (scored on the
            # clean and the noisy test set) and on noisy ones (on the immunization set).
            for immune, train_x in ((False, train_clean), (True, train_noisy)):
                scores = np.asarray(
                    prog["sad"](
                        jax.random.fold_in(k_sad, 10 * t_idx + m_idx),
                        train_x,
                        labels,
                        std_weights[STANDARDISE[method]],
                        test_x,
                        features=tuple(config.sad_features),
                        steps=config.sad_steps,
                        optimizer=_static(config.sad_optimizer),
                        eta=config.eta,
                        std_eps=config.std_eps,
                    )
                )
                blocks = dict(zip(("", "_noisy", "_immune"), np.split(scores, 3), strict=True))
                blocks = (
                    {"_immune": blocks["_immune"]}
                    if immune
                    else {"": blocks[""], "_noisy": blocks["_noisy"]}
                )
                for tag, block in blocks.items():
                    by_src = dict(zip(order, np.split(block, len(order)), strict=True))
                    for out in outsiders:
                        y = np.r_[np.zeros(n_te), np.ones(n_te)]
                        auc = float(roc_auc_score(y, np.r_[by_src[target], by_src[out]]))
                        results[f"{method}{tag}_auc_{target}_vs_{out}"] = auc
                        for group in ("mean", _category(target, out)):
                            pooled.setdefault(f"{method}{tag}_auc_{group}", []).append(auc)
    results.update({k: float(np.mean(v)) for k, v in pooled.items()})
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the FISTA iterations of :func:`_invert` on a target's batch of
    queries (clean and noisy training images, the clean, noisy and immunization test sets),
    the queries split over ``data`` (padded to it); one call, the loop at its trip count. A run is
    a (seed, target generator); the VAE fits and Deep SAD are not planned."""
    count = 4 * config.num_train + 3 * (len(GENERATORS) + 1) * config.num_test
    queries = padded_runs(count, mesh, DATA_AXIS)
    c = config.channels
    last = jax.eval_shape(lambda: LastLayer().init(jax.random.key(0), jnp.zeros((1, 4, 4, c))))
    rep = replicated(mesh)
    return PlanSpec(
        fn=lambda p, a, xs, alpha: _invert(
            p, a, xs, alpha, iters=config.lasso_iters, eps=config.tanh_eps
        ),
        abstract_args=(
            abstract(last, rep),
            abstract(jax.ShapeDtypeStruct((4, 4, c), jnp.float32), rep),
            abstract(jax.ShapeDtypeStruct((queries, 8, 8), jnp.float32), batch_sharding(mesh)),
            abstract(jax.ShapeDtypeStruct((), jnp.float32), rep),
        ),
        steps_per_run=1,
        num_runs=len(GENERATORS) * config.num_seeds,
        note=f"{config.lasso_iters} FISTA iterations of the inversion of a target's {count} "
        f"queries ({queries} with padding, over data); VAE fits and Deep SAD not planned",
    )
