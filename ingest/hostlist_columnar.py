"""Slurm host lists expanded column-wise (Arrow and numpy), as
`lassi.core.hostlist.expand_hostlist` expands them with their duplicates dropped.

`expand_hostlists` reads values that are one name or one bracket group
(`cn[00000-00028,40]`, a prefix and a suffix around it), `expand_host_lists` comma lists
of those (`a1,cpn-f13-03-[01-02],cpn-f13-04-[01-02]`). Each says where its reading is
exact; other values (several bracket groups in one name, spaces, bad ranges) are for the
caller's line parser. Each name of a (prefix, suffix, width) is written once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.columnar import all_of, any_of, dense_codes, matches

from lassi.core.hostlist import MAX_HOSTS

_NAME = r"^[A-Za-z0-9_.-]+$"
_GROUP = (r"^(?P<pre>[A-Za-z0-9_.-]*)\[(?P<spec>[0-9]{1,9}(?:-[0-9]{1,9})?"
          r"(?:,[0-9]{1,9}(?:-[0-9]{1,9})?)*)\](?P<post>[A-Za-z0-9_.-]*)$")


def expand_host_lists(text: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`expand_hostlist` with its duplicates dropped (null when empty) of comma lists of
    names and bracket groups (no spaces: callers strip), and where the reading is exact:
    every element one name or one bracket group, at most MAX_HOSTS names in all."""
    n = len(text)
    pieces = pc.split_pattern(text, ",")
    flat = pieces.flatten()
    owner = np.asarray(pc.list_parent_indices(pieces))
    depth = (np.asarray(pc.count_substring(flat, "[")).astype(np.int64)
             - np.asarray(pc.count_substring(flat, "]")))
    before = np.cumsum(depth) - depth                  # brackets open before each piece
    first = np.asarray(pieces.offsets)[:-1][owner]     # its value's first piece
    starts = np.flatnonzero(before == before[first])   # a comma outside brackets before it
    groups = pc.binary_join(pa.ListArray.from_arrays(
        pa.array(np.append(starts, len(flat)).astype(np.int32)), flat), ",")
    g_owner = owner[starts]
    g_nodes, g_ok, g_size = _expand_groups(groups)
    g_ok = np.asarray(all_of(g_ok, pc.not_equal(groups, "")))
    bad = np.zeros(n, bool)
    bad[g_owner[~g_ok]] = True
    bad |= np.bincount(g_owner, weights=g_size, minlength=n) > MAX_HOSTS
    names = g_nodes.flatten()
    who = g_owner[np.asarray(pc.list_parent_indices(g_nodes))]
    keep = ~bad[who]
    several = np.bincount(g_owner, minlength=n) > 1    # repeats across a value's groups
    if several[who].any():
        codes = np.asarray(pc.dictionary_encode(names).indices).astype(np.int64)
        keep &= ~pd.Series(who * (codes.max(initial=0) + 1) + codes).duplicated().to_numpy()
    kept = np.flatnonzero(keep)
    who, names = who[kept], names.take(pa.array(kept))
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(who, minlength=n), out=offsets[1:])
    has = np.zeros(n, bool)
    has[who] = True
    return (pa.ListArray.from_arrays(pa.array(offsets), names, mask=pa.array(~has)),
            pa.array(~bad))


def expand_hostlists(text: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`expand_hostlist` with its duplicates dropped (`beacon_job`'s nodes; null when
    empty) of values that are one name or one bracket group, and where the value is one
    (or empty)."""
    nodes, ok, _ = _expand_groups(text)
    return nodes, ok


def _expand_groups(text: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """`expand_hostlists`, and the number of names of each value before its duplicates
    are dropped."""
    n = len(text)
    plain = matches(text, _NAME)
    grouped, pre, post, owner, lo, hi, width = _ranges(text)
    size = hi - lo + 1
    bad = np.zeros(n, bool)
    bad[owner[size < 1]] = True
    total = np.bincount(owner, weights=np.maximum(size, 0), minlength=n).astype(np.int64)
    bad |= total > MAX_HOSTS
    take = np.flatnonzero(~bad[owner])
    owner, lo, hi, width = owner[take], lo[take], hi[take], width[take]
    size = hi - lo + 1
    combo = _combos(pre, post, owner, width)
    values = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size) \
        + np.repeat(lo, size)
    who = np.repeat(owner, size)
    table, index = _names(pre, post, owner, width, combo, np.repeat(combo, size), values)
    twice = np.zeros(n, bool)
    twice[_overlapping(owner, lo, hi)] = True
    if twice.any():                                   # ranges that meet: drop repeats
        codes = np.asarray(pc.dictionary_encode(table).indices).astype(np.int64)[index]
        again = pd.Series(who * (codes.max(initial=0) + 1) + codes).duplicated().to_numpy()
        keep = np.flatnonzero(~again)
        who, index = who[keep], index[keep]
    single = np.flatnonzero(np.asarray(plain))      # plain names: one node each
    who = np.concatenate([who, single])
    index = np.concatenate([index, len(table) + np.arange(len(single))])
    table = pa.concat_arrays([table, text.take(pa.array(single))])
    order = np.argsort(who, kind="stable")           # two sorted runs: a merge
    who, names = who[order], table.take(pa.array(index[order]))
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(who, minlength=n), out=offsets[1:])
    has = np.zeros(n, bool)
    has[who] = True
    nodes = pa.ListArray.from_arrays(pa.array(offsets), names, mask=pa.array(~has))
    ok = any_of(pc.equal(text, ""), plain, all_of(pa.array(grouped), pc.invert(pa.array(bad))))
    return nodes, ok, total + np.asarray(plain)


def _ranges(text: pa.Array) -> tuple[np.ndarray, pa.Array, pa.Array, np.ndarray, np.ndarray,
                                     np.ndarray, np.ndarray]:
    """Of the values that are one bracket group: where they are, each value's prefix and
    suffix (null for the others), and per range its value, low and high numbers and
    width (the digits of its low end). The numbers are cast at once, not per end."""
    group = pc.extract_regex(text, _GROUP)
    grouped = np.asarray(pc.is_valid(group))
    rows = np.flatnonzero(grouped)
    items = pc.split_pattern(group.field("spec").take(pa.array(rows)), ",")
    owner = rows[np.asarray(pc.list_parent_indices(items))]
    bounds = pc.split_pattern(items.flatten(), "-")     # [low] or [low, high]
    ends = np.asarray(bounds.offsets).astype(np.int64)
    numbers = bounds.flatten()
    value = np.asarray(pc.cast(numbers, pa.int64()))
    lo, hi = value[ends[:-1]], value[ends[1:] - 1]
    width = np.asarray(pc.utf8_length(numbers)).astype(np.int64)[ends[:-1]]
    return grouped, group.field("pre"), group.field("post"), owner, lo, hi, width


def _combos(pre: pa.Array, post: pa.Array, owner: np.ndarray, width: np.ndarray
            ) -> np.ndarray:
    """Per range, a number for its (prefix, suffix, width): the names it makes differ only
    in their number. `pre` and `post` are per value, `owner` each range's value."""
    p, q = (np.asarray(pc.fill_null(pc.dictionary_encode(x).indices, 0), np.int64)[owner]
            for x in (pre, post))                     # (null for values not grouped)
    key = (p * (q.max(initial=0) + 1) + q) * (width.max(initial=0) + 1) + width
    return dense_codes(key)[1]


def _names(pre: pa.Array, post: pa.Array, owner: np.ndarray, width: np.ndarray,
           combo: np.ndarray, combos: np.ndarray, values: np.ndarray
           ) -> tuple[pa.Array, np.ndarray]:
    """The node names of the expanded values as a table of names and each value's index
    in it: per (prefix, suffix, width), every name of its range of numbers written once (a
    machine's nodes: tens of thousands), or each distinct number once when that range is
    much wider than the names."""
    out = np.zeros(len(values), np.int64)
    tables, base = [], 0
    count = int(combo.max(initial=-1)) + 1
    for c in range(count):
        first = int(np.flatnonzero(combo == c)[0])
        head, tail = pre[int(owner[first])].as_py(), post[int(owner[first])].as_py()
        w = int(width[first])
        at = np.flatnonzero(combos == c) if count > 1 else slice(None)   # one: all of them
        v = values[at]
        low, high = int(v.min()), int(v.max())
        if high - low + 1 <= 4 * len(v) + 100_000:
            numbers, index = range(low, high + 1), v - low
        else:
            distinct, index = np.unique(v, return_inverse=True)
            numbers = distinct.tolist()
        tables.append(pa.array([f"{head}{k:0{w}d}{tail}" for k in numbers], pa.string()))
        out[at] = index + base
        base += len(tables[-1])
    if not tables:
        return pa.array([], pa.string()), out
    return pa.concat_arrays(tables), out


def _overlapping(owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The owners of ranges that meet another of the same owner (sorted by their low ends,
    a range meets another only if it meets the next). Ranges come by owner, and a list's
    ranges mostly in ascending order: then no sort is needed."""
    o, a, b = owner, lo, hi
    same = o[1:] == o[:-1]
    if (o[1:] < o[:-1]).any() or (same & (a[1:] < a[:-1])).any():
        order = np.lexsort((lo, owner))
        o, a, b = owner[order], lo[order], hi[order]
    meet = (o[1:] == o[:-1]) & (a[1:] <= b[:-1])
    return o[1:][meet]
