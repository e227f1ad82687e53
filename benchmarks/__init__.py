"""Benchmarks, one module per kernel family, run by ``jaxlab bench NAME``.

Each module has ``main(argv: list[str] | None = None)`` accepting ``--quick``, and prints
ratios against baselines measured in the same run (``jaxlab.train.timing``).
"""
