"""Lines and fields read straight from a block's bytes with numpy: no Arrow string per
line or field and no Python object per line.

A block of whole lines (`columnar.raw_blocks`) is cut at its line ends and its lines at
their spaces by position; fixed texts (an `op=` prefix) are compared and decimal counts
read eight bytes at a time from 64-bit words (SWAR: one word holds eight digits). For
grammars of fixed fields one space apart, where splitting every line into Arrow strings
costs more than reading them (Beacon's MDS lines: `beacon_mds_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from lassi.ingest.arrow_bytes import every
from lassi.ingest.columnar import has_carriage_return

PAD = 32                        # zero bytes before and after a block (a word read near
                                # either end, or a time of up to 32 bytes, stays inside)
_U = np.uint64
_ZEROS = _U(0x3030303030303030)     # eight `0` characters
_UP = _U(0x7676767676767676)        # + this sets a byte's high bit when it is over 9
_HIGH = _U(0x8080808080808080)
_PAIRS, _QUADS, _OCTET = _U(0x00FF00FF00FF00FF), _U(0x0000FFFF0000FFFF), _U(0xFFFFFFFF)
# word masks keeping the last k of its eight bytes (the bytes before them read as 0s)
_LAST = np.array([~((1 << (8 * (8 - k))) - 1) & (2**64 - 1) for k in range(9)], _U)
MAX_DIGITS = 18                 # 18 digits always fit a LongType


@dataclass(frozen=True)
class ByteLines:
    """A block's lines: `buf` its bytes with PAD zero bytes before and after, each line
    `buf[starts[i]:ends[i]]` (the line end excluded), `words[p]` the little-endian 64-bit
    word of the eight bytes at `buf[p]`."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    words: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)


def byte_lines(data: bytes | bytearray | memoryview) -> ByteLines | None:
    """The lines `columnar.block_lines` gives for whole lines' bytes (a final line end
    ends the last line), or None when a carriage return is among them (universal
    newlines: that reader's own path) or they are 2 GB or more."""
    if has_carriage_return(data) or len(data) + 2 * PAD >= 1 << 31:   # or past int32 positions
        return None
    buf = np.zeros(len(data) + 2 * PAD, np.uint8)
    buf[PAD:PAD + len(data)] = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(buf == 10).astype(np.int32)
    if not len(data) or data[-1] != 10:
        ends = np.append(ends, np.int32(PAD + len(data)))
    starts = np.empty_like(ends)
    starts[:1] = PAD
    starts[1:] = ends[:-1] + 1
    words = np.ndarray((len(buf) - 7,), "<u8", buf, 0, (1,))     # unaligned on purpose
    return ByteLines(buf, starts, ends, words)


def printable(lines: ByteLines) -> np.ndarray:
    """Per line: every byte printable ASCII (space to `~`; `pc.ascii_is_printable`)."""
    body = lines.buf[PAD:len(lines.buf) - PAD]
    odd = np.flatnonzero((body - np.uint8(32)) > 94) + PAD     # line ends and the rest
    odd = odd[lines.buf[odd] != 10]
    ok = np.ones(len(lines), bool)
    ok[np.searchsorted(lines.ends, odd)] = False
    return ok


def split_at_spaces(lines: ByteLines, spaces: int) -> tuple[np.ndarray, np.ndarray]:
    """The lines with exactly `spaces` spaces (their indices) and those spaces' positions
    in `buf`, one row per line."""
    at = np.flatnonzero(lines.buf == 32).astype(np.int32)
    first = np.searchsorted(at, lines.starts)
    rows = np.flatnonzero(np.searchsorted(at, lines.ends) - first == spaces)
    return rows, at[first[rows][:, None] + np.arange(spaces, dtype=np.int32)]


@dataclass(frozen=True)
class Prefixes:
    """Texts (one per field of a row) as the 64-bit words `starts_with` compares: word k
    is bytes 8*offset[k]... of text field[k], `masks[k]` keeping its own bytes."""

    field: np.ndarray
    offset: np.ndarray
    words: np.ndarray
    masks: np.ndarray


def prefix_words(texts: list[str]) -> Prefixes:
    """`Prefixes` of texts, one per field."""
    field, offset, words, masks = [], [], [], []
    for i, t in enumerate(texts):
        raw = t.encode()
        for at in range(0, len(raw), 8):
            chunk = raw[at:at + 8]
            field.append(i)
            offset.append(at)
            words.append(int.from_bytes(chunk.ljust(8, b"\0"), "little"))
            masks.append((1 << (8 * len(chunk))) - 1)
    return Prefixes(np.array(field), np.array(offset, np.int32), np.array(words, _U),
                    np.array(masks, _U))


def starts_with(lines: ByteLines, at: np.ndarray, prefixes: Prefixes) -> np.ndarray:
    """Per row of `at` (rows x fields: where each field starts), whether every field
    begins with its text. The caller checks the fields are long enough: their bytes are
    compared as far as the texts go, whatever follows them."""
    words = lines.words[at[:, prefixes.field] + prefixes.offset]    # one gather, in order
    return ((words & prefixes.masks) == prefixes.words).all(axis=1)


def decimals(lines: ByteLines, ends: np.ndarray, lengths: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """The numbers written in the `lengths` (0 to MAX_DIGITS) bytes before each of `ends`,
    and whether those bytes are all digits (a length of 0 reads as 0)."""
    value, ok = _eight_digits(lines.words[ends - 8], np.minimum(lengths, 8))
    long = np.flatnonzero(lengths > 8)                  # the rest: a word per 8 digits
    if len(long):
        end, left = ends.ravel()[long], lengths.ravel()[long] - 8
        flat_value, flat_ok = value.reshape(-1), ok.reshape(-1)     # views
        scale = 1
        while len(long):
            end, scale = end - 8, scale * 100_000_000
            v, good = _eight_digits(lines.words[end - 8], np.minimum(left, 8))
            flat_value[long] += v * scale
            flat_ok[long] &= good
            more = left > 8
            long, end, left = long[more], end[more], left[more] - 8
    return value, ok


def _eight_digits(word: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The number in the last n bytes of each word, and whether they are digits."""
    x = (word ^ _ZEROS) & _LAST[n]          # a digit's byte becomes its value 0-9
    ok = ((x | (x + _UP)) & _HIGH) == 0
    x = (x * _U(10) + (x >> _U(8))) & _PAIRS
    x = (x * _U(100) + (x >> _U(16))) & _QUADS
    x = (x * _U(10_000) + (x >> _U(32))) & _OCTET
    return x.astype(np.int64), ok


def strings_at(lines: ByteLines, starts: np.ndarray, ends: np.ndarray) -> pa.StringArray:
    """The texts `buf[starts[i]:ends[i]]` (in buffer order, none overlapping) as Arrow
    strings, copied once (cut as `arrow_bytes.cut_pieces` cuts a string array)."""
    if not len(starts):
        return pa.array([], pa.string())
    bounds = np.empty(2 * len(starts), np.int32)
    bounds[0::2], bounds[1::2] = starts, ends       # text, gap, text, gap, ..., text
    spans = pa.StringArray.from_buffers(len(bounds) - 1, pa.py_buffer(bounds),
                                        pa.py_buffer(lines.buf))
    return every(spans, 2, 0)
