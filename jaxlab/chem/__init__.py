"""jaxlab.chem."""
