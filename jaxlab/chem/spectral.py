"""Graph-spectral coordinates: generalized Laplacian eigenfunctions (MCF's atom "positions")."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def laplacian_eigenfunctions(
    adjacency: jax.typing.ArrayLike, k: int = 32, mask: jax.typing.ArrayLike | None = None
) -> jax.Array:
    """The first ``k`` non-trivial eigenfunctions of the graph Laplacian, MCF-style.

    Solves the generalized eigenproblem

        L v = λ D v,   L = D − A,  D = diag(A 1)                          (MCF, Sec. 3.2)

    i.e. the eigenvectors of the random-walk Laplacian D⁻¹L, through the symmetric form
    D^{-1/2} L D^{-1/2} u = λ u, v = D^{-1/2} u, so the v are D-orthonormal (vᵢᵀ D vⱼ = δᵢⱼ).
    Eigenvalues are sorted ascending, the trivial (constant, λ = 0) eigenfunction is
    dropped, the rest are scaled by √N and zero-padded to ``k`` columns when N − 1 < k.

    Sign convention (deterministic): each eigenfunction is flipped so that its entry of
    largest absolute value is positive (the first such entry on ties); eigenvectors of
    repeated eigenvalues are whatever ``eigh`` returns for the symmetric form.

    Padding: with ``mask``, only the real nodes form the graph (N = Σ mask); padded nodes
    get eigenvalue 3 (above the normalized spectrum [0, 2]) so they sort last, and their
    rows and the columns beyond N − 1 are zero. One compiled shape then serves every
    molecule, and the function can be ``vmap``-ed over a padded batch.

    Args:
      adjacency: ``[N, N]`` symmetric non-negative adjacency of a connected graph.
        Isolated real nodes are given degree 1 so the problem stays well posed (the
        result is then not meaningful for them).
      k: number of eigenfunctions to return (static).
      mask: optional ``[N]`` 0/1 real-node mask.

    Returns:
      ``[N, k]`` float32: column j is √N · v_{j+1}.

    Example:
      >>> A = jnp.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], jnp.float32)
      >>> laplacian_eigenfunctions(A, k=4).shape
      (3, 4)

    References:
      Wang et al., "Swallowing the Bitter Pill: Simplified Scalable Conformer Generation",
      ICML 2024. Belkin & Niyogi, "Laplacian Eigenmaps", Neural Computation 2003.
    """
    adjacency = jnp.asarray(adjacency, jnp.float32)
    if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"adjacency must be square [N, N]; got shape {adjacency.shape}")
    if adjacency.shape[0] < 1:
        raise ValueError("adjacency must have at least one node")
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer; got {k}")
    size = adjacency.shape[0]
    real = jnp.ones((size,), bool) if mask is None else jnp.asarray(mask) > 0
    if real.shape != (size,):
        raise ValueError(f"mask must be [N] = ({size},); got {real.shape}")
    pair = real[:, None] & real[None, :]
    adjacency = jnp.where(pair, adjacency, 0.0)
    n = jnp.sum(real)
    degree = jnp.sum(adjacency, axis=1)
    degree = jnp.where(degree > 0, degree, 1.0)
    inv_sqrt = jax.lax.rsqrt(degree)
    laplacian = jnp.diag(degree) - adjacency  # L = D − A
    sym = inv_sqrt[:, None] * laplacian * inv_sqrt[None, :]  # D^{-1/2} L D^{-1/2}
    sym = jnp.where(pair, sym, 0.0) + jnp.diag(jnp.where(real, 0.0, 3.0))
    _, u = jnp.linalg.eigh(0.5 * (sym + sym.T))  # ascending eigenvalues
    v = inv_sqrt[:, None] * u  # L v = λ D v, vᵀ D v = 1
    v = v[:, 1:]  # drop the trivial eigenfunction
    keep = (jnp.arange(size - 1) < n - 1)[None, :] & real[:, None]
    v = jnp.where(keep, v, 0.0)
    pivot = jnp.argmax(jnp.abs(v), axis=0)
    sign = jnp.sign(v[pivot, jnp.arange(size - 1)])
    v = v * jnp.where(sign == 0, 1.0, sign)[None, :] * jnp.sqrt(n.astype(jnp.float32))
    if size - 1 >= k:
        return v[:, :k]
    return jnp.pad(v, ((0, 0), (0, k - (size - 1))))
