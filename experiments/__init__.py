"""Registered experiments, one package each (see ``jaxlab.report.registry``)."""
