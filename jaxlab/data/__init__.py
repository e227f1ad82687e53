"""jaxlab.data."""
