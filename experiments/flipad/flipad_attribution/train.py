"""Fit three generators, invert their last layer, train Deep SAD on features, score AUCs."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score

from jaxlab import attribution
from jaxlab.train import Checkpointer, make_optimizer, mesh_from_config, optimizer_step, scan_run
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import DATA_AXIS, batch_sharding, replicated
from jaxlab.train.plan import PlanSpec, abstract
from jaxlab_experiments.flipad.queries import over_queries


class Generator(nn.Module):
    """u ↦ tanh(W z + b), z = the penultimate activation (``penultimate`` wide)."""

    out_dim: int
    penultimate: int
    arch: str  # "a": one hidden tanh layer; "b": two hidden ReLU layers
    hidden: int  # width of architecture b's first hidden layer

    def setup(self):
        if self.arch == "a":
            self.body = nn.Sequential([nn.Dense(self.penultimate), nn.tanh])
        else:
            self.body = nn.Sequential(
                [nn.Dense(self.hidden), nn.relu, nn.Dense(self.penultimate), nn.relu]
            )
        self.last = nn.Dense(self.out_dim)

    def penult(self, u):
        return self.body(u)

    def __call__(self, u):
        return jnp.tanh(self.last(self.body(u)))


def _mmd(x, y, scales):
    def k(a, b):
        d2 = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
        return sum(jnp.exp(-d2 / (2 * s**2)) for s in scales)

    return jnp.mean(k(x, x)) + jnp.mean(k(y, y)) - 2 * jnp.mean(k(x, y))


def _fit_generator(model, real, key, config):
    tx = make_optimizer(config.gen_optimizer)
    params = model.init(key, jnp.zeros((1, config.latent_dim)))
    update = optimizer_step(
        lambda p, batch: _mmd(model.apply(p, batch[0]), batch[1], config.mmd_scales), tx
    )

    def step(carry, t):
        k1, k2 = jax.random.split(jax.random.fold_in(key, t))
        u = jax.random.normal(k1, (config.gen_batch, config.latent_dim))
        batch = real[jax.random.randint(k2, (config.gen_batch,), 0, real.shape[0])]
        return update(carry, (u, batch))

    (params, _), _ = jax.jit(lambda c: scan_run(step, c, length=config.gen_steps))(
        (params, tx.init(params))
    )
    return params


def _deep_sad(train_x, train_labels, test_x, key, config):
    """Standardise on the training features, fit Deep SAD, return test scores."""
    mu, sd = train_x.mean(0, keepdims=True), train_x.std(0, keepdims=True) + 1e-6
    tr, te = (train_x - mu) / sd, (test_x - mu) / sd
    net = attribution.DeepSADNet(tuple(config.sad_features))
    params = net.init(key, tr[:2])
    center = attribution.deep_sad_center(net.apply(params, tr))
    tx = make_optimizer(config.sad_optimizer)
    step = optimizer_step(
        lambda p, _: attribution.deep_sad_loss(
            net.apply(p, tr), center, train_labels, eta=config.eta
        ),
        tx,
    )

    (params, _), _ = jax.jit(lambda c: scan_run(step, c, length=config.sad_steps))(
        (params, tx.init(params))
    )
    return np.asarray(attribution.deep_sad_score(net.apply(params, te), center))


def _invert(kernel, bias, anchor, xs, config):
    """FLIPAD's features of the queries ``xs [n, d]``: the anchored-lasso reconstruction
    ``[n, p]`` of G's penultimate activation through its last layer ``tanh(z @ K + b)``."""

    def last_layer(z):
        return z @ kernel + bias

    return jax.vmap(
        lambda x: attribution.final_layer_inversion(
            last_layer,
            x,
            anchor,
            alpha=config.alpha,
            num_iters=config.lasso_iters,
            eps=config.tanh_eps,
        )
    )(xs)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    """One seed: fits G, G' and H (saved as the checkpoint of step ``gen_steps`` in
    ``workdir``), inverts the queries, trains Deep SAD on FLIPAD and RawPAD features, AUCs."""
    seed = config.seed
    rng = np.random.default_rng(seed)
    data = load_breast_cancer().data
    data = (data - data.mean(0)) / data.std(0)
    real = np.tanh(data / 2).astype(np.float32)
    perm = rng.permutation(len(real))
    real_train, real_test = real[perm[: len(real) // 2]], real[perm[len(real) // 2 :]]
    d = real.shape[1]

    key = jax.random.key(seed)
    k_g, k_g2, k_h, k_u, k_sad, k_noise = jax.random.split(key, 6)
    gen_a = Generator(d, config.penultimate, "a", config.other_arch_hidden)
    gen_b = Generator(d, config.penultimate, "b", config.other_arch_hidden)
    params_g = _fit_generator(gen_a, jnp.asarray(real_train), k_g, config)
    params_g2 = _fit_generator(gen_a, jnp.asarray(real_train), k_g2, config)
    params_h = _fit_generator(gen_b, jnp.asarray(real_train), k_h, config)
    checkpoints = Checkpointer(workdir)
    if checkpoints.latest_step() is None:
        checkpoints.save(config.gen_steps, {"g": params_g, "g2": params_g2, "h": params_h})
    checkpoints.close()

    def sample(model, params, k, n):
        return np.asarray(model.apply(params, jax.random.normal(k, (n, config.latent_dim))))

    ks = jax.random.split(k_u, 5)
    n_tr, n_te = config.num_train, config.num_test
    g_train = sample(gen_a, params_g, ks[0], n_tr)
    g_test = sample(gen_a, params_g, ks[1], n_te)
    outsiders = {
        "real": real_test[:n_te],
        "same_arch": sample(gen_a, params_g2, ks[2], n_te),
        "other_arch": sample(gen_b, params_h, ks[3], n_te),
    }
    # The anchor z̄: G's mean penultimate activation over its own samples.
    draws = jax.random.normal(ks[4], (config.anchor_draws, config.latent_dim))
    anchor = jnp.mean(gen_a.apply(params_g, draws, method=Generator.penult), axis=0)
    kernel = params_g["params"]["last"]["kernel"]  # [p, d]: x = tanh(z @ K + b)
    bias = params_g["params"]["last"]["bias"]
    invert_program = jax.jit(lambda k, b, a, xs: _invert(k, b, a, xs, config))
    mesh = mesh_from_config(config)

    def invert(xs):  # the queries split over the mesh's ``data`` axis
        return over_queries(invert_program, (kernel, bias, anchor), xs, mesh)

    train_x = np.concatenate([g_train, real_train])
    labels = jnp.concatenate(
        [jnp.zeros(len(g_train), jnp.int32), -jnp.ones(len(real_train), jnp.int32)]
    )
    results: dict[str, float] = {}
    for noisy in (False, True):
        tag = "_noisy" if noisy else ""
        queries = {"g": g_test, **outsiders}
        if noisy:
            rs = np.random.default_rng(seed + 1)
            queries = {
                k: np.clip(
                    v + config.query_noise * rs.normal(size=v.shape),
                    -1 + config.tanh_eps,
                    1 - config.tanh_eps,
                ).astype(np.float32)
                for k, v in queries.items()
            }
        names = list(queries)
        test_x = np.concatenate([queries[k] for k in names])
        feats = {"flipad": (invert(train_x), invert(test_x)), "rawpad": (train_x, test_x)}
        for method, (ftr, fte) in feats.items():
            scores = _deep_sad(jnp.asarray(ftr), labels, jnp.asarray(fte), k_sad, config)
            split = np.cumsum([len(queries[k]) for k in names])[:-1]
            by_name = dict(zip(names, np.split(scores, split), strict=True))
            aucs = []
            for out in outsiders:
                y = np.r_[np.zeros(len(by_name["g"])), np.ones(len(by_name[out]))]
                auc = float(roc_auc_score(y, np.r_[by_name["g"], by_name[out]]))
                results[f"{method}{tag}_auc_{out}"] = auc
                aucs.append(auc)
            results[f"{method}{tag}_auc_mean"] = float(np.mean(aucs))
    return results


#: Breast-cancer rows and features (scikit-learn), for plans made without loading it.
BREAST_CANCER = (569, 30)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the FISTA iterations of the lasso inversion of a seed's queries
    (Deep SAD's training set and the four test classes, as one batch), the queries split
    over ``data`` (padded to it); one call, the loop at its trip count. A run is a seed's clean or
    noisy pass; the generator fits and Deep SAD (smaller per step) are not planned."""
    rows, d = BREAST_CANCER
    count = config.num_train + rows // 2 + 4 * config.num_test
    queries = padded_runs(count, mesh, DATA_AXIS)
    rep = replicated(mesh)
    f32 = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)  # noqa: E731
    return PlanSpec(
        fn=lambda k, b, a, xs: _invert(k, b, a, xs, config),
        abstract_args=(
            *abstract((f32(config.penultimate, d), f32(d), f32(config.penultimate)), rep),
            abstract(f32(queries, d), batch_sharding(mesh)),
        ),
        steps_per_run=1,
        num_runs=2 * config.num_seeds,
        note=f"{config.lasso_iters} FISTA iterations of the inversion of {count} queries "
        f"({queries} with padding, over data); generator fits and Deep SAD not planned",
    )
