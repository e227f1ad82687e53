"""Explanation masks for representations: NEM's occlusion and loss, RELAX, gradient saliency.

Images are ``[b, H, W, C]`` (NHWC, as flax.linen convolutions); masks and saliency maps are
``[b, H, W]``. The encoder is any function ``encode_fn(x: [b, H, W, C]) -> [b, k]``.
Hand-written: no maintained JAX library ships NEM or RELAX.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import check_integer, check_key, check_range

__all__ = [
    "cosine_distance",
    "gradient_saliency",
    "masked_input",
    "nem_contrastive_loss",
    "nem_loss",
    "relax",
    "smooth_random_masks",
]

EncodeFn = Callable[[jax.Array], jax.Array]


def _check_images(x: jax.Array) -> None:
    if x.ndim != 4:
        raise ValueError(f"x must have shape [b, H, W, C]; got {x.shape}")


def check_baseline(baseline: jax.typing.ArrayLike, x: jax.Array) -> jax.Array:
    """``baseline`` broadcast to ``x``'s shape (a ``ValueError`` naming it otherwise)."""
    try:
        return jnp.broadcast_to(jnp.asarray(baseline, x.dtype), x.shape)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"baseline must broadcast to x {x.shape}, got shape {jnp.shape(baseline)}"
        ) from e


def _check_encode_fn(encode_fn: object) -> None:
    if not callable(encode_fn):
        raise ValueError(
            f"encode_fn must be callable [b, H, W, C] -> [b, k], got {type(encode_fn).__name__}"
        )


def masked_input(
    x: jax.typing.ArrayLike, mask: jax.typing.ArrayLike, baseline: jax.typing.ArrayLike = 0.0
) -> jax.Array:
    """The occluded image x_m = m ⊙ x + (1 − m) ⊙ b  (NEM's occlusion).

    Args:
      x: ``[b, H, W, C]`` images.
      mask: ``[b, H, W]`` values in [0, 1] (1 = keep); checked when concrete.
      baseline: b, broadcastable to ``x`` (0, a noise image or a blurred copy of x).

    Returns:
      ``[b, H, W, C]``.

    Example:
      >>> from jaxlab.explain import masked_input
      >>> masked_input(jnp.ones((1, 2, 2, 1)), jnp.array([[[1.0, 0.0], [0.5, 0.0]]]))[..., 0]
      Array([[[1. , 0. ],
              [0.5, 0. ]]], dtype=float32)
    """
    check_baseline(baseline, jnp.asarray(x))
    x = jnp.asarray(x)
    mask = jnp.asarray(mask, x.dtype)
    _check_images(x)
    if mask.shape != x.shape[:3]:
        raise ValueError(f"mask must have shape {x.shape[:3]} ([b, H, W]); got {mask.shape}")
    if not isinstance(mask, jax.core.Tracer):
        host = np.asarray(mask)
        if not (np.all(np.isfinite(host)) and host.min() >= 0.0 and host.max() <= 1.0):
            raise ValueError("mask values must lie in [0, 1]")
    m = mask[..., None]
    return m * x + (1.0 - m) * jnp.broadcast_to(jnp.asarray(baseline, x.dtype), x.shape)


def cosine_distance(u: jax.typing.ArrayLike, v: jax.typing.ArrayLike) -> jax.Array:
    """d(u, v) = (1 − cos(u, v)) / 2 per row, in [0, 1]; ``u, v: [b, k]`` → ``[b]``."""
    u, v = jnp.asarray(u), jnp.asarray(v)
    if u.ndim != 2 or u.shape != v.shape:
        raise ValueError(f"u and v must share a shape [b, k]; got {u.shape}, {v.shape}")
    nu = jnp.maximum(jnp.linalg.norm(u, axis=1), 1e-12)
    nv = jnp.maximum(jnp.linalg.norm(v, axis=1), 1e-12)
    return (1.0 - jnp.sum(u * v, axis=1) / (nu * nv)) / 2.0


def nem_loss(
    emb: jax.typing.ArrayLike,
    emb_masked: jax.typing.ArrayLike,
    mask: jax.typing.ArrayLike,
    lambda_f: float = 4.0,
    lambda_s: float = 0.5,
) -> jax.Array:
    """NEM's fidelity + sparsity loss.

        L = λ_f · mean_b d(f(x), f(x_m)) + λ_s · mean(m),   d(u, v) = (1 − cos(u, v)) / 2

    (reference weights λ_f = 4, λ_s = 1/2). Keep as few pixels as possible while the
    embedding of the kept image stays where it was.

    Args:
      emb: ``[b, k]`` f(x) (stop the gradient to it at the call site if f is frozen).
      emb_masked: ``[b, k]`` f(x_m).
      mask: ``[b, H, W]`` the mask m.
      lambda_f: λ_f.
      lambda_s: λ_s.

    Returns:
      The scalar loss.

    Example:
      >>> from jaxlab.explain import nem_loss
      >>> e = jnp.array([[1.0, 0.0]])
      >>> float(nem_loss(e, jnp.array([[0.0, 1.0]]), jnp.full((1, 2, 2), 0.5)))
      2.25

    References:
      Møller, Igel, Wickstrøm, Sporring, Jenssen, Ibragimov. Finding NEM-U: Explaining
      unsupervised representation learning through neural network generated explanation
      masks. ICML 2024.
    """
    mask = jnp.asarray(mask)
    if mask.ndim != 3:
        raise ValueError(f"mask must have shape [b, H, W]; got {mask.shape}")
    if jnp.shape(emb_masked) != jnp.shape(emb):
        raise ValueError(
            f"emb_masked must have the shape of emb {jnp.shape(emb)}, got {jnp.shape(emb_masked)}"
        )
    check_range("lambda_f", lambda_f, 0.0)
    check_range("lambda_s", lambda_s, 0.0)
    return lambda_f * jnp.mean(cosine_distance(emb, emb_masked)) + lambda_s * jnp.mean(mask)


def nem_contrastive_loss(
    emb: jax.typing.ArrayLike,
    emb_masked: jax.typing.ArrayLike,
    emb_complement: jax.typing.ArrayLike,
    mask: jax.typing.ArrayLike,
    lambda_f: float = 4.0,
    lambda_s: float = 0.5,
    lambda_c: float = 1.0,
    form: str = "additive",
) -> jax.Array:
    """NEM's loss plus a term that pushes the complement's embedding away.

    ``form="additive"``:

        L = λ_f · d(f(x), f(x_m)) + λ_c · (1 − d(f(x), f(x_¬))) + λ_s · mean(m),
        x_¬ = (1 − m) ⊙ x + m ⊙ b

    ``form="reference"`` (the first author's NEM_T code, ``Masking_Loss``): with
    d₊ = d(f(x), f(x_m)) and d₋ = d(f(x_m), f(x_¬)) (masked vs complement, not x vs
    complement), L = λ_f · d₊ + λ_s · mean(m) − λ_c · d₋ · (d₊ + ε) + ε, ε = 1e-6.

    Which combination NEM-U's paper uses was not verified (its text was not available;
    the authors' follow-ups differ), so both are offered and neither is claimed as the
    paper's.

    Args:
      emb: ``[b, k]`` f(x).
      emb_masked: ``[b, k]`` f(x_m).
      emb_complement: ``[b, k]`` f(x_¬).
      mask: ``[b, H, W]``.
      lambda_f: λ_f.
      lambda_s: λ_s.
      lambda_c: λ_c.
      form: ``"additive"`` or ``"reference"``.

    Returns:
      The scalar loss.

    Example:
      >>> from jaxlab.explain import nem_contrastive_loss
      >>> e = jnp.array([[1.0, 0.0]])
      >>> float(nem_contrastive_loss(e, e, -e, jnp.zeros((1, 2, 2))))
      0.0
    """
    base = nem_loss(emb, emb_masked, mask, lambda_f, lambda_s)
    check_range("lambda_c", lambda_c, 0.0)
    if jnp.shape(emb_complement) != jnp.shape(emb):
        raise ValueError(
            f"emb_complement must have the shape of emb {jnp.shape(emb)}, got "
            f"{jnp.shape(emb_complement)}"
        )
    if form == "additive":
        d_neg = jnp.mean(cosine_distance(emb, emb_complement))
        return base + lambda_c * (1.0 - d_neg)
    if form == "reference":
        eps = 1e-6
        d_pos = jnp.mean(cosine_distance(emb, emb_masked))
        d_neg = jnp.mean(cosine_distance(emb_masked, emb_complement))
        return base - lambda_c * d_neg * (d_pos + eps) + eps
    raise ValueError(f"form must be 'additive' or 'reference'; got {form!r}")


def smooth_random_masks(
    key: jax.Array, num_masks: int, height: int, width: int, cells: int = 6, p_keep: float = 0.5
) -> jax.Array:
    """RISE/RELAX-style smooth random masks: Bernoulli(p) on a coarse grid, bilinearly
    upsampled with a random sub-cell shift. Returns ``[num_masks, H, W]`` in [0, 1]."""
    check_key("key", key)
    for name, value in (
        ("num_masks", num_masks),
        ("height", height),
        ("width", width),
        ("cells", cells),
    ):
        check_integer(name, value, low=1)
    check_range("p_keep", p_keep, 0.0, 1.0, low_open=True)
    k_grid, k_h, k_w = jax.random.split(key, 3)
    grid = jax.random.bernoulli(k_grid, p_keep, (num_masks, cells + 1, cells + 1))
    cell_h, cell_w = -(-height // cells), -(-width // cells)
    big = jax.image.resize(
        grid.astype(jnp.float32),
        (num_masks, (cells + 1) * cell_h, (cells + 1) * cell_w),
        "bilinear",
    )
    shift_h = jax.random.randint(k_h, (num_masks,), 0, cell_h)
    shift_w = jax.random.randint(k_w, (num_masks,), 0, cell_w)

    def crop(m, sh, sw):
        return jax.lax.dynamic_slice(m, (sh, sw), (height, width))

    return jax.vmap(crop)(big, shift_h, shift_w)


def relax(
    encode_fn: EncodeFn,
    x: jax.typing.ArrayLike,
    key: jax.Array,
    num_masks: int = 1000,
    chunk_size: int = 100,
    cells: int = 6,
    p_keep: float = 0.5,
) -> jax.Array:
    """RELAX importance map of one image: similarity-weighted average of random masks.

        R = Σ_n s_n M_n / Σ_n M_n,   s_n = cos(f(x), f(M_n ⊙ x))       (Wickstrøm et al.)

    normalised by the mask coverage per pixel; the N masks are encoded in chunks
    (``lax.map``), so N = 1000 never holds N images at once.

    Args:
      encode_fn: ``[b, H, W, C] -> [b, k]``.
      x: ``[H, W, C]`` one image.
      key: key for the masks.
      num_masks: N (a multiple of ``chunk_size``).
      chunk_size: masks encoded per pass.
      cells: coarse grid size of the masks.
      p_keep: keep probability of a grid cell.

    Returns:
      ``[H, W]`` importance.

    Example:
      >>> from jaxlab.explain import relax
      >>> f = lambda x: jnp.stack([x[:, :2, :2, 0].sum((1, 2)), jnp.ones(x.shape[0])], 1)
      >>> r = relax(f, jnp.ones((8, 8, 1)), jax.random.key(0), num_masks=200, chunk_size=50)
      >>> bool(r[:2, :2].mean() > r[4:, 4:].mean())
      True

    References:
      Wickstrøm, Trosten, Løkse, Boubekki, Mikalsen, Kampffmeyer, Jenssen. RELAX:
      Representation Learning Explainability. IJCV 2023.
    """
    x = jnp.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"x must have shape [H, W, C]; got {x.shape}")
    _check_encode_fn(encode_fn)
    if num_masks < 1 or chunk_size < 1 or num_masks % chunk_size:
        raise ValueError(
            f"num_masks ({num_masks}) must be a positive multiple of chunk_size ({chunk_size})"
        )
    h, w, _ = x.shape
    ref = encode_fn(x[None])  # [1, k]
    masks = smooth_random_masks(key, num_masks, h, w, cells, p_keep)
    chunks = masks.reshape(num_masks // chunk_size, chunk_size, h, w)

    def one_chunk(m):
        emb = encode_fn(m[..., None] * x[None])
        sim = 1.0 - 2.0 * cosine_distance(emb, jnp.broadcast_to(ref, emb.shape))
        return jnp.einsum("n,nhw->hw", sim, m), jnp.sum(m, axis=0)

    weighted, coverage = jax.lax.map(one_chunk, chunks)
    return jnp.sum(weighted, axis=0) / jnp.maximum(jnp.sum(coverage, axis=0), 1e-12)


def gradient_saliency(encode_fn: EncodeFn, x: jax.typing.ArrayLike) -> jax.Array:
    """Gradient saliency of the embedding: max over channels of |∂⟨f(x), sg(f(x))⟩ / ∂x|.

    Args:
      encode_fn: ``[b, H, W, C] -> [b, k]``.
      x: ``[b, H, W, C]``.

    Returns:
      ``[b, H, W]`` non-negative saliency.

    Example:
      >>> from jaxlab.explain import gradient_saliency
      >>> f = lambda x: x[:, :1, :1, 0].reshape(x.shape[0], -1)
      >>> s = gradient_saliency(f, jnp.ones((1, 3, 3, 1)))
      >>> float(s[0, 0, 0]), float(s[0, 2, 2])
      (2.0, 0.0)
    """
    _check_encode_fn(encode_fn)
    x = jnp.asarray(x)
    _check_images(x)
    target = jax.lax.stop_gradient(encode_fn(x))

    def objective(z):
        return jnp.sum(encode_fn(z) * target)

    # d/dx ⟨f(x), sg(f(x))⟩ = J_fᵀ f(x); a factor 2 makes it the gradient of ‖f(x)‖².
    return jnp.max(jnp.abs(2.0 * jax.grad(objective)(x)), axis=-1)
