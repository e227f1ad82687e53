"""jaxlab: JAX/Flax re-implementations of ICML 2024 methods, tested and reproduced.

Matrix-product precision (``docs/precision.md``): a kernel multiplies at the ambient
``jax.default_matmul_precision``, which the experiment harness sets from the config's
``matmul_precision``. A kernel whose result rests on the precision of cancelling products
(``jaxlab.ood.knn_score``, ``jaxlab.ood.linear_cka``, ``jaxlab.diffusion.optimal_denoiser``,
``jaxlab.chem.kabsch_rmsd``, ``jaxlab.causal.correlation_matrix``) also takes
``precision: jax.lax.PrecisionLike = None``, passed to each of its products, ``None``
meaning the ambient precision. Kernels that apply the caller's operators (lasso/FISTA, the
structure attack) multiply at the caller's.
"""

__version__ = "0.1.0"
