"""Numpy views of an Arrow string array's bytes (no copy), for readers that look at bytes
rather than text: ISO-8601 times (`iso_times`), blank lines, quotes, header candidates."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def string_bytes(text: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of a string array in numpy, without a copy: value i is
    data[offsets[i]:offsets[i + 1]]."""
    n = len(text)
    offsets = np.frombuffer(text.buffers()[1], np.int32)[text.offset:text.offset + n + 1]
    data = text.buffers()[2]
    return offsets, (np.frombuffer(data, np.uint8) if data is not None and data.size
                     else np.zeros(0, np.uint8))


def first_bytes(text: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the non-empty values and the first byte of each."""
    offsets, data = string_bytes(text)
    filled = np.flatnonzero(offsets[1:] > offsets[:-1])
    return filled, data[offsets[filled]]
