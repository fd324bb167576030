"""Numpy views of an Arrow string array's bytes (no copy), for readers that look at bytes
rather than text: ISO-8601 times (`iso_times`), blank lines, quotes, header candidates; and
string arrays cut over the same bytes (no copy)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


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


def key_value_pairs(tokens: pa.StringArray) -> tuple[pa.StringArray, np.ndarray]:
    """The tokens cut after their first '=' without a copy of their bytes: item 2j is
    token j up to and with that '=' (all of it when it has none), item 2j+1 the rest;
    and per token the position of its '=' (-1: none)."""
    offsets, _ = string_bytes(tokens)
    eq = np.asarray(pc.find_substring(tokens, "="), np.int64)
    cut = offsets[:-1] + np.where(eq >= 0, eq + 1, np.diff(offsets))
    bounds = np.empty(2 * len(tokens) + 1, np.int32)
    bounds[0::2], bounds[1::2] = offsets, cut
    pairs = pa.StringArray.from_buffers(2 * len(tokens), pa.py_buffer(bounds),
                                        tokens.buffers()[2])
    return pairs, eq
