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


def cut_pieces(text: pa.StringArray, *cuts: np.ndarray) -> pa.StringArray:
    """Each value cut at the given byte positions (one array per cut, absolute positions
    into the array's data as `string_bytes` gives them, ascending within a value) into
    len(cuts) + 1 pieces, without a copy of the bytes: piece k of value j is item
    j * (len(cuts) + 1) + k."""
    offsets, _ = string_bytes(text)
    k = len(cuts) + 1
    bounds = np.empty(k * len(text) + 1, np.int32)
    bounds[0::k] = offsets
    for i, cut in enumerate(cuts, 1):
        bounds[i::k] = cut
    return pa.StringArray.from_buffers(k * len(text), pa.py_buffer(bounds), text.buffers()[2])


def every(pieces: pa.StringArray, k: int, first: int) -> pa.StringArray:
    """Pieces first, first + k, first + 2k, ... (one per value of a `cut_pieces` array)."""
    return pieces.take(pa.array(np.arange(first, len(pieces), k)))


def key_value_pairs(tokens: pa.StringArray) -> tuple[pa.StringArray, np.ndarray]:
    """The tokens cut after their first '=' without a copy of their bytes: item 2j is
    token j up to and with that '=' (all of it when it has none), item 2j+1 the rest;
    and per token the position of its '=' (-1: none)."""
    offsets, _ = string_bytes(tokens)
    eq = np.asarray(pc.find_substring(tokens, "="), np.int64)
    return cut_pieces(tokens, offsets[:-1] + np.where(eq >= 0, eq + 1, np.diff(offsets))), eq
