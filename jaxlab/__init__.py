"""jaxlab: JAX/Flax re-implementations of ICML 2024 methods, tested and reproduced."""

__version__ = "0.1.0"
