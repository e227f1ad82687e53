"""Experiments whose first run stalls: for the hung-worker restart of ``run_all``."""
