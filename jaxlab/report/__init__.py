"""jaxlab.report."""
