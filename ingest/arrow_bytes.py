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


def spaced_tokens(lines: pa.StringArray) -> tuple[pa.StringArray, np.ndarray, np.ndarray]:
    """The lines split at single spaces (the items of `pc.split_pattern(lines, " ")`)
    without a copy of their bytes: each token but a line's last keeps the space after it
    (a 15 MB PBS block: 5.5 ms against the split's 11). Returns the tokens, where each
    line's tokens begin (n + 1 indices, the last the token count) and which tokens keep a
    space."""
    offsets, data = string_bytes(lines)
    n = len(lines)
    lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    after = (np.flatnonzero(data[lo:hi] == 32) + lo + 1).astype(np.int32)   # after a space
    at = np.searchsorted(after, offsets[:-1], side="right")
    starts = np.insert(after, at, offsets[:-1])          # a line's start before its tokens
    first = np.append(at + np.arange(n), len(starts))
    spaced = np.ones(len(starts), bool)
    spaced[first[1:] - 1] = False                        # each line's last token
    buffer = lines.buffers()[2] if data.size else pa.py_buffer(b"")
    tokens = pa.StringArray.from_buffers(len(starts), pa.py_buffer(np.append(starts, np.int32(
        hi))), buffer)
    return tokens, first, spaced


def key_value_pairs(tokens: pa.StringArray, spaced: np.ndarray | None = None
                    ) -> tuple[pa.StringArray, np.ndarray]:
    """The tokens cut after their first '=' without a copy of their bytes: item 3j is
    token j up to and with that '=' (all of it when it has none), item 3j+1 the rest but
    the space it keeps (`spaced_tokens`; `spaced`: which tokens keep one), item 3j+2 that
    space; and per token the position of its '=' (-1: none)."""
    offsets, _ = string_bytes(tokens)
    eq = np.asarray(pc.find_substring(tokens, "="), np.int64)
    end = offsets[1:] - (spaced if spaced is not None else 0)
    return cut_pieces(tokens, np.minimum(offsets[:-1] + np.where(eq >= 0, eq + 1, np.diff(
        offsets)), end), end), eq
