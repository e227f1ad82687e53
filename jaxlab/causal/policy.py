"""Comparing decision policies under unobserved confounding: cells, bounds, regret intervals.

Setting (Guerdan, Coston, Holstein, Wu, ICML 2024): covariates X, a status-quo decision
D ∈ {0, 1} that may depend on unmeasured confounders, a proposed policy's action
T = π(X) ∈ {0, 1}, and a binary outcome Y observed only when D = 1. Everything is a function
of the cells ``v[y, t, d] = P(Y = y, T = t, D = d)``; those with d = 1 are identified, those
with d = 0 only bounded. Per unit, with e(x) = P(D = 1 | x), μ₁(x) = P(Y = 1 | x, D = 1) and
the unidentified μ₀(x) = P(Y = 1 | x, D = 0) ∈ [μ₀⁻(x), μ₀⁺(x)],

    v(1, t, 0) = E[1{T = t} (1 − e(X)) μ₀(X)],   v(0, t, 0) = P(T = t, D = 0) − v(1, t, 0).

So the unknowns are the two numbers ``a = v(1, 0, 0)`` and ``b = v(1, 1, 0)``, each in an
interval — a box. Every metric here (TPR, FPR, PPV, NPV, expected utility) of either policy
is a ratio of affine functions of (a, b) with a positive denominator, and so is the regret
R = m(π) − m(π₀) (TPR/FPR share their denominator P(Y = y); PPV/NPV divide by identified
or affine quantities). A linear-fractional function on a box attains its extremes at the
vertices, so both intervals are computed exactly by evaluating the four corners:

* standard: ``[min m(π) − max m(π₀), max m(π) − min m(π₀)]`` (each metric bounded alone);
* δ-regret: ``[min R, max R]`` over the same box — the same unknowns enter both metrics, and
  the cells where T = D cancel; never wider than the standard interval.

This replaces the reference code's per-metric case analysis (``bounds.py``) with one exact
rule; the tests check it against a brute-force grid over the box and against the paper's
closed form for utility, ``R = Σ_y Δ_y [v(y, 1, 0) − v(y, 0, 1)]``. Written by hand: no
maintained library implements these bounds.

Cell arrays are indexed ``v[y, t, d]``; all kernels are pure JAX (``jit``/``vmap`` over
replications).

Bad input: concrete binary arrays (``y``, ``t``, ``d``) holding anything but 0/1 (NaN
included), probabilities outside [0, 1] or NaN, ``lower > upper`` and Λ < 1 raise
``ValueError`` naming the argument; under ``jit`` the values are unchecked.

References:
  Guerdan, Coston, Holstein, Wu, "Predictive Performance Comparison of Decision Policies
  Under Confounding", ICML 2024 (arXiv 2404.00848); reference code
  github.com/lguerdan/policy_comparison_under_confounding.
"""

from __future__ import annotations

import functools
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_key, check_range, is_traced

Metric = Literal["tpr", "fpr", "ppv", "npv", "utility"]
METRICS: tuple[str, ...] = ("tpr", "fpr", "ppv", "npv", "utility")
_EPS = 1e-12


def _check_probability(name: str, x: jax.Array) -> None:
    """Raises for concrete values outside [0, 1] or NaN (skipped under tracing)."""
    if is_traced(x):
        return
    host = np.asarray(x, np.float64)
    if host.size and (np.isnan(host).any() or (host < -1e-6).any() or (host > 1 + 1e-6).any()):
        finite = host[~np.isnan(host)]
        shown = f"[{finite.min():.4g}, {finite.max():.4g}]" if finite.size else "no number"
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] (no NaN); got {shown}, "
            f"NaN: {bool(np.isnan(host).any())}"
        )


def _check_binary(**arrays: ArrayLike) -> list[jax.Array]:
    """``[N]`` arrays of one shape holding 0/1 (values checked when concrete)."""
    out, shape = [], None
    for name, a in arrays.items():
        a = jnp.asarray(a)
        if a.ndim != 1 or (shape is not None and a.shape != shape):
            raise ValueError(f"{name} must be [N] like the others, got shape {a.shape}")
        shape = a.shape
        if not is_traced(a) and not np.isin(np.asarray(a), (0, 1)).all():
            raise ValueError(f"{name} must hold 0/1 values (NaN and other numbers refused)")
        out.append(a)
    return out


def _check_utility(utility: ArrayLike | None) -> None:
    if utility is not None and jnp.shape(utility) != (2, 2):
        raise ValueError(f"utility must be a [2, 2] matrix u[y, t], got shape {jnp.shape(utility)}")


def _check_bounds(lower_name: str, lower: jax.Array, upper_name: str, upper: jax.Array) -> None:
    if lower.shape != upper.shape:
        raise ValueError(
            f"{upper_name} must have the shape of {lower_name}, got {upper.shape} vs {lower.shape}"
        )
    if not is_traced((lower, upper)) and (np.asarray(lower) > np.asarray(upper) + 1e-6).any():
        raise ValueError(f"{upper_name} must be ≥ {lower_name} everywhere")


def cell_table(y: ArrayLike, t: ArrayLike, d: ArrayLike) -> jax.Array:
    """Empirical cells ``v[y, t, d] = mean 1{Y = y, T = t, D = d}``.

    Args:
      y, t, d: ``[N]`` binary arrays (outcome, proposed action, status-quo decision).

    Returns:
      ``[2, 2, 2]`` cell probabilities.

    Example:
      >>> from jaxlab.causal.policy import cell_table
      >>> v = cell_table(jnp.array([1, 0]), jnp.array([1, 1]), jnp.array([0, 1]))
      >>> float(v[1, 1, 0]), float(v[0, 1, 1]), float(v.sum())
      (0.5, 0.5, 1.0)
    """
    y, t, d = (a.astype(jnp.int32) for a in _check_binary(y=y, t=t, d=d))
    onehot = jax.nn.one_hot(y * 4 + t * 2 + d, 8)
    return onehot.mean(axis=0).reshape(2, 2, 2)


def joint_action_outcome(v: ArrayLike, action: Literal["t", "d"]) -> jax.Array:
    """``q[a, y] = P(A = a, Y = y)`` for A = T (the policy π) or A = D (the status quo π₀)."""
    v = jnp.asarray(v)
    return v.sum(axis=2).T if action == "t" else v.sum(axis=1).T


def metric_from_joint(q: ArrayLike, metric: Metric, utility: ArrayLike | None = None):
    """A predictive-performance metric of an action A against Y from ``q[a, y]``.

    tpr = P(A=1 | Y=1), fpr = P(A=1 | Y=0), ppv = P(Y=1 | A=1), npv = P(Y=0 | A=0),
    utility = Σ_{a, y} u(a, y) P(A=a, Y=y) (``utility``: ``[2, 2]`` indexed ``u[a, y]``,
    default the identity: accuracy).
    """
    q = jnp.asarray(q)
    if metric == "tpr":
        return q[1, 1] / jnp.maximum(q[0, 1] + q[1, 1], _EPS)
    if metric == "fpr":
        return q[1, 0] / jnp.maximum(q[0, 0] + q[1, 0], _EPS)
    if metric == "ppv":
        return q[1, 1] / jnp.maximum(q[1, 0] + q[1, 1], _EPS)
    if metric == "npv":
        return q[0, 0] / jnp.maximum(q[0, 0] + q[0, 1], _EPS)
    if metric == "utility":
        u = jnp.eye(2) if utility is None else jnp.asarray(utility)
        return jnp.sum(u * q)
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def regret(v: ArrayLike, metric: Metric, utility: ArrayLike | None = None) -> jax.Array:
    """Regret ``R = m(π) − m(π₀)`` from a full cell table ``v[y, t, d]`` (``[2, 2, 2]``)."""
    _check_utility(utility)
    v = jnp.asarray(v)
    if v.shape != (2, 2, 2):
        raise ValueError(f"v must be [2, 2, 2] cells v[y, t, d], got shape {v.shape}")
    m_pi = metric_from_joint(joint_action_outcome(v, "t"), metric, utility)
    m_pi0 = metric_from_joint(joint_action_outcome(v, "d"), metric, utility)
    return m_pi - m_pi0


def fill_cells(v1: ArrayLike, p_t_d0: ArrayLike, a: ArrayLike, b: ArrayLike) -> jax.Array:
    """A full table from the identified part and the two unknowns.

    Args:
      v1: ``[2, 2]`` identified cells ``v1[y, t] = v(y, t, 1)``.
      p_t_d0: ``[2]`` identified ``P(T = t, D = 0)``.
      a, b: scalars ``v(1, 0, 0)`` and ``v(1, 1, 0)``.

    Returns:
      ``[2, 2, 2]`` cells with ``v(0, t, 0) = P(T = t, D = 0) − v(1, t, 0)``.
    """
    v1, p = as_float("v1", v1), as_float("p_t_d0", p_t_d0)
    _check_probability("p_t_d0", p)
    _check_probability("v1", v1)
    a, b = as_float("a", a), as_float("b", b)
    if v1.shape != (2, 2) or p.shape != (2,) or a.shape != b.shape:
        raise ValueError(
            f"need v1 [2, 2], p_t_d0 [2] and a, b of one shape, got {v1.shape}, "
            f"{p.shape}, {a.shape}, {b.shape}"
        )
    y1 = jnp.stack([a, b])
    v0 = jnp.stack([p - y1, y1])  # [y, t]
    return jnp.stack([v0, v1], axis=-1)


def regret_interval(
    v1: ArrayLike,
    p_t_d0: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    metric: Metric,
    kind: Literal["standard", "delta"] = "delta",
    utility: ArrayLike | None = None,
) -> jax.Array:
    """Bounds on the regret ``R = m(π) − m(π₀)`` given bounds on the unobserved cells.

    With ``v(1, t, 0) ∈ [lower[t], upper[t]]`` (a box in the unknowns):

    * ``kind="standard"``: ``[min m(π) − max m(π₀), max m(π) − min m(π₀)]``;
    * ``kind="delta"`` (δ-regret): ``[min R, max R]``, optimising both metrics jointly; for
      utility this is ``R = Σ_y Δ_y [v(y, 1, 0) − v(y, 0, 1)]`` with
      ``Δ_y = u(1, y) − u(0, y)`` (the paper's δ-regret), linear in ``v(1, 1, 0)``.

    Both are exact: every metric is linear-fractional in the unknowns, so extremes sit at
    the box's corners (module docstring).

    Args:
      v1: ``[2, 2]`` identified cells ``v(y, t, 1)``.
      p_t_d0: ``[2]`` identified ``P(T = t, D = 0)``.
      lower, upper: ``[2]`` bounds on ``v(1, t, 0)`` for t = 0, 1.
      metric: ``"tpr"``, ``"fpr"``, ``"ppv"``, ``"npv"`` or ``"utility"``.
      kind: ``"standard"`` or ``"delta"``.
      utility: ``[2, 2]`` utility ``u[a, y]`` for ``metric="utility"`` (default identity).

    Returns:
      ``[2]`` array ``(R_lower, R_upper)``.

    Example:
      >>> from jaxlab.causal.policy import regret_interval
      >>> v1 = jnp.array([[0.1, 0.1], [0.2, 0.1]]); p = jnp.array([0.2, 0.3])
      >>> lo, hi = jnp.array([0.0, 0.0]), jnp.array([0.2, 0.3])    # no assumption
      >>> s = regret_interval(v1, p, lo, hi, "utility", "standard")
      >>> d = regret_interval(v1, p, lo, hi, "utility", "delta")
      >>> bool(d[1] - d[0] <= s[1] - s[0])
      True
    """
    _check_utility(utility)
    v1, p_t_d0 = as_float("v1", v1), as_float("p_t_d0", p_t_d0)
    if v1.shape != (2, 2) or p_t_d0.shape != (2,):
        raise ValueError(f"v1 must be [2, 2] and p_t_d0 [2], got {v1.shape}, {p_t_d0.shape}")
    _check_probability("v1", v1)
    _check_probability("p_t_d0", p_t_d0)
    lower = as_float("lower", lower)
    upper = as_float("upper", upper)
    _check_bounds("lower", lower, "upper", upper)
    if kind not in ("standard", "delta"):
        raise ValueError(f"kind must be 'standard' or 'delta', got {kind!r}")
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if lower.shape != (2,) or upper.shape != (2,):
        raise ValueError(f"lower and upper must be [2], got {lower.shape}, {upper.shape}")
    u = jnp.eye(2) if utility is None else jnp.asarray(utility, dtype=jnp.float32)
    return _regret_interval(jnp.asarray(v1), jnp.asarray(p_t_d0), lower, upper, u, metric, kind)


@functools.partial(jax.jit, static_argnames=("metric", "kind"))
def _regret_interval(v1, p_t_d0, lower, upper, utility, metric, kind):
    corners_a = jnp.array([0, 0, 1, 1])
    corners_b = jnp.array([0, 1, 0, 1])
    a = jnp.where(corners_a == 0, lower[0], upper[0])
    b = jnp.where(corners_b == 0, lower[1], upper[1])
    tables = jax.vmap(fill_cells, in_axes=(None, None, 0, 0))(v1, p_t_d0, a, b)

    def metrics(v):
        return (
            metric_from_joint(joint_action_outcome(v, "t"), metric, utility),
            metric_from_joint(joint_action_outcome(v, "d"), metric, utility),
        )

    m_pi, m_pi0 = jax.vmap(metrics)(tables)
    if kind == "delta":
        r = m_pi - m_pi0
        return jnp.stack([r.min(), r.max()])
    return jnp.stack([m_pi.min() - m_pi0.max(), m_pi.max() - m_pi0.min()])


# ----------------------------------------------------------------------------------------
# Pointwise bounds on μ₀ and the unobserved-cell bounds they imply
# ----------------------------------------------------------------------------------------


def mu0_bounds_none(mu1: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """No assumption: ``μ₀ ∈ [0, 1]``. ``mu1: [N]`` only sets the shape."""
    mu1 = as_float("mu1", mu1)
    _check_probability("mu1", mu1)
    return jnp.zeros_like(mu1), jnp.ones_like(mu1)


def mu0_bounds_msm(mu1: ArrayLike, lam: float) -> tuple[jax.Array, jax.Array]:
    """Sensitivity model with parameter Λ ≥ 1: ``μ₀ ∈ [μ₁ / Λ, Λ μ₁] ∩ [0, 1]``.

    This is the reference code's form (``vset.compute_msm_bounds``); see the docs for how
    it relates to the paper's marginal sensitivity model.

    Args:
      mu1: ``[N]`` μ₁(x) = P(Y = 1 | x, D = 1).
      lam: Λ ≥ 1 (Λ = 1: no unobserved confounding, μ₀ = μ₁).
    """
    check_range("lam", lam, 1.0)
    mu1 = as_float("mu1", mu1)
    _check_probability("mu1", mu1)
    return jnp.clip(mu1 / lam, 0.0, 1.0), jnp.clip(lam * mu1, 0.0, 1.0)


def outcome_bounds_iv(mu1_z: ArrayLike, e_z: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """Instrument bounds on P(Y = 1 | x) (Manski), intersected over the levels of Z.

    For each level z: ``e_z μ₁_z ≤ P(Y = 1 | x) ≤ e_z μ₁_z + (1 − e_z)``; the bound is the
    largest lower and the smallest upper over z (Z moves D, not Y).

    Args:
      mu1_z: ``[|Z|, N]`` μ₁(x, z) = P(Y = 1 | x, z, D = 1).
      e_z: ``[|Z|, N]`` e(x, z) = P(D = 1 | x, z).

    Returns:
      ``([N], [N])`` lower and upper bounds on P(Y = 1 | x).
    """
    mu1_z, e_z = jnp.asarray(mu1_z), jnp.asarray(e_z)
    if mu1_z.ndim != 2 or mu1_z.shape != e_z.shape:
        raise ValueError(f"mu1_z and e_z must both be [|Z|, N], got {mu1_z.shape}, {e_z.shape}")
    _check_probability("mu1_z", mu1_z)
    _check_probability("e_z", e_z)
    joint = e_z * mu1_z
    return joint.max(axis=0), jnp.min(joint + 1.0 - e_z, axis=0)


def mu0_bounds_iv(
    mu1_z: ArrayLike, e_z: ArrayLike, mu1: ArrayLike, e: ArrayLike
) -> tuple[jax.Array, jax.Array]:
    """Instrument bounds on μ₀(x, z) from :func:`outcome_bounds_iv`.

    The identified D = 1 part is removed: ``μ₀ = (P(Y=1 | x) − e μ₁) / (1 − e)``, clipped
    to [0, 1].

    Args:
      mu1_z, e_z: ``[|Z|, N]`` nuisances at every level of Z.
      mu1, e: ``[N]`` the nuisances at each unit's own level.
    """
    lo_y, hi_y = outcome_bounds_iv(mu1_z, e_z)
    e, mu1 = as_float("e", e), as_float("mu1", mu1)
    _check_probability("e", e)
    _check_probability("mu1", mu1)
    denom = jnp.maximum(1.0 - e, 1e-6)
    return (
        jnp.clip((lo_y - e * mu1) / denom, 0.0, 1.0),
        jnp.clip((hi_y - e * mu1) / denom, 0.0, 1.0),
    )


def check_instrument_strata(z: ArrayLike, d: ArrayLike, num_z: int) -> None:
    """Raises ``ValueError`` when a level of the instrument has no unit, or no unit with D = 1.

    μ₁(x, z) and e(x, z) are undefined on such a stratum, so the instrument bounds are too.

    Args:
      z: ``[N]`` instrument levels in ``0 … num_z − 1``.
      d: ``[N]`` decisions.
      num_z: the number of levels.
    """
    check_integer("num_z", num_z, low=1)
    z, d = np.asarray(z), np.asarray(d)
    if not np.issubdtype(z.dtype, np.integer):
        raise ValueError(f"z must hold integer instrument levels, got dtype {z.dtype}")
    if z.shape != d.shape or z.ndim != 1:
        raise ValueError(f"z and d must both be [N], got {z.shape}, {d.shape}")
    if z.size and (z.min() < 0 or z.max() >= num_z):
        raise ValueError(f"z must lie in 0..{num_z - 1}, got range [{z.min()}, {z.max()}]")
    counts = np.bincount(z, minlength=num_z)
    treated = np.bincount(z, weights=d, minlength=num_z)
    empty = np.flatnonzero(counts == 0).tolist()
    unlabeled = np.flatnonzero((counts > 0) & (treated == 0)).tolist()
    if empty or unlabeled:
        raise ValueError(
            f"instrument strata without data: levels {empty} are empty, levels {unlabeled} "
            "have no unit with D = 1"
        )


def unobserved_cell_bounds(
    t: ArrayLike, e: ArrayLike, mu0_lower: ArrayLike, mu0_upper: ArrayLike
) -> tuple[jax.Array, jax.Array]:
    """Plug-in bounds on ``v(1, t, 0) = E[1{T=t} (1 − e) μ₀]`` for t = 0, 1.

    Args:
      t: ``[N]`` the proposed policy's actions.
      e: ``[N]`` e(x) = P(D = 1 | x).
      mu0_lower, mu0_upper: ``[N]`` pointwise bounds on μ₀(x).

    Returns:
      ``([2], [2])`` lower and upper bounds indexed by t.
    """
    (t,) = _check_binary(t=t)
    t = t.astype(jnp.float32)
    e = as_float("e", e)
    _check_probability("e", e)
    mu0_lower, mu0_upper = as_float("mu0_lower", mu0_lower), as_float("mu0_upper", mu0_upper)
    _check_bounds("mu0_lower", mu0_lower, "mu0_upper", mu0_upper)
    w = jnp.stack([1.0 - t, t])  # [2, N]
    lo = (w * ((1 - e) * jnp.asarray(mu0_lower))[None, :]).mean(axis=1)
    hi = (w * ((1 - e) * jnp.asarray(mu0_upper))[None, :]).mean(axis=1)
    return lo, hi


def unobserved_cell_bounds_dr(
    t: ArrayLike, d: ArrayLike, y: ArrayLike, e: ArrayLike, mu1: ArrayLike, lam: float
) -> tuple[jax.Array, jax.Array]:
    """Doubly-robust bounds on ``v(1, t, 0)`` under the sensitivity model Λ.

    Target ``θ_t = E[1{T=t} (1 − e(X)) h(μ₁(X))]`` with ``h(μ) = min(Λμ, 1)`` (upper) or
    ``μ/Λ`` (lower). Its efficient influence function gives the estimator

        θ̂_t = mean 1{T=t} [ (1 − D) h(μ̂₁) + D (1 − ê)/ê · h'(μ̂₁) (Y − μ̂₁) ],

    consistent when either ê or μ̂₁ is (cross-fit the nuisances). Derived here; the
    reference code's DR form differs (it weights D·Y by Λ) — see the docs.

    Args:
      t, d, y: ``[N]`` actions (0/1), decisions and outcomes (0/1 or values in [0, 1]; y is
        used only where d = 1).
      e, mu1: ``[N]`` cross-fitted nuisances.
      lam: Λ ≥ 1.

    Returns:
      ``([2], [2])`` lower and upper bounds indexed by t.
    """
    check_range("lam", lam, 1.0)
    (t,) = _check_binary(t=t)
    t = t.astype(jnp.float32)
    d, y = as_float("d", d).astype(jnp.float32), as_float("y", y).astype(jnp.float32)
    for name, a in (("d", d), ("y", y)):  # 0/1, or their conditional means
        _check_probability(name, a)
        if a.shape != t.shape:
            raise ValueError(f"{name} must be [N] like t {t.shape}, got {a.shape}")
    _check_probability("e", as_float("e", e))
    _check_probability("mu1", as_float("mu1", mu1))
    e = jnp.clip(as_float("e", e), 1e-3, 1.0)
    mu1 = jnp.asarray(mu1)
    w = jnp.stack([1.0 - t, t])
    resid = d * (1.0 - e) / e * (y - mu1)

    def theta(h, dh):
        return (w * ((1.0 - d) * h + dh * resid)[None, :]).mean(axis=1)

    up = theta(jnp.minimum(lam * mu1, 1.0), jnp.where(lam * mu1 < 1.0, lam, 0.0))
    lo = theta(mu1 / lam, jnp.full_like(mu1, 1.0 / lam))
    return lo, up


def identified_cells(t: ArrayLike, e: ArrayLike, mu1: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """Plug-in identified parts: ``v1[y, t] = v(y, t, 1)`` ``[2, 2]`` and ``P(T=t, D=0)`` ``[2]``.

    ``v(1, t, 1) = E[1{T=t} e μ₁]``, ``v(0, t, 1) = E[1{T=t} e (1 − μ₁)]``,
    ``P(T = t, D = 0) = E[1{T=t} (1 − e)]``.
    """
    (t,) = _check_binary(t=t)
    t = t.astype(jnp.float32)
    e, mu1 = as_float("e", e), as_float("mu1", mu1)
    _check_probability("e", e)
    _check_probability("mu1", mu1)
    if e.shape != t.shape or mu1.shape != t.shape:
        raise ValueError(f"e and mu1 must be [N] like t {t.shape}, got {e.shape}, {mu1.shape}")
    w = jnp.stack([1.0 - t, t])
    v11 = (w * (e * mu1)[None, :]).mean(axis=1)
    v01 = (w * (e * (1.0 - mu1))[None, :]).mean(axis=1)
    return jnp.stack([v01, v11]), (w * (1.0 - e)[None, :]).mean(axis=1)


# ----------------------------------------------------------------------------------------
# Synthetic data with known truth
# ----------------------------------------------------------------------------------------

_W_T = (1.0, -0.5, 0.5)  # the proposed policy π(x) = Bernoulli(σ(x · w_t))
_W_E = (0.5, 0.5, -0.5)  # status-quo decision propensity
_W_Y = (-0.5, 1.0, 0.5)  # outcome
_GAMMA_D, _GAMMA_Y = 1.0, 1.0  # loadings of the unmeasured confounder U


def _gauss_hermite(num: int = 24) -> tuple[jax.Array, jax.Array]:
    import numpy as np

    nodes, weights = np.polynomial.hermite_e.hermegauss(num)
    return jnp.asarray(nodes, jnp.float32), jnp.asarray(weights / weights.sum(), jnp.float32)


def simulate_policy_data(
    key: jax.Array,
    num_samples: int,
    setting: Literal["msm", "iv"],
    lam: float = 1.0,
    beta_zd: float = 0.0,
    num_z: int = 5,
) -> dict[str, jax.Array]:
    """Synthetic selective-labels data with unmeasured confounding and known true cells.

    X ~ N(0, I₃), U ~ N(0, 1), T ~ Bernoulli(σ(X·w_t)), Z ~ Categorical(softmax(X W_z)) with
    ``num_z`` levels (Z ⟂ U), D ~ Bernoulli(σ(X·w_e + U + β_zd z̃)) with z̃ ∈ [−1, 1].

    * ``setting="msm"`` (the reference ``dgp.py``'s MSM design): μ₁(x) = σ(X·w_y) and
      Y | D = 0 ~ Bernoulli(min(λ(U) μ₁(x), 1)) with λ(U) = 1 + (Λ − 1) σ(2U) ∈ [1, Λ], so
      μ₀(x) ∈ [μ₁(x), Λ μ₁(x)]: the sensitivity model holds by construction.
    * ``setting="iv"``: one outcome Y ~ Bernoulli(σ(X·w_y + U)) whatever D and Z (the
      instrument moves D only; ``beta_zd`` sets its strength).

    The oracle nuisances e(x, z) = P(D = 1 | x, z) and μ₁(x, z) integrate U out by
    Gauss-Hermite quadrature, and ``v_true`` holds the cells ``v[y, t, d]`` as expectations
    over D, Y and U given each unit's (X, Z, T), averaged over the sample.

    Returns:
      dict with ``x [N, 3]``, ``z [N]``, ``t [N]``, ``d [N]``, ``y [N]`` (observed only where
      d = 1; zero elsewhere), ``e [N]``, ``mu1 [N]``, ``e_z [|Z|, N]``, ``mu1_z [|Z|, N]``,
      ``v_true [2, 2, 2]``.
    """
    if setting not in ("msm", "iv"):
        raise ValueError(f"setting must be 'msm' or 'iv', got {setting!r}")
    check_range("lam", lam, 1.0)
    check_integer("num_z", num_z, low=2)
    check_integer("num_samples", num_samples, low=1)
    check_range("beta_zd", beta_zd)
    check_key("key", key)
    lam_a, beta_zd_a = jnp.asarray(lam, jnp.float32), jnp.asarray(beta_zd, jnp.float32)
    return _simulate(key, num_samples, setting, lam_a, beta_zd_a, num_z)


@functools.partial(jax.jit, static_argnums=(1, 2, 5))
def _simulate(key, num_samples, setting, lam, beta_zd, num_z):
    kx, ku, kt, kz, kd, ky, kw = jax.random.split(key, 7)
    x = jax.random.normal(kx, (num_samples, 3))
    u = jax.random.normal(ku, (num_samples,))
    w_t, w_e, w_y = (jnp.asarray(w) for w in (_W_T, _W_E, _W_Y))
    t = jax.random.bernoulli(kt, jax.nn.sigmoid(x @ w_t)).astype(jnp.int32)
    w_z = jax.random.normal(jax.random.key(1234), (3, num_z))  # fixed across replications
    z = jax.random.categorical(kz, x @ w_z)
    levels = jnp.linspace(-1.0, 1.0, num_z)

    def e_of(u_, zlev):  # [N] propensity given U = u_ and level z̃
        return jax.nn.sigmoid(x @ w_e + _GAMMA_D * u_ + beta_zd * zlev)

    nodes, qw = _gauss_hermite()
    e_unit = e_of(u, levels[z])
    d = jax.random.bernoulli(kd, e_unit).astype(jnp.int32)
    # per-level expectations over U: [|Z|, Q, N]
    e_q = jax.vmap(lambda lv: jax.vmap(lambda n: e_of(n, lv))(nodes))(levels)
    e_z = jnp.einsum("q,zqn->zn", qw, e_q)
    if setting == "msm":
        mu1_x = jax.nn.sigmoid(x @ w_y)
        lam_q = 1.0 + (lam - 1.0) * jax.nn.sigmoid(2.0 * nodes)  # [Q]
        y0_q = jnp.minimum(lam_q[:, None] * mu1_x[None, :], 1.0)  # [Q, N]
        mu1_z = jnp.broadcast_to(mu1_x[None, :], e_z.shape)
        y1_unit = jnp.einsum("q,zqn->zn", qw, (1.0 - e_q) * y0_q[None])  # E[(1-e) μ₀ | x, z]
        p_y = jnp.where(
            d == 1, mu1_x, jnp.minimum((1.0 + (lam - 1.0) * jax.nn.sigmoid(2.0 * u)) * mu1_x, 1.0)
        )
    else:
        p_q = jax.nn.sigmoid((x @ w_y)[None, :] + _GAMMA_Y * nodes[:, None])  # [Q, N]
        mu1_z = jnp.einsum("q,zqn->zn", qw, e_q * p_q[None]) / e_z
        y1_unit = jnp.einsum("q,zqn->zn", qw, (1.0 - e_q) * p_q[None])
        p_y = jax.nn.sigmoid(x @ w_y + _GAMMA_Y * u)
    y = jax.random.bernoulli(ky, p_y).astype(jnp.int32) * d
    take = jnp.arange(num_samples)
    e, mu1, v10_unit = e_z[z, take], mu1_z[z, take], y1_unit[z, take]
    v1, p_t_d0 = identified_cells(t, e, mu1)
    tf = t.astype(jnp.float32)
    v_true = fill_cells(v1, p_t_d0, ((1 - tf) * v10_unit).mean(), (tf * v10_unit).mean())
    del kw
    return dict(x=x, z=z, t=t, d=d, y=y, e=e, mu1=mu1, e_z=e_z, mu1_z=mu1_z, v_true=v_true)
