"""jaxlab's TFDS builders for public datasets the TFDS catalog lacks.

Importing this package registers each builder under its TFDS name, so that
``jaxlab.data.streaming.open_source(NAME, split)`` and ``tfds build NAME`` find it.

``MOCK_EXAMPLES`` maps a builder's name to its ``mock_example(index, config)``, where random
features would not make a usable record (a molecule's mol block must parse): under
``jaxlab.data.streaming.mock_datasets`` its records come from that function.
"""

from jaxlab.data.tfds_builders import (
    geom,
    planetoid,  # noqa: F401
    wikitext103,  # noqa: F401
)

MOCK_EXAMPLES = {"geom": geom.mock_example}
