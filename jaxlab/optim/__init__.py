"""jaxlab.optim."""
