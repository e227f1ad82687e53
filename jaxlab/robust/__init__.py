"""jaxlab.robust."""
