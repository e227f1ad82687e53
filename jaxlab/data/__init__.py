"""Offline datasets (TFDS builders over local files) and grain pipelines."""

from jaxlab.data.images import load_images
from jaxlab.data.paths import DataNotFoundError, require_file, resolve_data_dir
from jaxlab.data.pipeline import batch_dataset

__all__ = ["DataNotFoundError", "batch_dataset", "load_images", "require_file", "resolve_data_dir"]
