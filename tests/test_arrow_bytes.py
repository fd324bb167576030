"""`lassi.ingest.arrow_bytes`: the cuts made over a string array's bytes without a copy
equal Arrow's own splits of the same strings."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.arrow_bytes import key_value_pairs, spaced_tokens


def _random_lines(rng: random.Random) -> pa.StringArray:
    words = ["", "a", "k=v", "=v", "k=", "a=b=c", "user=u1", "héllo=wörld"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
             for _ in range(rng.randint(0, 12))]
    arr = pa.array(lines, pa.string())
    if len(arr) > 2 and rng.random() < 0.4:                # offsets not starting at 0
        arr = arr.slice(1, len(arr) - 2)
    return arr


def test_spaced_tokens_are_the_lines_split_at_spaces():
    """Each line's tokens are its `split_pattern(" ")` items, each but the line's last
    with one trailing space: leading, trailing and doubled spaces, empty lines, sliced
    arrays, multi-byte text."""
    rng = random.Random(5)
    seen = 0
    for _ in range(500):
        lines = _random_lines(rng)
        tokens, first, spaced = spaced_tokens(lines)
        want = pc.split_pattern(lines, " ")
        offsets = np.asarray(want.offsets)
        assert first.tolist() == (offsets - offsets[0]).tolist()
        raw = tokens.to_pylist()
        assert [t[:-1] if s else t for t, s in zip(raw, spaced, strict=True)] == \
            want.flatten().to_pylist()
        assert all(t.endswith(" ") for t, s in zip(raw, spaced, strict=True) if s)
        seen += len(raw)
    assert seen > 3000


def test_key_value_pairs_cut_tokens_at_their_first_equals_sign():
    """Item 3j is token j up to and with its first '=' (all of it without one), item
    3j+1 the rest, without the space a spaced token keeps (item 3j+2)."""
    rng = random.Random(6)
    for _ in range(300):
        lines = _random_lines(rng)
        tokens, _, spaced = spaced_tokens(lines)
        pieces, eq = key_value_pairs(tokens, spaced)
        got = pieces.to_pylist()
        for j, (tok, s) in enumerate(zip(tokens.to_pylist(), spaced, strict=True)):
            text = tok[:-1] if s else tok
            at = text.find("=")
            assert eq[j] == (len(text[:at].encode()) if at >= 0 else -1)
            key, value = (text[:at + 1], text[at + 1:]) if at >= 0 else (text, "")
            assert got[3 * j:3 * j + 3] == [key, value, " " if s else ""]
