"""Cray ALPS apsys logs read column-wise (Arrow): the fast path of `lassi.ingest.alps`.

A line is read here when it is printable ASCII with single spaces between its syslog
fields and either is not an apsys line, or is one whose time is ISO-8601 (`.fff` or
`.ffffff`, an offset, `Z` or none: local in `tz`), whose message is plain items one `, `
apart (`key=value`, `key="text"` without `, ` inside, `Word`) naming each read key once,
with a numeric apid, and, for a Starting, a batch_id and a node_list of plain ranges
(`8-10,12`). Any other line is read by `alps.record`, the line parser's own reading
(which also gives the quarantine reason), and joins the others as an event of the same
form. A Starting's nodes are expanded with numpy in the block's thread; a plain `aprun`
launch command is read by one pattern, any other by `alps.parse_launch`, each distinct
command of a block once.

Events are then paired as `alps.parse_files` pairs them, with numpy over the apids'
dictionary: the first Starting and the first Finishing of an apid (a later one is
quarantined), a row per Starting (end None when it never finished), a Finishing without
Starting quarantined. The rows equal the line parser's (tests compare them).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.alps import (
    SOURCE,
    parse_launch,
    record,
    to_int,
)
from lassi.ingest.arrow_bytes import cut_pieces, every, string_bytes
from lassi.ingest.columnar import (
    READ_THREADS,
    all_of,
    any_of,
    blank_lines,
    dense_codes,
    int_list_pattern,
    int_ranges,
    iso_micros,
    kept_rows,
    list_item,
    matches,
    table_schema,
    take_ascending,
    utc_timestamps,
)
from lassi.ingest.driver_reads import FileReads, files_parser

from lassi.core.hostlist import MAX_HOSTS
from lassi.core.quarantine import ParseStats, Quarantined

KEYS = ("apid", "batch_id", "user", "cmd_line", "num_nodes", "node_list", "exit_code")
_KEY, _WORD = r"[A-Za-z_][A-Za-z0-9_]*", r"[A-Za-z][A-Za-z0-9_]*"
# a message of plain items one `, ` apart: `Word`, `key=value` (no spaces or quotes; a
# comma only inside, as in `1-2,5`) or `key="text"` (no escapes, no `, ` inside: the items
# are cut at each `, `)
_QUOTED = r'"(?:[^"\\,]|,+[^"\\ ,])*,*"'
_ITEM = rf'(?:{_KEY}=(?:{_QUOTED}|[^", ]*(?:,[^", ]+)*)|{_WORD})'
_MESSAGE = rf"^{_ITEM}(?:, {_ITEM})*$"
_KINDS = pa.array(["Starting", "Finishing"])
_KEYS_AND_KINDS = pa.array([*(k + "=" for k in KEYS), *_KINDS.to_pylist()])  # as items begin
_NIDS = int_list_pattern(7)          # plain nid ranges: `8-10,12`
# printable, no space, quote or backslash (alps._tokens splits such a command at spaces);
# an exe token has no `=` (an assignment is skipped) and does not begin with `-`
_ARG = r"[!#-&(-\[\]-~]+"
_EXE = r"[!#-&(-,.-<>-\[\]-~][!#-&(-<>-\[\]-~]*"
_OPT = r" -[NdSj] [0-9]{1,9}"                # aprun options that take one number
_PLAIN_APRUN = rf"^aprun(?:{_OPT})* -n (?P<n>[0-9]{{1,9}})(?:{_OPT})* (?P<exe>{_EXE})(?: {_ARG})*$"
_WRAPPERS = pa.array(["env", "time", "nohup"])
_EPOCH = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)
_STR = ("kind", "apid", "batch_id", "user", "cmd_line", "num_nodes", "node_list",
        "exit_code", "exe", "raw")


def _events_schema() -> pa.Schema:
    return pa.schema([pa.field("seq", pa.int64()), pa.field("file", pa.int32()),
                      pa.field("line_no", pa.int64()), pa.field("time", pa.int64()),
                      pa.field("procs", pa.int64()),
                      *(pa.field(name, pa.string()) for name in _STR),
                      pa.field("nodes", pa.list_(pa.string()))])


@dataclass
class _Block:
    lines: int
    events: pa.Table                       # seq: the line's index in the block
    slow: list[tuple[int, str]]
    ignored: int
    other: int


@dataclass
class _Parse(FileReads):
    """Starting and Finishing events across the files of one ingest."""

    source = SOURCE
    events: list[pa.Table] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    seq: int = 0

    def file(self, path: str | Path, pool: ThreadPoolExecutor) -> None:
        """Read one file's events."""
        blocks = self.blocks(path, partial(_fast, tz=self.tz), pool, lambda lines: _Block(
            len(lines), _events_schema().empty_table(), list(enumerate(lines)), 0, 0))
        if blocks is None:
            return
        self.stats.files += 1
        self.files.append(str(path))
        first = 0
        for block in blocks:
            self._block(block, first)
            first += block.lines

    def _block(self, block: _Block, first: int) -> None:
        file, file_idx = self.files[-1], len(self.files) - 1
        self.stats.lines_read += block.lines
        self.stats.lines_used += block.ignored + block.other
        self.bump("ignored", block.ignored)
        self.bump("other_apsys", block.other)
        rows = []
        for i, line in block.slow:
            try:
                kind, event = record(line, self.tz)
            except ValueError as exc:
                self._reject(file, first + i + 1, line, str(exc))
                continue
            if event is None:
                self.stats.lines_used += 1
                self.bump(kind)
                continue
            when_, kv, fields = event
            nodes, _, exe, procs = fields if fields else (None, None, None, None)
            rows.append([self.seq + i, file_idx, first + i + 1, (when_ - _EPOCH) // _US,
                         procs, kind, *(kv.get(k) for k in _STR[1:-2]), exe, line, nodes])
        ev = block.events
        ev = ev.set_column(0, "seq", pc.add(ev.column("seq"), self.seq))
        ev = ev.set_column(1, "file", pa.array(np.full(ev.num_rows, file_idx, np.int32)))
        ev = ev.set_column(2, "line_no", pc.add(ev.column("line_no"), first))
        self.events.append(ev)
        if rows:
            self.events.append(pa.Table.from_pylist(
                [dict(zip(_events_schema().names, r, strict=True)) for r in rows],
                schema=_events_schema()))
        self.seq += block.lines

    def _reject(self, file: str, line_no: int, raw: str, reason: str) -> None:
        self.stats.lines_quarantined += 1
        self.quarantine.append(Quarantined(SOURCE, file, line_no, raw, reason))

    def finish(self) -> tuple[pa.Table, list[Quarantined], ParseStats]:
        """Pair the events; a second Starting or Finishing of an apid and a Finishing
        without Starting are quarantined."""
        events = (pa.concat_tables(self.events) if self.events    # chunks: not copied
                  else _events_schema().empty_table())
        order = np.asarray(pc.sort_indices(events.column("seq")), np.int64)  # in line order
        in_order = bool((np.diff(order) > 0).all())      # no line read by the line parser
        apid, kind = (events.column(c) if in_order else events.column(c).take(order)
                      for c in ("apid", "kind"))
        apid = pc.dictionary_encode(apid.combine_chunks())
        is_start = np.asarray(pc.equal(kind, "Starting"))
        pos = np.arange(len(order))
        key = np.asarray(apid.indices, np.int64) * 2 + is_start
        first = np.full(2 * len(apid.dictionary), len(order), np.int64)
        np.minimum.at(first, key, pos)
        later = first[key] != pos

        def name(i: int) -> str:                        # the apid of the i-th event
            return apid.dictionary[apid.indices[i].as_py()].as_py()

        for i in np.flatnonzero(later):
            what = "Starting" if is_start[i] else "Finishing"
            self._reject_event(events, int(order[i]), f"second {what} for apid {name(i)}")
        start_of, end_of = first[1::2], first[0::2]            # per apid: its first of each
        has = len(order)
        for i in np.sort(end_of[(end_of < has) & (start_of == has)]):
            self._reject_event(events, int(order[i]),
                               f"Finishing without Starting for apid {name(i)}")
        starts = np.sort(start_of[start_of < has])
        ends = end_of[np.asarray(apid.indices, np.int64)[starts]]
        finished = ends < has
        self.stats.lines_used += len(starts) + int(finished.sum())
        self.bump("unfinished", int((~finished).sum()))
        start_fields = events.select(["apid", "batch_id", "user", "exe", "cmd_line", "nodes",
                                      "num_nodes", "procs", "time"])
        end_fields = events.select(["time", "exit_code"])
        with ThreadPoolExecutor(READ_THREADS) as pool:   # in line order: starts ascend
            started = (take_ascending(start_fields, starts, pool) if in_order
                       else start_fields.take(order[starts]))
        rows, mismatch = _rows(started, end_fields.take(order[np.where(finished, ends, 0)]),
                               finished)
        self.bump("node_count_mismatch", mismatch)
        self.stats.rows = rows.num_rows
        return rows, self.quarantine, self.stats

    def _reject_event(self, events: pa.Table, i: int, reason: str) -> None:
        self._reject(self.files[events.column("file")[i].as_py()],
                     events.column("line_no")[i].as_py(), events.column("raw")[i].as_py(),
                     reason)


parse_files = files_parser(_Parse)


# --- rows -------------------------------------------------------------------------------
def _rows(starts: pa.Table, ends: pa.Table, finished: np.ndarray) -> tuple[pa.Table, int]:
    """app_run rows of the Startings (alps._row) and their Finishings (where `finished`),
    and how many state another node count than they list."""
    n = starts.num_rows
    nodes = starts.column("nodes")                     # chunks: not joined (a copy)
    listed = np.asarray(pc.is_valid(nodes))
    length = np.asarray(pc.fill_null(pc.list_value_length(nodes), 0))
    stated = _ints(starts.column("num_nodes"))
    known = np.asarray(pc.is_valid(stated))
    said = np.asarray(pc.fill_null(stated, 0))
    n_nodes = pa.array(np.where(listed, length, said), pa.int64(), mask=~listed & ~known)
    mismatch = int((listed & known & (said != length)).sum())
    unfinished = pa.array(~finished)
    cols = {
        "app_id": starts.column("apid"), "job_id": starts.column("batch_id"),
        "user": starts.column("user"),
        "project": pa.nulls(n, pa.string()), "job_name": pa.nulls(n, pa.string()),
        "exe": starts.column("exe"), "command": starts.column("cmd_line"),
        "nodes": nodes, "n_nodes": n_nodes.cast(pa.int32()),
        "n_procs": starts.column("procs").cast(pa.int32()),
        "start": utc_timestamps(starts.column("time").combine_chunks()),
        "end": utc_timestamps(pc.if_else(unfinished, None,
                                         ends.column("time").combine_chunks())),
        "exit_status": pc.if_else(unfinished, None,
                                  _ints(ends.column("exit_code"))).cast(pa.int32()),
        "source": pa.repeat(pa.scalar(SOURCE), n),
    }
    schema = table_schema("app_run")
    table = pa.Table.from_arrays([cols[f.name] for f in schema], schema=schema)
    return table, mismatch


def _ints(values: pa.ChunkedArray) -> pa.Array:
    """alps.to_int of each distinct value once (null stays null), as int64."""
    enc = pc.dictionary_encode(values.combine_chunks())
    ints = pa.array([to_int(v) for v in enc.dictionary.to_pylist()], pa.int64())
    return ints.take(enc.indices)


def _bad_ranges(n: int, owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Where plain nid ranges would make expand_nid_ranges raise (a descending range, more
    than MAX_HOSTS names)."""
    bad = np.zeros(n, bool)
    bad[owner[hi < lo]] = True
    bad |= np.bincount(owner, weights=np.maximum(hi - lo + 1, 0), minlength=n) > MAX_HOSTS
    return bad


def _nodes(n: int, owner: np.ndarray, lo: np.ndarray, hi: np.ndarray, wanted: np.ndarray
           ) -> pa.Array:
    """The distinct nodes in order of each value whose ranges are given and that is
    `wanted` (alps.start_fields; the others null), expanded with numpy."""
    sel = wanted[owner]
    owner, lo, hi = owner[sel], lo[sel], hi[sel]
    size = hi - lo + 1
    values = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size) \
        + np.repeat(lo, size)
    who = np.repeat(owner, size)
    same = owner[1:] == owner[:-1]
    if (same & (lo[1:] <= hi[:-1])).any():         # a value's ranges overlap or go back
        keep = ~pd.Series(who * (values.max(initial=0) + 1) + values).duplicated().to_numpy()
        values, who = values[keep], who[keep]
    uniq, inverse = dense_codes(values)
    names = pa.array([f"nid{v:05d}" for v in uniq.tolist()], pa.string()).take(
        pa.array(inverse))
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(who, minlength=n), out=offsets[1:])
    listed = np.zeros(n, bool)
    listed[owner] = True
    return pa.ListArray.from_arrays(pa.array(offsets), names, mask=pa.array(~listed))


# --- one block, column-wise -------------------------------------------------------------
def _fast(lines: pa.StringArray, tz: str) -> _Block:
    n = len(lines)
    printable = pc.or_(pc.ascii_is_printable(lines), pc.equal(lines, ""))
    parts = pc.split_pattern(lines, " ", max_splits=6)
    count = pc.list_value_length(parts)
    tok = [list_item(parts, i) for i in range(7)]
    full = [pc.fill_null(pc.not_equal(t, ""), False) for t in tok]
    blank = blank_lines(lines)
    ignored = all_of(printable, any_of(
        blank, pc.less(count, 3), pc.invert(full[0]),
        all_of(full[1], full[2], pc.invert(pc.fill_null(pc.starts_with(tok[2], "apsys"),
                                                         False)))))
    apsys = all_of(printable, pc.invert(ignored), pc.equal(count, 7), *full[:6],
                   pc.equal(tok[2], "apsys"))
    time, time_ok = iso_micros(tok[0], tz)
    kv, words_kind, items_ok = _message(tok[6], n)
    apid = kv["apid"]
    ok = all_of(apsys, time_ok, items_ok, matches(apid, r"^[0-9]+$"))
    other = all_of(ok, pc.is_null(words_kind))
    starting = all_of(ok, pc.equal(words_kind, "Starting"))
    nodes, stated = kv["node_list"], kv["num_nodes"]
    _, owner, lo, hi = int_ranges(nodes, 7)
    bad = _bad_ranges(n, owner, lo, hi)
    start_ok = all_of(pc.fill_null(pc.not_equal(kv["batch_id"], ""), False),
                      pc.or_(pc.is_null(stated), matches(stated, r"^[0-9]{1,9}$")),
                      pc.or_(pc.fill_null(pc.equal(nodes, ""), True), matches(nodes, _NIDS)),
                      pc.invert(pa.array(bad)))
    exe, procs = _launches(kv["cmd_line"])
    start_ok = all_of(start_ok, pc.or_(pc.is_null(procs), pc.less(pc.abs(procs), 2**31)))
    end_ok = pc.invert(matches(kv["exit_code"], r"^\s*-?[0-9]{10}"))
    started = all_of(starting, start_ok)
    event = pc.or_(all_of(ok, pc.equal(words_kind, "Finishing"), end_ok), started)
    fast = any_of(ignored, other, event)
    slow_idx = pc.indices_nonzero(pc.invert(fast))
    slow = list(zip(slow_idx.to_pylist(), lines.take(slow_idx).to_pylist(), strict=True))
    keep = pc.indices_nonzero(event)
    pick = kept_rows(keep, n)
    cols = {"seq": keep.cast(pa.int64()), "file": pa.nulls(len(keep), pa.int32()),
            "line_no": pc.add(keep.cast(pa.int64()), 1), "time": pick(time),
            "kind": pick(words_kind), "raw": pick(lines),
            "exe": pick(exe), "procs": pick(procs),
            "nodes": pick(_nodes(n, owner, lo, hi, np.asarray(started) & ~bad)),
            **{k: pick(kv[k]) for k in _STR[1:-2]}}
    events = pa.Table.from_arrays([cols[f.name] for f in _events_schema()],
                                  schema=_events_schema())
    return _Block(n, events, slow, pc.sum(ignored).as_py() or 0, pc.sum(other).as_py() or 0)


def _launches(commands: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`alps.parse_launch` (exe, process count) of each distinct launch command once: the
    plain `aprun -n N [-N|-d|-S|-j M] ./exe args` read by one pattern, any other by
    parse_launch itself."""
    enc = pc.dictionary_encode(commands)
    distinct = enc.dictionary
    parts = pc.extract_regex(distinct, _PLAIN_APRUN)
    token = parts.field("exe")
    exe = pc.replace_substring_regex(token, r"^.*/", "")
    plain = all_of(pc.is_valid(parts), pc.invert(matches(distinct, r"(?:^| ):(?: |$)")),
                   pc.not_equal(exe, ""), pc.invert(pc.is_in(exe, _WRAPPERS)))
    exe = pc.if_else(plain, exe, None)
    procs = pc.cast(pc.if_else(plain, parts.field("n"), None), pa.int64())
    if not pc.all(plain).as_py():                     # the others read by parse_launch
        other = pc.invert(plain)
        read = [parse_launch(c) for c in distinct.filter(other).to_pylist()]
        exe = pc.replace_with_mask(exe, other, pa.array([e for e, _ in read], pa.string()))
        procs = pc.replace_with_mask(procs, other, pa.array([c for _, c in read], pa.int64()))
    return pc.take(exe, enc.indices), pc.take(procs, enc.indices)


def _item_pieces(items: pa.StringArray) -> tuple[pa.StringArray, np.ndarray]:
    """The items cut without a copy of their bytes into four pieces each: up to and with
    their first `=` (all of it when none), a value's opening quote, the value, its closing
    quote (the quotes empty when the value does not begin with one); and per item whether
    it has an `=`."""
    offsets, data = string_bytes(items)
    eq = np.asarray(pc.find_substring(items, "="), np.int64)
    end = offsets[1:].astype(np.int64)
    cut = offsets[:-1] + np.where(eq >= 0, eq + 1, end - offsets[:-1])
    quote = np.zeros(len(items), bool)
    some = cut < end
    quote[some] = data[cut[some]] == ord('"')
    closed = quote & (end - cut >= 2)
    return cut_pieces(items, cut, cut + quote, end - closed), eq >= 0


def _message(msg: pa.Array, n: int) -> tuple[dict[str, pa.Array], pa.Array, pa.Array]:
    """Per line: each KEYS value (quotes removed; null when absent), the first
    Starting/Finishing word, and whether the message is plain items naming each KEYS
    key once. One pattern checks the whole message; its items are cut at `, ` and after
    their first `=` (without a copy: `arrow_bytes`)."""
    bad = ~np.asarray(matches(msg, _MESSAGE))
    items = pc.split_pattern(msg, ", ")
    owner = np.asarray(pc.list_parent_indices(items))
    pieces, is_kv = _item_pieces(items.flatten())
    key = every(pieces, 4, 0)                                     # `key=` or a word
    code = np.asarray(pc.fill_null(pc.index_in(key, _KEYS_AND_KINDS), -1))
    wanted = np.flatnonzero(is_kv & (code >= 0) & (code < len(KEYS)))
    slot = owner[wanted] * len(KEYS) + code[wanted]
    twice = np.bincount(slot, minlength=n * len(KEYS)) > 1
    bad[np.flatnonzero(twice) // len(KEYS)] = True
    where = np.full(len(KEYS) * n, -1, np.int64)      # each key's values, one after another
    where[code[wanted] * n + owner[wanted]] = 4 * wanted + 2
    values = pieces.take(pa.array(where, mask=where < 0))
    out = {name: values.slice(k * n, n) for k, name in enumerate(KEYS)}
    first_kind = np.full(n, -1, np.int64)
    at = np.flatnonzero((code >= len(KEYS)) & ~is_kv)[::-1]   # the first of a line last
    first_kind[owner[at]] = code[at] - len(KEYS)
    kind = _KINDS.take(pa.array(first_kind, mask=first_kind < 0))
    return out, kind, pa.array(~bad & np.asarray(pc.is_valid(msg)))
