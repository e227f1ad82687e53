"""Policy-comparison bounds against brute force, closed forms and the simulated truth."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.causal import policy as P


def _random_problem(rng):
    """Random identified cells and a random box on the unobserved ones."""
    p = rng.dirichlet(np.ones(6))
    v1 = p[:4].reshape(2, 2)  # v(y, t, 1)
    p_t_d0 = p[4:]
    lo = rng.uniform(0, 1, 2) * p_t_d0
    hi = lo + rng.uniform(0, 1, 2) * (p_t_d0 - lo)
    return v1, p_t_d0, lo, hi


def _grid_metrics(v1, p_t_d0, lo, hi, metric, k=41):
    out = []
    for a, b in itertools.product(np.linspace(lo[0], hi[0], k), np.linspace(lo[1], hi[1], k)):
        v = np.zeros((2, 2, 2))
        v[:, :, 1] = v1
        v[1, 0, 0], v[1, 1, 0] = a, b
        v[0, 0, 0], v[0, 1, 0] = p_t_d0[0] - a, p_t_d0[1] - b
        q_t = v.sum(axis=2).T  # [a, y]
        q_d = v.sum(axis=1).T
        f = {
            "tpr": lambda q: q[1, 1] / (q[0, 1] + q[1, 1]),
            "fpr": lambda q: q[1, 0] / (q[0, 0] + q[1, 0]),
            "ppv": lambda q: q[1, 1] / (q[1, 0] + q[1, 1]),
            "npv": lambda q: q[0, 0] / (q[0, 0] + q[0, 1]),
            "utility": lambda q: q[0, 0] + q[1, 1],
        }[metric]
        out.append((f(q_t), f(q_d)))
    return np.array(out)


@pytest.mark.parametrize("metric", P.METRICS)
def test_intervals_match_brute_force_grid(metric):
    rng = np.random.default_rng(0)
    for _ in range(5):
        v1, p0, lo, hi = _random_problem(rng)
        grid = _grid_metrics(v1, p0, lo, hi, metric)
        r = grid[:, 0] - grid[:, 1]
        delta = np.asarray(P.regret_interval(v1, p0, lo, hi, metric, "delta"))
        std = np.asarray(P.regret_interval(v1, p0, lo, hi, metric, "standard"))
        np.testing.assert_allclose(delta, [r.min(), r.max()], atol=1e-5)
        np.testing.assert_allclose(
            std,
            [grid[:, 0].min() - grid[:, 1].max(), grid[:, 0].max() - grid[:, 1].min()],
            atol=1e-5,
        )


def test_delta_never_wider_than_standard_on_random_tables():
    rng = np.random.default_rng(1)
    problems = [_random_problem(rng) for _ in range(200)]
    batch = [jnp.asarray(np.stack(x)) for x in zip(*problems, strict=True)]
    for metric in P.METRICS:

        def widths(v1, p0, lo, hi, metric=metric):
            d = P.regret_interval(v1, p0, lo, hi, metric, "delta")
            s = P.regret_interval(v1, p0, lo, hi, metric, "standard")
            return d[1] - d[0], s[1] - s[0]

        wd, ws = jax.jit(jax.vmap(widths))(*batch)
        assert bool(jnp.all(wd <= ws + 1e-6)), metric


def test_utility_delta_matches_closed_form():
    # R = Σ_y Δ_y [v(y,1,0) − v(y,0,1)], linear in v(1,1,0) with v(0,1,0) = P(T=1,D=0) − v(1,1,0)
    rng = np.random.default_rng(2)
    u = np.array([[1.0, -0.5], [-2.0, 3.0]])  # u[a, y]
    for _ in range(10):
        v1, p0, lo, hi = _random_problem(rng)
        delta = [u[1, y] - u[0, y] for y in (0, 1)]

        def r(b, v1=v1, p0=p0, delta=delta):
            return delta[1] * (b - v1[1, 0]) + delta[0] * ((p0[1] - b) - v1[0, 0])

        ends = sorted([r(lo[1]), r(hi[1])])
        got = P.regret_interval(v1, p0, lo, hi, "utility", "delta", utility=u)
        np.testing.assert_allclose(got, ends, atol=1e-6)


def test_regret_and_cells_against_numpy():
    rng = np.random.default_rng(3)
    y, t, d = (rng.integers(0, 2, 500) for _ in range(3))
    v = np.asarray(P.cell_table(y, t, d))
    for yy, tt, dd in itertools.product((0, 1), repeat=3):
        assert v[yy, tt, dd] == pytest.approx(np.mean((y == yy) & (t == tt) & (d == dd)))
    tpr_t = np.mean(t[y == 1]) - np.mean(d[y == 1])
    assert float(P.regret(v, "tpr")) == pytest.approx(tpr_t, abs=1e-6)
    acc = np.mean(t == y) - np.mean(d == y)
    assert float(P.regret(v, "utility")) == pytest.approx(acc, abs=1e-6)


@pytest.mark.parametrize(
    "setting,lam,beta", [("msm", 1.4, 0.0), ("msm", 2.0, 0.0), ("iv", 1.0, 2.0)]
)
def test_oracle_intervals_contain_true_regret(setting, lam, beta):
    dat = P.simulate_policy_data(jax.random.key(0), 3000, setting, lam, beta)
    v1, p0 = P.identified_cells(dat["t"], dat["e"], dat["mu1"])
    if setting == "msm":
        lo, hi = P.mu0_bounds_msm(dat["mu1"], lam)
    else:
        lo, hi = P.mu0_bounds_iv(dat["mu1_z"], dat["e_z"], dat["mu1"], dat["e"])
    cl, ch = P.unobserved_cell_bounds(dat["t"], dat["e"], lo, hi)
    true_b = dat["v_true"][1, :, 0]
    assert bool(jnp.all((cl <= true_b + 1e-6) & (true_b <= ch + 1e-6)))
    for metric in P.METRICS:
        r = float(P.regret(dat["v_true"], metric))
        for kind in ("delta", "standard"):
            lo_r, hi_r = np.asarray(P.regret_interval(v1, p0, cl, ch, metric, kind))
            assert lo_r - 1e-5 <= r <= hi_r + 1e-5, (metric, kind)


def test_no_confounding_collapses_to_the_truth():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        dat = P.simulate_policy_data(jax.random.key(1), 3000, "msm", 1.0)
        v1, p0 = P.identified_cells(dat["t"], dat["e"], dat["mu1"])
        cl, ch = P.unobserved_cell_bounds(dat["t"], dat["e"], *P.mu0_bounds_msm(dat["mu1"], 1.0))
        for metric in P.METRICS:
            np.testing.assert_allclose(
                P.regret_interval(v1, p0, cl, ch, metric),
                float(P.regret(dat["v_true"], metric)),
                atol=1e-5,
            )


def test_dr_cell_bounds_are_doubly_robust():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        # Correct propensity, wrong outcome model. Replacing D and Y by their conditional means
        # given X (E[D | x] = e, E[Y | x, D = 1] = μ₁) gives the DR estimator's expectation,
        # which must equal the target E[1{T=t}(1 − e) μ₁] (Λ = 1); the plug-in is biased.
        dat = P.simulate_policy_data(jax.random.key(2), 3000, "msm", 1.0)
        e, mu1 = dat["e"], dat["mu1"]
        wrong_mu1 = jnp.full_like(mu1, 0.5)
        truth = dat["v_true"][1, :, 0]
        lo, hi = P.unobserved_cell_bounds_dr(dat["t"], e, mu1, e, wrong_mu1, 1.0)
        np.testing.assert_allclose(lo, truth, atol=1e-5)
        np.testing.assert_allclose(hi, truth, atol=1e-5)
        plug, _ = P.unobserved_cell_bounds(dat["t"], e, wrong_mu1, wrong_mu1)
        assert float(jnp.max(jnp.abs(plug - truth))) > 0.01
        # and with both nuisances right, on the sampled D and Y, it is close to the truth
        lo, _ = P.unobserved_cell_bounds_dr(dat["t"], dat["d"], dat["y"], e, mu1, 1.0)
        np.testing.assert_allclose(lo, truth, atol=0.03)


def test_widths_shrink_with_lambda_and_instrument_strength():
    def width(setting, lam, beta):
        dat = P.simulate_policy_data(jax.random.key(3), 3000, setting, lam, beta)
        if setting == "msm":
            lo, hi = P.mu0_bounds_msm(dat["mu1"], lam)
        else:
            lo, hi = P.mu0_bounds_iv(dat["mu1_z"], dat["e_z"], dat["mu1"], dat["e"])
        cl, ch = P.unobserved_cell_bounds(dat["t"], dat["e"], lo, hi)
        return float(jnp.sum(ch - cl))

    assert width("msm", 1.4, 0.0) < width("msm", 2.0, 0.0)
    assert width("iv", 1.0, 3.0) < width("iv", 1.0, 0.5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="lam"):
        P.mu0_bounds_msm(jnp.array([0.5]), 0.9)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        P.mu0_bounds_msm(jnp.array([1.5]), 2.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        P.outcome_bounds_iv(jnp.array([[0.5], [0.2]]), jnp.array([[0.5], [-0.1]]))
    with pytest.raises(ValueError, match="strata"):
        P.check_instrument_strata(np.array([0, 0, 2]), np.array([1, 0, 1]), 3)
    with pytest.raises(ValueError, match="strata"):
        P.check_instrument_strata(np.array([0, 1, 1]), np.array([1, 0, 0]), 2)
    with pytest.raises(ValueError, match="metric"):
        P.regret_interval(jnp.ones((2, 2)), jnp.ones(2), jnp.zeros(2), jnp.ones(2), "auc")
    with pytest.raises(ValueError, match="kind"):
        P.regret_interval(jnp.ones((2, 2)), jnp.ones(2), jnp.zeros(2), jnp.ones(2), "tpr", "x")
    with pytest.raises(ValueError, match=r"\[2, 2, 2\]"):
        P.regret(jnp.ones((2, 2)), "tpr")
    with pytest.raises(ValueError, match="lam"):
        P.simulate_policy_data(jax.random.key(0), 10, "msm", 0.5)
