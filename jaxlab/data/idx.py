"""Reader for the IDX format of (Fashion-)MNIST (``*-idx3-ubyte[.gz]``)."""

from __future__ import annotations

import gzip
import os

import numpy as np

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Reads an IDX file (optionally gzipped) into an array of its declared shape.

    Raises:
      ValueError: the file is not IDX or its size disagrees with its header.
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _DTYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    dtype = np.dtype(_DTYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int(s) for s in np.frombuffer(raw[4:header], dtype=">u4"))
    data = np.frombuffer(raw[header:], dtype=dtype)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header shape {shape} but {data.size} values")
    return data.reshape(shape)
