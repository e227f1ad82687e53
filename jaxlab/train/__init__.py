"""jaxlab.train."""
