"""jaxlab's TFDS builders for public datasets the TFDS catalog lacks.

Importing this package registers each builder under its TFDS name, so that
``jaxlab.data.streaming.open_source(NAME, split)`` and ``tfds build NAME`` find it.
"""

from jaxlab.data.tfds_builders import (
    geom,  # noqa: F401
    planetoid,  # noqa: F401
    wikitext103,  # noqa: F401
)
