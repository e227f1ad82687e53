"""jaxlab's own TFDS builders for public datasets the TFDS catalog lacks; importing this
package registers each by its name (``tfds.data_source("wikitext103", ...)``)."""

from jaxlab.data.tfds_builders import wikitext103  # noqa: F401
