"""PBS accounting logs read column-wise (Arrow): the fast path of `lassi.ingest.pbs`.

A block of lines is split once at spaces. A line is read here when it is printable ASCII
without a quote, its header `MM/DD/YYYY HH:MM:SS;T;id;` has the record's shape, and each
attribute a row is made of has a value whose reading here is exact: epoch seconds,
leading integers of up to 9 digits, exec_host items as `host/N`, `host/N*count` (PBS Pro)
or Torque's core lists `host/0-27`, `host/0,2-3`, an exec_vnode whose ncpus are needed
only where exec_host gives no slots (`host/0*0`). Any other line is read by `pbs.record`,
the line parser's own reading (which also gives the quarantine reason), and joins the
others as a record of the same form.

S and E records are kept apart (each block gives a table of each) and then paired in
Arrow, as `pbs.parse_files` pairs them line by line: sorted by job and line order, an E
takes the fields it lacks from the S just before it; an S followed by another S of its
job is replaced by it; an S that no record of its job follows is a row with no end
(extra["unfinished"]). Every E is a row, so the E tables are the rows as they are (no
copy) but for the few fields filled in. The rows equal the line parser's (tests compare
them), in another order. Blocks are read by two threads: Arrow's kernels run outside the
GIL.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.arrow_bytes import (
    cut_pieces,
    every,
    key_value_pairs,
    spaced_tokens,
    string_bytes,
)
from lassi.ingest.columnar import (
    all_of,
    any_of,
    blank_lines,
    fold_offsets,
    in_years,
    int_ranges,
    kept_rows,
    leading_ints,
    list_item,
    matches,
    nonempty,
    table_schema,
    when,
)
from lassi.ingest.driver_reads import FileReads, files_parser
from lassi.ingest.iso_times import read_mdy_prefix
from lassi.ingest.pbs import PBS_DEFAULT_PROJECT, SOURCE, record

from lassi.core.quarantine import ParseStats, Quarantined

# the attributes a row is made of
KEYS = ("user", "group", "project", "account", "jobname", "start", "end", "Exit_status",
        "exec_host", "exec_vnode", "total_execution_slots", "resources_used.ncpus",
        "Resource_List.ncpus", "unique_node_count", "Resource_List.nodect")
_KEYS_EQ = pa.array([k + "=" for k in KEYS])   # keys as their tokens begin
# without its parentheses, a chunk without its vnode: parse_exec_vnode raises
_BAD_VNODE = r"^$|^[:+]|\+[:+]|\+$"
_FILLED = ("user", "project", "job_name", "nodes", "n_nodes", "n_procs", "start")
_INT32_MAX = 2**31 - 1


def _records_schema() -> pa.Schema:
    return pa.schema([*table_schema("app_run"), pa.field("seq", pa.int64())])


@dataclass
class _Block:
    """One block's S and E records taken column-wise (app_run columns and `seq`, the
    record's line index), the lines left to the line parser and its other records."""

    lines: int
    starts: pa.Table
    ends: pa.Table
    slow: list[tuple[int, str]]            # (line index in the block, line)
    other: int
    # E records whose rows start on another day than the one kept: their job and `seq`
    # only (they pair, but make no row)
    elsewhere: pa.Table | None = None

    @property
    def records(self) -> int:
        """The records taken column-wise."""
        return self.starts.num_rows + self.ends.num_rows


@dataclass
class _Parse(FileReads):
    """S and E records across the files of one ingest."""

    source = SOURCE
    starts: list[pa.Table] = field(default_factory=list)
    ends: list[pa.Table] = field(default_factory=list)
    elsewhere: list[pa.Table] = field(default_factory=list)
    seq: int = 0

    def file(self, path: str | Path, pool: ThreadPoolExecutor) -> None:
        """Read one file's records."""
        none = _records_schema().empty_table()
        blocks = self.blocks(path, partial(_fast, tz=self.tz, day=self.day), pool,
                             lambda lines: _Block(len(lines), none, none,
                                                  list(enumerate(lines)), 0))
        if blocks is None:
            return
        self.stats.files += 1
        first = 0
        for block in blocks:
            self._block(block, str(path), first)
            first += block.lines

    def _block(self, block: _Block, file: str, first: int) -> None:
        self.stats.lines_read += block.lines
        self.bump("other_records", block.other)
        slow: dict[str, list[tuple[int, dict]]] = {"S": [], "E": []}
        for i, line in block.slow:
            try:
                kind, row = record(line, self.tz)
            except ValueError as exc:
                self.stats.lines_quarantined += 1
                self.quarantine.append(Quarantined(SOURCE, file, first + i + 1, line, str(exc)))
                continue
            if kind == "other":
                self.bump("other_records")
            elif row is not None:
                slow[kind].append((self.seq + i, row))
        for out, recs, kind in ((self.starts, block.starts, "S"), (self.ends, block.ends, "E")):
            out.append(recs.set_column(recs.schema.get_field_index("seq"), "seq",
                                       pc.add(recs.column("seq"), self.seq)))
            if slow[kind]:
                out.append(_rows_records(slow[kind]))
        if block.elsewhere is not None and block.elsewhere.num_rows:
            recs = block.elsewhere
            self.elsewhere.append(recs.set_column(1, "seq", pc.add(recs.column("seq"), self.seq)))
        self.seq += block.lines

    def finish(self) -> tuple[pa.Table, list[Quarantined], ParseStats]:
        self.stats.lines_used = self.stats.lines_read - self.stats.lines_quarantined
        none = _records_schema().empty_table()
        rows, unfinished = paired(pa.concat_tables(self.starts or [none]),
                                  pa.concat_tables(self.ends or [none]),
                                  pa.concat_tables(self.elsewhere or [_ELSEWHERE]))
        self.bump("unfinished", unfinished)
        self.stats.rows = rows.num_rows + sum(t.num_rows for t in self.elsewhere)
        return rows, self.quarantine, self.stats


parse_files = files_parser(_Parse)


_ELSEWHERE = pa.table({"job_id": pa.array([], pa.string()), "seq": pa.array([], pa.int64())})


def _rows_records(rows: list[tuple[int, dict]]) -> pa.Table:
    """The line parser's rows (with their `seq`) as records."""
    return pa.Table.from_pylist([{**r, "seq": s} for s, r in rows], schema=_records_schema())


# --- pairing ------------------------------------------------------------------------------
def paired(starts: pa.Table, ends: pa.Table, elsewhere: pa.Table = _ELSEWHERE
           ) -> tuple[pa.Table, int]:
    """The rows of S and E records (pbs._State's rules): the E rows in their order, then
    the unfinished S rows (line order but for the lines the line parser read, which follow
    their block's); and how many S rows were unfinished. `elsewhere`: E records (job and
    `seq`) that pair but make no row (their rows start on a day not kept)."""
    n_s, n_e = starts.num_rows, ends.num_rows
    parts = (starts, ends, elsewhere)
    seq = np.concatenate([np.asarray(t.column("seq").combine_chunks()) for t in parts])
    job = np.asarray(pc.dictionary_encode(pa.chunked_array(
        [c for t in parts for c in t.column("job_id").chunks], pa.string())
        ).combine_chunks().indices)
    is_s = np.arange(len(seq)) < n_s           # the S records, then the E records
    order = np.lexsort((seq, job))            # by job, then line order
    n = len(order)
    same_prev = np.zeros(n, bool)
    same_prev[1:] = job[order][1:] == job[order][:-1]
    prev = np.zeros(n, np.int64)               # per record (by position): the one before it
    prev[order[1:]] = order[:-1]
    same = np.zeros(n, bool)
    same[order] = same_prev
    last = np.ones(n, bool)                    # no record of its job after it
    last[order[:-1]] = ~same_prev[1:]
    fill = (same & is_s[prev])[n_s:n_s + n_e]  # E rows after an S of their job
    source = pa.array(np.where(fill, prev[n_s:n_s + n_e], 0))
    cols = {}
    for name in table_schema("app_run").names:
        col = ends.column(name)
        if name in _FILLED and fill.any():
            gap = pc.and_(pa.array(fill), pc.is_null(col))
            if pc.any(gap).as_py():
                col = when(gap, starts.column(name).take(source), col.combine_chunks())
        cols[name] = col
    open_ = np.flatnonzero(last[:n_s])
    rows = pa.concat_tables([pa.table(cols), starts.select(list(cols)).take(open_)])
    return rows, len(open_)


# --- one block, column-wise ---------------------------------------------------------------
def _fast(lines: pa.StringArray, tz: str, day: dt.date | None = None) -> _Block:
    """A block's S and E records that the column-wise reading takes; the rest left over.
    With `day`, the E records whose start is on another day make no row, only their job
    and `seq` (`_Block.elsewhere`): the caller keeps `day`'s rows, and would copy every
    column to drop them (the real PBS site-scale file: 13-17 ms)."""
    n = len(lines)
    tokens, first_token, spaced = spaced_tokens(lines)
    count = np.diff(first_token)
    head = pc.ascii_rtrim(tokens.take(pa.array(first_token[:-1] + 1, mask=count < 2)), " ")
    parts = pc.split_pattern(head, ";", max_splits=3)
    hms, rtype, job_id, first = (list_item(parts, i) for i in range(4))
    header = _header_micros(lines, tz)
    ok = all_of(pc.ascii_is_printable(lines), pc.is_valid(header), pc.is_valid(first),
                pc.equal(pc.binary_length(hms), 8), pc.equal(pc.binary_length(rtype), 1),
                pc.ascii_is_alpha(rtype))
    se = pc.fill_null(pc.is_in(rtype, pa.array(["S", "E"])), False)
    other = all_of(ok, pc.invert(se))
    is_s = pc.equal(rtype, "S")
    kv, any_kv = _attributes(tokens, first_token, spaced, first)
    cols, good = _columns(kv, header, is_s)
    take = all_of(ok, se, pc.not_equal(job_id, ""), any_kv, good,
                  pc.invert(_has_byte(lines, ord('"'))))
    blank = blank_lines(lines)
    slow_idx = pc.indices_nonzero(pc.invert(pc.or_(pc.or_(take, other), blank)))
    slow = list(zip(slow_idx.to_pylist(), lines.take(slow_idx).to_pylist(), strict=True))
    cols.update(app_id=job_id, job_id=job_id)
    is_e = pc.invert(is_s)
    elsewhere = None
    if day is not None:                  # a null start may be filled in by its S: kept
        off = pc.fill_null(pc.not_equal(pc.cast(cols["start"], pa.date32()),
                                        pa.scalar(day, pa.date32())), False)
        at = pc.indices_nonzero(all_of(take, is_e, off))
        elsewhere = pa.table({"job_id": job_id.take(at), "seq": at.cast(pa.int64())})
        is_e = pc.and_(is_e, pc.invert(off))
    starts, ends = (_records(cols, pc.and_(take, kind), n) for kind in (is_s, is_e))
    return _Block(n, starts, ends, slow, pc.sum(other).as_py() or 0, elsewhere)


def _records(cols: dict[str, pa.Array], take: pa.Array, n: int) -> pa.Table:
    """The records of the lines `take`s: their columns and line index (`seq`)."""
    keep = pc.indices_nonzero(take)
    pick = kept_rows(keep, n)
    arrays = []
    for f in _records_schema():
        if f.name == "seq":
            arrays.append(keep.cast(pa.int64()))
        elif f.name == "source":
            arrays.append(pa.repeat(pa.scalar(SOURCE), len(keep)))
        elif f.name in cols:
            col = pick(cols[f.name])
            if pa.types.is_dictionary(col.type):
                col = col.dictionary.take(col.indices)
            arrays.append(col.cast(f.type))
        else:
            arrays.append(pa.nulls(len(keep), f.type))
    return pa.Table.from_arrays(arrays, schema=_records_schema())


def _has_byte(lines: pa.StringArray, byte: int) -> pa.BooleanArray:
    """Per line, whether it holds this (ASCII) byte."""
    offsets, data = string_bytes(lines)
    at = np.flatnonzero(data[offsets[0]:offsets[-1]] == byte) + offsets[0]
    out = np.zeros(len(lines), bool)
    out[np.searchsorted(offsets, at, side="right") - 1] = True
    return pa.array(out)


def _header_micros(lines: pa.StringArray, tz: str) -> pa.Array:
    """UTC epoch microseconds of the `MM/DD/YYYY HH:MM:SS` each line begins with, local in
    `tz` (pbs.to_utc: fold 0), read from the lines' bytes (`iso_times.read_mdy_prefix`);
    null where it names no real time or a year outside 1900-2200 (the line parser reads
    those)."""
    wall, valid = read_mdy_prefix(lines)
    valid &= in_years(wall)
    if tz != "UTC":
        wall = wall - fold_offsets(wall, valid, ZoneInfo(tz))[:, 0]
    return pa.array(wall, pa.int64(), mask=~valid)


def _attributes(tokens: pa.StringArray, first_token: np.ndarray, spaced: np.ndarray,
                first: pa.Array) -> tuple[dict[str, pa.Array], pa.Array]:
    """Each KEYS attribute's value per line (null when absent), and per line whether it
    has a `key=value` at all and names no KEYS attribute twice (split_attributes keeps
    the last, this reading would not). `tokens`, `first_token` and `spaced` are the
    lines' `spaced_tokens`, `first` the attribute after each line's header (null when
    the header has none)."""
    n = len(first)
    count = np.diff(first_token)
    head = first_token[:-1] + 1                        # token 1: `time;type;id;attribute`
    has_first = np.asarray(pc.is_valid(first))
    at = head[has_first]
    offsets, _ = string_bytes(tokens)
    bounds = offsets.copy()                            # token 1 begins at its attribute
    bounds[at] = offsets[at + 1] - spaced[at] - np.asarray(
        pc.binary_length(first.filter(pa.array(has_first))), np.int32)
    tokens = pa.StringArray.from_buffers(len(tokens), pa.py_buffer(bounds),
                                         tokens.buffers()[2])
    owner = np.repeat(np.arange(n), count)
    pairs, eq = key_value_pairs(tokens, spaced)
    has_kv = eq >= 1                                   # a non-empty key before a '='
    has_kv[first_token[:-1][count >= 1]] = False       # token 0: the date
    has_kv[head[~has_first & (count >= 2)]] = False    # a header without an attribute
    any_kv = np.zeros(n, bool)
    any_kv[owner[has_kv]] = True
    keys = pairs.take(pa.array(np.arange(0, len(pairs), 3)))
    code = np.asarray(pc.fill_null(pc.index_in(keys, _KEYS_EQ), -1))
    wanted = np.flatnonzero(has_kv & (code >= 0))
    w_owner, w_code = owner[wanted], code[wanted].astype(np.int64)
    twice = np.bincount(w_owner * len(KEYS) + w_code, minlength=n * len(KEYS)) > 1
    any_kv[np.flatnonzero(twice) // len(KEYS)] = False
    present = np.flatnonzero(np.bincount(w_code, minlength=len(KEYS)))   # keys in the block
    rank = np.full(len(KEYS), -1, np.int64)
    rank[present] = np.arange(len(present))
    # the values line by line, then each key's: the first take reads the block's bytes in
    # order, 2.6-3.5x faster than each key's values across the whole block (with the
    # second take, the real PBS block's 10.8 -> 6.1 ms, the simulated one's 9.0 -> 8.4)
    k = len(present)
    where = np.full(k * n, -1, np.int64)
    where[w_owner * k + rank[w_code]] = 3 * wanted + 1  # the value after the key
    values = pairs.take(pa.array(where, mask=where < 0))
    out = {name: (values.take(pa.array(np.arange(rank[i], k * n, k))) if rank[i] >= 0
                  else pa.nulls(n, pa.string())) for i, name in enumerate(KEYS)}
    return out, pa.array(any_kv)


def _host_items(items: pa.StringArray) -> tuple[pa.StringArray, np.ndarray, np.ndarray]:
    """Of exec_host items (`host/N*count`, `host/N` or a Torque core list `host/0-3,5`):
    the host (before the first `/`), the slots (pbs._slots: the count, 1 for `host/N`, the
    cores of a list) and where the item has one of these shapes (a host, N and the count
    of 1-6 digits, no `*` in the host of `host/N*count`; core lists as `_core_lists`
    reads them). The items are cut without a copy of their bytes; only the hosts are
    taken."""
    offsets, _ = string_bytes(items)
    start, end = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
    slash = np.asarray(pc.find_substring(items, "/"), np.int64)
    star = np.asarray(pc.find_substring(items, "*"), np.int64)
    has_host = slash >= 1
    counted = has_host & (star > slash)
    host_end = np.where(has_host, start + slash, end)
    n_start = np.minimum(host_end + 1, end)
    n_end = np.where(counted, start + star, end)
    c_start = np.where(counted, n_end + 1, end)
    pieces = cut_pieces(items, host_end, n_start, n_end, c_start)   # host / N * count
    decimal = np.asarray(pc.ascii_is_decimal(pieces))
    n_len, c_len = n_end - n_start, end - c_start
    ok = (has_host & decimal[2::5] & (n_len >= 1) & (n_len <= 6)
          & (~counted | (decimal[4::5] & (c_len >= 1) & (c_len <= 6))))
    slots = np.ones(len(items), np.int64)
    read = np.flatnonzero(ok & counted)
    slots[read] = np.asarray(pc.cast(pieces.take(pa.array(5 * read + 4)), pa.int64()))
    lists = np.flatnonzero(has_host & ~counted & ~ok)       # a spec of other digits: few
    if len(lists):
        cores, listed = _core_lists(pieces.take(pa.array(5 * lists + 2)))
        slots[lists], ok[lists] = cores, listed
    return every(pieces, 5, 0), slots, ok


def _core_lists(specs: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """pbs._slots of exec_host specs without `*` (Torque's `0-27`, `0,2-3`): the cores
    (the sum of hi - lo + 1 over the list, 1 for a single core) and where the spec is such
    a list of 1-6 digit numbers with every hi >= lo (the line parser reads the rest, or
    quarantines them as it does)."""
    n = len(specs)
    rows, owner, lo, hi = int_ranges(specs, 6)
    listed = np.zeros(n, bool)
    listed[rows] = True
    listed[owner[hi < lo]] = False
    cores = np.bincount(owner, weights=hi - lo + 1, minlength=n)
    return cores.astype(np.int64), listed


def _epoch_micros(v: pa.Array) -> tuple[pa.Array, pa.Array]:
    """pbs._epoch as epoch microseconds (null: no time) and where it would raise. Read
    here: "" and "0" (no time) and up to 11 digits (before the year 5138)."""
    fine = pc.fill_null(pc.or_(pc.and_(pc.ascii_is_decimal(v),
                                       pc.less_equal(pc.binary_length(v), 11)),
                               pc.equal(v, "")), False)
    real = all_of(fine, pc.not_equal(v, ""), pc.not_equal(v, "0"))
    micros = pc.multiply(pc.cast(when(real, v, "0"), pa.int64()), 1_000_000)
    return when(real, micros, pa.scalar(None, pa.int64())), all_of(pc.is_valid(v),
                                                                    pc.invert(fine))


def _columns(kv: dict[str, pa.Array], header: pa.Array, is_s: pa.Array
             ) -> tuple[dict[str, pa.Array], pa.Array]:
    """pbs.job_row's fields per line, and where this reading is exact."""
    null_ts = pa.scalar(None, pa.int64())
    e_start, bad_start = _epoch_micros(kv["start"])
    e_end, bad_end = _epoch_micros(kv["end"])
    start = when(is_s, pc.coalesce(e_start, header), e_start)
    end = when(is_s, null_ts, pc.coalesce(e_end, header))
    backwards = pc.fill_null(pc.less(end, start), False)
    exit_status, long_exit = leading_ints(kv["Exit_status"])
    bad_exit = all_of(pc.is_valid(kv["Exit_status"]), pc.is_null(exit_status))
    ints, long_any = {}, long_exit
    for k in ("total_execution_slots", "resources_used.ncpus", "Resource_List.ncpus",
              "unique_node_count", "Resource_List.nodect"):
        ints[k], too_long = leading_ints(kv[k])
        long_any = pc.or_(long_any, too_long)
    hosts = pc.dictionary_encode(kv["exec_host"])    # a job's S and E give the same
    listed, slots, bad_host = _exec_host(hosts.dictionary)
    slots, bad_host = slots.take(hosts.indices), bad_host.take(hosts.indices)
    # the lists stay in the dictionary until the records are taken (`_records`)
    nodes = pa.DictionaryArray.from_arrays(hosts.indices, listed)
    named = pc.is_valid(listed).take(hosts.indices)
    vnode = pc.replace_substring(pc.replace_substring(kv["exec_vnode"], "(", ""), ")", "")
    has_vnode = all_of(pc.is_valid(vnode), pc.not_equal(kv["exec_vnode"], ""))
    some = pc.fill_null(pc.greater(slots, 0), False)
    # exec_host read with no slots (`host/0*0`): the ncpus of exec_vnode count
    vcpus, bad_vcpus = _vnode_ncpus(vnode, all_of(has_vnode, pc.invert(some),
                                                 pc.is_valid(slots)))
    bad_vnode = all_of(has_vnode, any_of(matches(vnode, _BAD_VNODE), pc.is_null(slots),
                                         bad_vcpus))
    procs = when(some, slots, when(pc.fill_null(pc.greater(vcpus, 0), False), vcpus,
                                   pc.coalesce(ints["total_execution_slots"],
                                               ints["resources_used.ncpus"],
                                               ints["Resource_List.ncpus"])))
    unique = ints["unique_node_count"]
    stated = when(pc.fill_null(pc.not_equal(unique, 0), False), unique,
                  ints["Resource_List.nodect"])
    n_nodes = when(named, pc.list_value_length(listed).cast(pa.int64()).take(hosts.indices),
                   stated)
    project = kv["project"]
    project = when(pc.equal(project, PBS_DEFAULT_PROJECT), pa.scalar(None, pa.string()),
                   project)
    cols = {"user": nonempty(kv["user"]), "job_name": nonempty(kv["jobname"]),
            "project": pc.coalesce(nonempty(kv["account"]), nonempty(project), kv["group"]),
            "nodes": nodes, "n_nodes": n_nodes, "n_procs": procs,
            "start": pc.cast(start, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
            "end": pc.cast(end, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
            "exit_status": exit_status}
    too_many = pc.greater(pc.fill_null(when(some, slots, vcpus), 0), _INT32_MAX)
    bad = [bad_start, bad_end, backwards, bad_exit, long_any, bad_host, bad_vnode, too_many]
    return cols, pc.invert(pc.fill_null(any_of(*bad), False))


def _vnode_ncpus(vnode: pa.Array, need: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Where `need`s: parse_exec_vnode's ncpus of the value (without its parentheses):
    the sum over its `+` chunks of `to_int` of each `ncpus=` resource after the chunk's
    vnode (0 where there is none), and where an amount has 10 digits or more (the line
    parser reads those). Null and False elsewhere."""
    n = len(vnode)
    rows = np.flatnonzero(np.asarray(pc.fill_null(need, False)))
    if not len(rows):
        return pa.nulls(n, pa.int64()), pa.array(np.zeros(n, bool))
    chunks = pc.split_pattern(vnode.take(pa.array(rows)), "+")
    res = pc.split_pattern(chunks.flatten(), ":")
    of_chunk = np.asarray(pc.list_parent_indices(res))
    flat = res.flatten()
    bounds = np.asarray(res.offsets)
    after_vnode = np.ones(len(flat), bool)              # a chunk's first item is its vnode
    after_vnode[bounds[:-1][np.diff(bounds) > 0]] = False
    at = np.flatnonzero(after_vnode & np.asarray(pc.starts_with(flat, "ncpus=")))
    ints, too_long = leading_ints(pc.utf8_slice_codeunits(flat.take(pa.array(at)), 6))
    row = np.asarray(pc.list_parent_indices(chunks))[of_chunk[at]]
    total = np.bincount(row, weights=np.asarray(pc.fill_null(ints, 0)), minlength=len(rows))
    long_ = np.bincount(row, weights=np.asarray(too_long), minlength=len(rows)) > 0
    vcpus, unread, bad = np.zeros(n, np.int64), np.ones(n, bool), np.zeros(n, bool)
    vcpus[rows], unread[rows], bad[rows] = total.astype(np.int64), False, long_
    return pa.array(vcpus, mask=unread), pa.array(bad)


def _exec_host(v: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    """parse_exec_host per value whose items all have a shape `_host_items` reads
    (`host/N*count`, `host/N`, a Torque core list): the distinct hosts in order (null for
    other values), the slots (null likewise) and where a non-empty value is another (the
    line parser reads those). A machine's items repeat from job to job (a block of the
    PBS site-scale day: 180k items, 17k distinct): each distinct item is read once."""
    n = len(v)
    items = pc.split_pattern(v, "+")
    owner = np.asarray(pc.list_parent_indices(items))
    distinct = pc.dictionary_encode(items.flatten())
    code = np.asarray(distinct.indices)
    host, slots, ok = _host_items(distinct.dictionary)
    hosts, rank = _ranked(host)
    ok = ok[code]
    read = ((np.bincount(owner, weights=~ok, minlength=n) == 0)
            & (np.bincount(owner, minlength=n) > 0))
    bad = all_of(pc.is_valid(v), pc.not_equal(v, ""), pa.array(~read))
    keep = np.flatnonzero(read[owner])
    owner, code = owner[keep], code[keep]
    total = np.bincount(owner, weights=slots[code], minlength=n)
    named = rank[code]
    first = _first_hosts(owner, named)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(owner[first], minlength=n), out=offsets[1:])
    nodes = pa.ListArray.from_arrays(pa.array(offsets), hosts.take(pa.array(named[first])),
                                     mask=pa.array(~read))
    return nodes, pa.array(total.astype(np.int64), mask=~read), bad


def _ranked(host: pa.StringArray) -> tuple[pa.StringArray, np.ndarray]:
    """The distinct hosts in sorted order, and each host's position among them."""
    names = pc.dictionary_encode(host)
    order = np.asarray(pc.array_sort_indices(names.dictionary))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return names.dictionary.take(pa.array(order)), rank[np.asarray(names.indices)]


def _first_hosts(owner: np.ndarray, host: np.ndarray) -> np.ndarray:
    """The items that are their value's first of their host (`owner`: each item's value,
    ascending; `host`: each item's host as its rank among the hosts). Values whose hosts
    ascend strictly (the usual case) have no repeats and are not hashed."""
    later = host[1:] > host[:-1]
    same = owner[1:] == owner[:-1]
    if len(host) < 2 or (later | ~same).all():
        return np.arange(len(host))
    return np.flatnonzero(~pd.Series(owner * (host.max(initial=0) + 1) + host).duplicated()
                          .to_numpy())
