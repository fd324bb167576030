"""`byte_fields` reads lines and fields from raw bytes as Python reads them.

Each reader is compared with its plain-Python or Arrow meaning on hand-made and random
inputs: lines with `columnar.block_lines`, printable lines with `pc.ascii_is_printable`,
counts with `int` and `str.isdigit` (the bytes next to the digits in ASCII, `/` and `:`,
and bytes past 0x7F included), prefixes with `bytes.startswith`, spans with slices.
Pure Python.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow.compute as pc
import pytest
from lassi.ingest import byte_fields as bf
from lassi.ingest.columnar import block_lines

BLOCKS = [b"a b\n", b"a b", b"\n", b"\n\nx\n", b"one\n\ntwo  three\n last", b"x" * 40 + b"\n",
          b"caf\xc3\xa9 \x01\x7f~\n\t tab\n"]


@pytest.mark.parametrize("data", BLOCKS)
def test_lines_and_printable_as_arrow_reads_them(data):
    lines = bf.byte_lines(data)
    want = block_lines(bytearray(data))
    got = [bytes(lines.buf[s:e]).decode() for s, e in zip(lines.starts, lines.ends, strict=True)]
    assert got == want.to_pylist()
    assert bf.printable(lines).tolist() == pc.ascii_is_printable(want).to_pylist()


def test_carriage_returns_are_left_to_block_lines():
    assert bf.byte_lines(b"a b\r\nc\n") is None


def test_split_at_spaces_finds_each_lines_spaces():
    lines = bf.byte_lines(b"a b c\nab c\n  \na b c d\n")
    rows, at = bf.split_at_spaces(lines, 2)
    assert rows.tolist() == [0, 2]
    assert [[p - lines.starts[r] for p in row] for r, row in zip(rows, at, strict=True)] == \
        [[1, 3], [0, 1]]


def test_decimals_equal_int_and_isdigit():
    rng = random.Random(7)
    alphabet = b"0123456789" * 6 + b"/:a \xff\x00"
    texts = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, bf.MAX_DIGITS)))
             for _ in range(4000)]
    texts += [b"9" * bf.MAX_DIGITS, b"0" * bf.MAX_DIGITS, b"", b"7", b"12345678",
              b"123456789", b"1234567890123456", b"12345678901234567"]
    data = b" ".join(texts) + b"\n"
    lines = bf.byte_lines(data)
    ends = np.cumsum([len(t) + 1 for t in texts]) - 1 + bf.PAD
    value, ok = bf.decimals(lines, ends, np.array([len(t) for t in texts]))
    want_ok = [all(48 <= c <= 57 for c in t) for t in texts]
    assert ok.tolist() == want_ok
    assert 100 < sum(want_ok) < len(texts)
    assert [v for v, good in zip(value.tolist(), want_ok, strict=True) if good] == \
        [int(t or b"0") for t, good in zip(texts, want_ok, strict=True) if good]


def test_decimals_keep_their_rows_and_columns():
    """A 2-D array of fields (rows x columns) reads each field in place."""
    data = b"1 22 333333333\n4444444444 5 66\n"
    lines = bf.byte_lines(data)
    rows, at = bf.split_at_spaces(lines, 2)
    ends = np.concatenate([at, lines.ends[rows, None]], axis=1)
    starts = np.concatenate([lines.starts[rows, None], at + 1], axis=1)
    value, ok = bf.decimals(lines, ends, ends - starts)
    assert value.tolist() == [[1, 22, 333333333], [4444444444, 5, 66]] and ok.all()


def test_starts_with_and_strings_at():
    words = ["open=", "getxattr=", "crossdir_rename="]
    prefixes = bf.prefix_words(words)
    cases = [b"open=1 getxattr=2 crossdir_rename=3", b"open=1 getxattr=2 crossdir_renamX=3",
             b"opEn=1 getxattr=2 crossdir_rename=3", b"open=1 getxattrX2 crossdir_rename=3",
             b"open=1 getxattr=2 crossdir_rename="]
    lines = bf.byte_lines(b"\n".join(cases))
    rows, at = bf.split_at_spaces(lines, 2)
    starts = np.concatenate([lines.starts[rows, None], at + 1], axis=1)
    got = bf.starts_with(lines, starts, prefixes)
    want = [all(f.startswith(w.encode()) for f, w in zip(c.split(b" "), words, strict=True))
            for c in cases]
    assert got.tolist() == want == [True, False, False, False, True]
    texts = bf.strings_at(lines, lines.starts, lines.starts + 4)
    assert texts.to_pylist() == [c[:4].decode() for c in cases]
    assert bf.strings_at(lines, lines.starts[:0], lines.ends[:0]).to_pylist() == []
