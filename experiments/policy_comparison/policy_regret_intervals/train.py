"""Replications of the synthetic policy-comparison study, batched over seeds and split over
the ``runs`` axis of ``config.mesh`` (``jaxlab.train.batch_runs``).

Every finished grid point (all replications) is kept by ``jaxlab.train.resumable`` as
``<workdir>/runs/<setting>_n<N>_lam<Λ>_beta<β>-<config digest>.npz`` and read back by a
rerun, so a killed run resumes at the next grid point with the same numbers. The finished
study (every grid point's arrays) is the run's final checkpoint (``<workdir>/checkpoints``,
:class:`jaxlab.train.Checkpointer`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.causal import policy as P
from jaxlab.train import Checkpointer, batch_runs, resumable, runs_sharding
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, mesh_from_config, replicated
from jaxlab.train.plan import PlanSpec, abstract

# ---------------------------------------------------------------------------------------
# Nuisances: logistic regression by Newton's method, cross-fitted (vmap over folds)
# ---------------------------------------------------------------------------------------


def _features(x, z, num_z):
    onehot = jax.nn.one_hot(z, num_z)[:, 1:]
    return jnp.concatenate([jnp.ones((x.shape[0], 1)), x, onehot], axis=1)


def _fit_logistic(feats, target, weight, steps, ridge):
    p = feats.shape[1]

    def newton(_, beta):
        prob = jax.nn.sigmoid(feats @ beta)
        grad = feats.T @ (weight * (prob - target)) + ridge * beta
        hess = (feats * (weight * prob * (1 - prob))[:, None]).T @ feats + ridge * jnp.eye(p)
        return beta - jnp.linalg.solve(hess, grad)

    return jax.lax.fori_loop(0, steps, newton, jnp.zeros(p))


def _cross_fit(key, x, z, d, y, num_z, folds, steps, ridge):
    """Cross-fitted ê(x, z), μ̂₁(x, z) at each unit's level and at every level ``[|Z|, N]``."""
    n = x.shape[0]
    fold = jax.random.permutation(key, n) % folds
    feats = _features(x, z, num_z)
    df, yf = d.astype(jnp.float32), y.astype(jnp.float32)

    def fit(k):
        train = (fold != k).astype(jnp.float32)
        return (
            _fit_logistic(feats, df, train, steps, ridge),
            _fit_logistic(feats, yf, train * df, steps, ridge),
        )

    beta_e, beta_m = jax.vmap(fit)(jnp.arange(folds))  # [K, p]
    own_e, own_m = beta_e[fold], beta_m[fold]  # each unit's held-out model

    def predict(zz):
        f = _features(x, jnp.full_like(z, zz), num_z)
        return (
            jax.nn.sigmoid(jnp.sum(f * own_e, axis=1)),
            jax.nn.sigmoid(jnp.sum(f * own_m, axis=1)),
        )

    e_z, mu1_z = jax.vmap(predict)(jnp.arange(num_z))
    take = jnp.arange(n)
    return e_z[z, take], mu1_z[z, take], e_z, mu1_z


# ---------------------------------------------------------------------------------------
# One replication: intervals for every metric and estimator
# ---------------------------------------------------------------------------------------


def _intervals(v1, p0, lo, hi):
    out = {}
    for m in P.METRICS:
        out[m] = (
            P.regret_interval(v1, p0, lo, hi, m, "delta"),
            P.regret_interval(v1, p0, lo, hi, m, "standard"),
        )
    return out


def _replication(key, lam, beta, *, num_samples, setting, num_z, folds, steps, ridge):
    """One replication at one grid point: ``(intervals, true regrets)``; ``res[estimator]
    [metric] = (delta interval [2], standard interval [2])``, ``truth[metric]`` a scalar."""
    k_data, k_fold = jax.random.split(key)
    dat = P.simulate_policy_data(k_data, num_samples, setting, lam, beta, num_z)
    t, d, y = dat["t"], dat["d"], dat["y"]
    truth = {m: P.regret(dat["v_true"], m) for m in P.METRICS}
    res = {}
    # oracle nuisances and oracle identified cells
    v1, p0 = P.identified_cells(t, dat["e"], dat["mu1"])
    if setting == "msm":
        lo, hi = P.mu0_bounds_msm(dat["mu1"], lam)
    else:
        lo, hi = P.mu0_bounds_iv(dat["mu1_z"], dat["e_z"], dat["mu1"], dat["e"])
    res["oracle"] = _intervals(v1, p0, *P.unobserved_cell_bounds(t, dat["e"], lo, hi))
    # estimated nuisances; identified cells from counts
    e_hat, mu1_hat, e_z, mu1_z = _cross_fit(
        k_fold, dat["x"], dat["z"], d, y, num_z, folds, steps, ridge
    )
    v_emp = P.cell_table(y, t, d)
    v1_emp = v_emp[:, :, 1]
    p0_emp = v_emp[:, :, 0].sum(axis=0)
    if setting == "msm":
        lo, hi = P.mu0_bounds_msm(mu1_hat, lam)
        res["plugin"] = _intervals(v1_emp, p0_emp, *P.unobserved_cell_bounds(t, e_hat, lo, hi))
        res["dr"] = _intervals(
            v1_emp, p0_emp, *P.unobserved_cell_bounds_dr(t, d, y, e_hat, mu1_hat, lam)
        )
    else:
        lo, hi = P.mu0_bounds_iv(mu1_z, e_z, mu1_hat, e_hat)
        res["plugin"] = _intervals(v1_emp, p0_emp, *P.unobserved_cell_bounds(t, e_hat, lo, hi))
    return res, truth


# ---------------------------------------------------------------------------------------
# The study
# ---------------------------------------------------------------------------------------


def _one_replication(config: ml_collections.ConfigDict, num_samples: int, setting: str):
    """:func:`_replication` at one sample size and setting, ``(key, lam, beta) -> ...``."""
    return functools.partial(
        _replication,
        num_samples=num_samples,
        setting=setting,
        num_z=config.num_z,
        folds=config.folds,
        steps=config.newton_steps,
        ridge=config.ridge,
    )


def _flat(res, truth) -> dict[str, jax.Array]:
    """The flat arrays ``{"est/metric/delta|std|truth": [num_seeds, ...]}`` of one grid
    point's ``(intervals, true regrets)``."""
    arrays = {}
    for est, per_metric in res.items():
        for m, (delta, std) in per_metric.items():
            arrays.update(
                {f"{est}/{m}/delta": delta, f"{est}/{m}/std": std, f"{est}/{m}/truth": truth[m]}
            )
    return arrays


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    keys = jax.random.split(jax.random.key(config.seed), config.num_seeds)
    rows = []  # (setting, n, lam, beta, estimator, metric, arrays)
    mesh = mesh_from_config(config, RUNS_AXIS)
    programs = {}  # (setting, n) -> the batched replications (one compile each)
    study = {}  # grid point -> its arrays

    def run(setting, n, lam, beta):
        def compute():
            if (setting, n) not in programs:
                programs[setting, n] = batch_runs(
                    _one_replication(config, n, setting), in_axes=(0, None, None), mesh=mesh
                )
            return _flat(*programs[setting, n](keys, jnp.float32(lam), jnp.float32(beta)))

        point = f"{setting}_n{n}_lam{lam:g}_beta{beta:g}"
        arrays = study[point] = resumable(workdir, point, config, compute)
        for name in arrays:
            est, m, kind = name.split("/")
            if kind == "delta":
                rows.append(
                    dict(
                        setting=setting,
                        n=n,
                        lam=lam,
                        beta=beta,
                        est=est,
                        metric=m,
                        delta=arrays[name],
                        std=arrays[f"{est}/{m}/std"],
                        truth=arrays[f"{est}/{m}/truth"],
                    )
                )

    # pre-flight: the instrument strata of one replication are populated
    probe = P.simulate_policy_data(
        keys[0], config.iv_samples, "iv", 1.0, config.iv_strengths[0], config.num_z
    )
    P.check_instrument_strata(np.asarray(probe["z"]), np.asarray(probe["d"]), config.num_z)

    for n in config.sample_sizes:
        for lam in config.lambdas:
            run("msm", n, lam, 0.0)
    for beta in config.iv_strengths:
        run("iv", config.iv_samples, 1.0, beta)
    # The finished study as the run's final checkpoint: per grid point (in grid order) its
    # arrays in the order of their sorted names (names hold "/" and ".", not orbax keys).
    checkpointer = Checkpointer(workdir)
    checkpointer.save(len(study), [[a[k] for k in sorted(a)] for a in study.values()])
    checkpointer.wait()

    def width(r, kind):
        a = r[kind]
        return a[:, 1] - a[:, 0]

    def covers(r, kind):
        a = r[kind]
        return (a[:, 0] - 1e-6 <= r["truth"]) & (r["truth"] <= a[:, 1] + 1e-6)

    def excludes_zero(r, kind):
        a = r[kind]
        return (a[:, 0] > 0) | (a[:, 1] < 0)

    def mean_width(pred, kind="delta"):
        sel = [width(r, kind) for r in rows if pred(r)]
        return np.mean(np.stack(sel), axis=0).tolist()  # per replication, over metrics

    def per_replication(flags):
        """Share of the cases (rows) that hold, per replication: ``[num_seeds]``."""
        return np.mean(np.stack(flags).astype(float), axis=0).tolist()

    out: dict = {}
    out["frac_delta_not_wider"] = per_replication(
        [width(r, "delta") <= width(r, "std") + 1e-6 for r in rows]
    )
    ref = lambda r, lam: (
        r["setting"] == "msm"
        and r["n"] == config.reference_n  # noqa: E731
        and r["lam"] == lam
        and r["est"] == "oracle"
    )
    out["width_delta"] = mean_width(lambda r: ref(r, max(config.lambdas)), "delta")
    out["width_standard"] = mean_width(lambda r: ref(r, max(config.lambdas)), "std")
    for lam in config.lambdas:
        key = "width_delta_lambda_" + f"{lam:g}".replace(".", "p")
        out[key] = mean_width(lambda r, lam=lam: ref(r, lam), "delta")
    out["width_delta_lambda_1p4"] = out.get(
        "width_delta_lambda_1p4", mean_width(lambda r: ref(r, 1.4), "delta")
    )
    out["width_delta_lambda_2"] = mean_width(lambda r: ref(r, 2.0), "delta")
    iv = lambda r, b: r["setting"] == "iv" and r["beta"] == b and r["est"] == "oracle"  # noqa
    out["width_delta_iv_weak"] = mean_width(lambda r: iv(r, min(config.iv_strengths)))
    out["width_delta_iv_strong"] = mean_width(lambda r: iv(r, max(config.iv_strengths)))
    out["width_standard_iv_strong"] = mean_width(lambda r: iv(r, max(config.iv_strengths)), "std")
    oracle = [r for r in rows if r["est"] == "oracle"]
    out["oracle_coverage_delta"] = per_replication([covers(r, "delta") for r in oracle])
    out["oracle_coverage_standard"] = per_replication([covers(r, "std") for r in oracle])
    for est in ("plugin", "dr"):
        sel = [
            r
            for r in rows
            if r["est"] == est
            and r["setting"] == "msm"
            and r["n"] == config.coverage_n
            and r["lam"] > 1.0
        ]
        per_rep = np.mean(np.stack([covers(r, "delta") for r in sel]), axis=0)
        out[f"{est}_coverage_delta"] = per_rep.tolist()
        for n in config.sample_sizes:
            sel = [
                r
                for r in rows
                if r["est"] == est and r["setting"] == "msm" and r["n"] == n and r["lam"] > 1.0
            ]
            out[f"{est}_coverage_delta_n{n}"] = float(
                np.concatenate([covers(r, "delta") for r in sel]).mean()
            )
    only_d = np.stack([excludes_zero(r, "delta") & ~excludes_zero(r, "std") for r in rows])
    only_s = np.stack([excludes_zero(r, "std") & ~excludes_zero(r, "delta") for r in rows])
    out["frac_only_delta_excludes_zero"] = per_replication(only_d)
    out["frac_only_standard_excludes_zero"] = per_replication(only_s)
    out["count_only_delta_excludes_zero"] = float(only_d.sum())
    out["num_cases"] = float(only_d.size)
    for m in P.METRICS:
        sel = [r for r in rows if r["metric"] == m]
        out[f"count_only_delta_excludes_zero_{m}"] = float(
            sum((excludes_zero(r, "delta") & ~excludes_zero(r, "std")).sum() for r in sel)
        )
    return out


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: :func:`_replication` of every replication (vmapped, as
    ``batch_runs`` runs them) at the largest sample size (MSM: oracle, plug-in and DR
    intervals), replications split over ``runs``.

    A call is one grid point of every replication (a run = a replication at one grid
    point, one call each), its Newton loops counted at their trip counts; smaller grid
    points and the IV cells cost less and are counted as this one (an upper bound for
    them).
    """
    runs = mesh.shape.get(RUNS_AXIS, 1)
    lanes = padded_runs(config.num_seeds, mesh)
    split = runs_sharding(mesh)
    rep = replicated(mesh)
    keys = abstract(jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes)), split)
    scalar = jax.ShapeDtypeStruct((), jnp.float32, sharding=rep)
    n = max(config.sample_sizes)

    spmd = RUNS_AXIS if runs > 1 else None
    fn = jax.vmap(_one_replication(config, n, "msm"), in_axes=(0, None, None), spmd_axis_name=spmd)

    points = len(config.sample_sizes) * len(config.lambdas) + len(config.iv_strengths)
    return PlanSpec(
        fn=fn,
        abstract_args=(keys, scalar, scalar),
        steps_per_run=1,
        num_runs=points * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"every replication's simulation, cross-fitted logistic nuisances and intervals "
        f"at N = {n} (MSM)",
    )
