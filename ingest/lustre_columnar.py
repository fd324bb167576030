"""Lustre statistics captures: the columnar fast path of `lustre_stats.parse_file`.

A capture of server stats (`lctl get_param obdfilter.*.stats obdfilter.*.exports.*.stats
mdt.*.md_stats mdt.*.exports.*.stats`, the LASSi collector's output) is parsed as Arrow
arrays when every line is in a strict grammar: a `<obdfilter|mdt>.<target>.<stats|md_stats|
exports.<nid>.stats>=` header, a `snapshot_time`/`start_time`/`elapsed_time` line, a counter
line `<name> <samples> samples [<unit>] [min max sum [sumsq]]` or a blank line, fields one
or more spaces apart, and every counter after its block's snapshot. The block context
(target, kind, NID, snapshot and start time) is carried onto the counter lines with
cumulative sums and takes; a counter repeated within one snapshot keeps its first value.

A `<obdfilter|mdt>.<target>.job_stats=` block (Lustre 2.12+ YAML, as `lctl get_param`
prints it) is in the fast path too when every line is in its strict grammar: `job_stats:`,
`- job_id: <id>` (bare, or in double quotes; no `=`), two-space indented
`snapshot_time`/`start_time`/`elapsed_time` lines and counters `<name>: { samples: N,
unit: u[, min: N, max: N, sum: N[, sumsq: N]][, hist: { ... }] }`, or blank lines; each
counter row takes its entry's job id, snapshot and the start time above it.

Any other part of a file (the lines of a bare /proc file, a skipped parameter, a parameter
block with a line outside the grammar) goes through the line parser on its own, cut at
header lines where the line parser's state resets whatever block it is in (`_resets`), so
the rows always equal `lustre_stats.parse_file`'s: the fast path only ever takes blocks
whose values it computes identically. Until session 43 such a block sent the rest of the
file to the line parser (a 48,675-line capture cut mid-line at its end: 0.60 s instead of
0.08; with a junk line early: 0.28 s; now 0.05 and 0.13 s). A file that cannot be read to
its end, or a file without a header (a bare /proc file), goes through the line parser's
streaming reader from the last rows handed on (from its start). A capture is read in
blocks that start at such a header and handed on every `lustre_stats.CHUNK_ROWS` rows, so
memory stays bounded whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest import lustre_stats
from lassi.ingest.columnar import (
    Fields,
    NotFast,
    line_blocks,
    matches,
    row_schema,
    rows_table,
    when,
)
from lassi.ingest.nid import nid_to_node

from lassi.core.quarantine import ParseStats, Quarantined

_SP = "[ ]+"
_INT = "-?[0-9]{1,18}"                       # always fits a LongType
_HEADER = (r"(?:obdfilter|mdt)\.(?P<target>[A-Za-z0-9_-]+)\."
           r"(?:stats|md_stats|exports\.(?P<nid>[^=\s]+)\.stats)=")
_SECS = rf"[0-9]{{1,11}}(?:\.[0-9]{{1,9}})?(?:{_SP}secs\.[nu]secs)?"   # `<secs>[.frac] [unit]`
_TIME = rf"(?:snapshot_time|start_time):?{_SP}{_SECS}"
_ELAPSED = rf"elapsed_time:?(?:{_SP}{_SECS})?"
_COUNTER = (rf"[A-Za-z_][A-Za-z0-9_]*{_SP}[0-9]{{1,18}}{_SP}samples(?:{_SP}\[[a-z]+\])?"
            rf"(?:{_SP}{_INT}{_SP}{_INT}{_SP}{_INT}(?:{_SP}[0-9]{{1,30}}(?:\.[0-9]{{1,30}})?)?)?")
GRAMMAR = f"^(?:{_HEADER}|{_TIME}|{_ELAPSED}|{_COUNTER}|)$"
_TIME_VALUE = r"^(?P<secs>[0-9]+)(?:\.(?P<frac>[0-9]*))?$"

# job_stats blocks (the YAML layouts of Lustre 2.12+ and the older `{ samples: N, unit: u }`)
JOB_HEADER = r"^(?:obdfilter|mdt)\.(?P<target>[A-Za-z0-9_-]+)\.job_stats=$"
_JOB_ID = r'(?P<id>"[^"=]*"|[^ "\'=][^ =]*)'       # `_unquote`d: bare, or in double quotes
_JOB_SECS = r"(?P<v>[0-9]{1,11}(?:\.[0-9]{1,9})?)(?:" + _SP + r"(?P<u>secs\.[nu]secs))?"
_JOB_TIME = r"^  (?P<name>snapshot_time|start_time|elapsed_time):" + _SP + _JOB_SECS + "$"
JOB_OTHER = (r"^(?:job_stats:|- job_id:" + _SP + _JOB_ID + r"|  (?:snapshot_time|start_time|"
             r"elapsed_time):" + _SP + _JOB_SECS + "|)$")
_N18 = "-?[0-9]{1,18}"
JOB_COUNTER = (
    rf"^  (?P<name>[A-Za-z_][A-Za-z0-9_]*):{_SP}\{{ samples:{_SP}(?P<samples>[0-9]{{1,18}}), "
    rf"unit:{_SP}(?P<unit>[a-z]+)(?:, min:{_SP}(?P<min>{_N18}), max:{_SP}(?P<max>{_N18}), "
    rf"sum:{_SP}(?P<sum>{_N18})(?:, sumsq:{_SP}(?P<sumsq>[0-9]{{1,30}}))?)?"
    rf"(?:, hist:{_SP}\{{[^{{}}]*\}})?{_SP}\}}$")
_NONE_I64 = pa.scalar(None, pa.int64())


def header_blocks(path: str | Path) -> Iterator[pa.StringArray]:
    """The file's lines in blocks that each start at a header line (a line ending in `=`
    that opens a block whatever block it is in: `_resets`); the first block starts at the
    first line. Raises NotFast when unreadable."""
    carry = pa.array([], pa.string())
    for lines in line_blocks(path):
        if len(carry):
            lines = pa.concat_arrays([carry, lines])
        heads = pc.indices_nonzero(_resets(lines))
        cut = heads[-1].as_py() if len(heads) else 0
        if cut == 0:
            carry = lines
            continue
        yield lines.slice(0, cut)
        carry = lines.slice(cut)
    if len(carry):
        yield carry


def _resets(lines: pa.StringArray) -> pa.BooleanArray:
    """Per line: a header ending in `=` at which the line parser's state resets whatever
    block it is in (`lustre_stats.is_header`: a dotted parameter or a top-level one), the
    cuts where a part of a file can be read on its own."""
    candidate = pc.and_(pc.ends_with(lines, "="), pc.equal(pc.count_substring(lines, "="), 1))
    at = np.flatnonzero(np.asarray(candidate))
    reset = np.zeros(len(lines), bool)
    if len(at):
        reset[at] = [lustre_stats.is_header(x) for x in lines.take(pa.array(at)).to_pylist()]
    return pa.array(reset)


def _micros(values: pa.Array, units: pa.Array) -> pa.Array:
    """Epoch microseconds of `secs[.frac]` as `lustre_stats.epoch_to_datetime` reads them:
    with unit `secs.usecs` a fraction shorter than 6 digits counts microseconds."""
    parts = pc.extract_regex(values, _TIME_VALUE)
    secs = pc.cast(pc.struct_field(parts, "secs"), pa.int64())
    frac = pc.fill_null(pc.struct_field(parts, "frac"), "")
    digits = pc.utf8_length(frac)
    usec_count = pc.and_(pc.equal(pc.fill_null(units, ""), "secs.usecs"), pc.less(digits, 6))
    decimal = pc.utf8_slice_codeunits(pc.utf8_rpad(frac, 6, "0"), 0, 6)
    usec = pc.cast(when(pc.and_(usec_count, pc.greater(digits, 0)), frac, decimal), pa.int64())
    return pc.add(pc.multiply(secs, 1_000_000), usec)


def _carry(values: pa.Array) -> pa.Array:
    """Each line's most recent value at or above it (forward fill)."""
    return pc.fill_null_forward(values)


def _count(mask: pa.Array) -> pa.Array:
    """Running count of True values (inclusive)."""
    return pc.cumulative_sum(pc.cast(mask, pa.int64()))


def _first_of_each(seg: pa.Array, name: pa.Array) -> pa.Array | None:
    """Positions of the first row of every (segment, name) in rows ordered by segment, or
    None when no name repeats within a segment (the usual case, checked in O(n))."""
    enc = pc.dictionary_encode(name)
    idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    segs = seg.to_numpy(zero_copy_only=False)
    if len(enc.dictionary) <= 62 and len(idx):
        bits = np.left_shift(np.int64(1), idx)
        starts = np.r_[0, np.flatnonzero(np.diff(segs)) + 1]
        if (np.add.reduceat(bits, starts) == np.bitwise_or.reduceat(bits, starts)).all():
            return None
    key = pa.array(segs * (1 << 24) + idx)
    first = pc.unique(key)
    return None if len(first) == len(key) else pc.index_in(first, value_set=key)


def _empty_snapshots(is_snap: pa.Array, is_hdr: pa.Array, is_ctr: pa.Array, closed: bool
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Snapshots without a counter line (every counter zero): the positions of their
    `snapshot_time` lines and of their last lines. The block's last snapshot counts only
    when `closed` (a line follows the block), as in `lustre_stats`."""
    group = _count(pc.or_(is_hdr, is_snap)).to_numpy(zero_copy_only=False)
    snaps = np.flatnonzero(is_snap.to_numpy(zero_copy_only=False))
    with_ctr = np.unique(group[is_ctr.to_numpy(zero_copy_only=False)])
    empty = snaps[~np.isin(group[snaps], with_ctr)]
    if not closed and len(empty) and group[empty[-1]] == group[-1]:
        empty = empty[:-1]
    return empty, np.searchsorted(group, group[empty], side="right") - 1


def _optional(values: pa.Array, to: pa.DataType) -> pa.Array:
    """A regex group's text cast to `to`, null where the group took no part ("")."""
    return pc.cast(when(pc.equal(values, ""), pa.scalar(None, pa.string()), values), to)


def _job_block(lines: pa.StringArray, server: str | None, file: str, schema: pa.Schema
               ) -> tuple[pa.Table, int]:
    """The counter rows of job_stats blocks (the first line a job_stats header) and the
    number of repeated counters dropped (a counter seen before in the same entry); NotFast
    when a line is outside the grammar or a time or counter comes before its entry's
    job_id or snapshot_time (the line parser quarantines those)."""
    # in the grammar only counter lines hold "{ samples:"; the others are few per entry
    is_ctr = pc.match_substring(lines, "{ samples:")
    rows = pc.indices_nonzero(is_ctr)
    ctr = pc.extract_regex(pc.take(lines, rows), JOB_COUNTER)   # null where not a counter
    is_hdr = pc.ends_with(lines, "=")
    other = pc.invert(pc.or_(is_ctr, is_hdr))
    h = pc.extract_regex(pc.filter(lines, is_hdr), JOB_HEADER)
    if (ctr.null_count or h.null_count
            or not pc.all(matches(pc.filter(lines, other), JOB_OTHER)).as_py()):
        raise NotFast("a job_stats line outside the capture grammar")
    is_job = pc.starts_with(lines, "- job_id:")
    is_snap = pc.starts_with(lines, "  snapshot_time:")
    is_start = pc.starts_with(lines, "  start_time:")
    entry = _count(is_job)
    # a line is in an entry when a job_id came after the last header (which resets all)
    in_entry = pc.greater(_carry(when(is_job, entry, when(is_hdr, -1, _NONE_I64))), 0)
    timed = pc.or_(is_snap, is_start)
    if not pc.all(pc.or_(in_entry, pc.invert(pc.or_(timed, is_ctr)))).as_py():
        raise NotFast("a job_stats time or counter before job_id")
    t = pc.extract_regex(pc.filter(lines, timed), _JOB_TIME)
    at_time = pc.replace_with_mask(pa.nulls(len(lines), pa.int64()), timed,
                                   _micros(pc.struct_field(t, "v"), pc.struct_field(t, "u")))
    # an entry's snapshot holds from its line to the next job_id or header; its start time
    # from its line to the next snapshot_time, job_id or header (-1: none)
    reset = pc.or_(is_job, is_hdr)
    snapshot = _carry(when(is_snap, at_time, when(reset, -1, _NONE_I64)))
    start = _carry(when(is_start, at_time, when(pc.or_(is_snap, reset), -1, _NONE_I64)))
    if pc.any(pc.and_(pc.or_(is_start, is_ctr),
                      pc.fill_null(pc.less(snapshot, 0), True))).as_py():
        raise NotFast("a job_stats start_time or counter before snapshot_time")
    start = when(pc.equal(start, -1), _NONE_I64, start)
    token = pc.struct_field(pc.extract_regex(pc.filter(lines, is_job), "^- job_id:" + _SP
                                             + _JOB_ID + "$"), "id")
    ids = when(pc.starts_with(token, '"'), pc.utf8_slice_codeunits(token, 1, -1), token)
    targets = pc.struct_field(h, "target")
    fss = pa.array([lustre_stats.fs_of(x) for x in targets.to_pylist()], pa.string())

    name = pc.struct_field(ctr, "name")
    first = _first_of_each(pc.take(entry, rows), name)
    dups = 0
    if first is not None:
        dups = len(rows) - len(first)
        rows, ctr, name = pc.take(rows, first), pc.take(ctr, first), pc.take(name, first)
    unit = pc.struct_field(ctr, "unit")
    hdr_of = pc.take(pc.subtract(_count(is_hdr), 1), rows)
    m = len(rows)
    out = pa.Table.from_arrays([
        pa.repeat(pa.scalar(server, pa.string()), m),
        pc.take(targets, hdr_of),
        pc.take(fss, hdr_of),
        pa.repeat(pa.scalar("job", pa.string()), m),
        pa.nulls(m, pa.string()),
        pa.nulls(m, pa.string()),
        pc.take(ids, pc.subtract(pc.take(entry, rows), 1)),
        pc.take(snapshot, rows),
        name,
        pc.cast(pc.struct_field(ctr, "samples"), pa.int64()),
        when(pc.equal(unit, "regs"), "reqs", unit),
        _optional(pc.struct_field(ctr, "min"), pa.int64()),
        _optional(pc.struct_field(ctr, "max"), pa.int64()),
        _optional(pc.struct_field(ctr, "sum"), pa.int64()),
        _optional(pc.struct_field(ctr, "sumsq"), pa.float64()),
        pc.take(start, rows),
        pa.repeat(pa.scalar(file, pa.string()), m),
    ], schema=schema)
    return out, dups, rows.to_numpy().astype(np.int64)


def _block(lines: pa.StringArray, server: str | None, file: str,
           nid_map: Mapping[str, str] | None, schema: pa.Schema, closed: bool = False
           ) -> tuple[pa.Table, int]:
    """The counter rows of a block of lines (its first line a header), in line order, and
    the number of repeated counters dropped; NotFast when a line is outside the grammar.
    The runs of job_stats parameters and those of stats parameters are each gathered and
    parsed in one pass of their own grammar (a header resets all state, so the runs of
    one kind parse as one text): a capture with a small job_stats block per OST costs
    two passes, not two per OST. `closed`: more lines follow the block in its file."""
    heads = pc.indices_nonzero(pc.ends_with(lines, "="))
    if not len(heads) or heads[0].as_py() != 0:
        raise NotFast("lines before the first header")
    job = matches(pc.take(lines, heads), JOB_HEADER).to_numpy(zero_copy_only=False)
    if not job.any():
        return _stats_block(lines, server, file, nid_map, schema, closed)[:2]
    if job.all():
        t, d, _ = _job_block(lines, server, file, schema)
        return t, d
    at = heads.to_numpy().astype(np.int64)
    cuts = np.r_[at[np.r_[0, np.flatnonzero(np.diff(job)) + 1]], len(lines)]
    kind = job[np.searchsorted(at, cuts[:-1])]              # per run: job_stats or not
    of_job = np.repeat(kind, np.diff(cuts))                 # per line
    job_at, stats_at = np.flatnonzero(of_job), np.flatnonzero(~of_job)
    jt, jd, jpos = _job_block(_gather(lines, job_at), server, file, schema)
    # the stats lines end where the block ends only when its last run is a stats run
    st, sd, spos = _stats_block(_gather(lines, stats_at), server, file, nid_map, schema,
                                closed or bool(kind[-1]))
    jpos, spos = job_at[jpos], stats_at[spos]
    if not len(jpos) or not len(spos) or jpos[-1] < spos[0]:     # already in line order
        return pa.concat_tables([jt, st]), jd + sd
    if spos[-1] < jpos[0]:
        return pa.concat_tables([st, jt]), jd + sd
    order = np.argsort(np.r_[jpos, spos], kind="stable")
    return pa.concat_tables([jt, st]).take(order), jd + sd


def _gather(lines: pa.StringArray, at: np.ndarray) -> pa.StringArray:
    """The lines at the sorted positions `at`: a slice when they are one run, no copy."""
    if len(at) and at[-1] - at[0] + 1 == len(at):
        return lines.slice(int(at[0]), len(at))
    return pc.take(lines, pa.array(at))


def _stats_block(lines: pa.StringArray, server: str | None, file: str,
                 nid_map: Mapping[str, str] | None, schema: pa.Schema, closed: bool
                 ) -> tuple[pa.Table, int, np.ndarray]:
    """The rows of stats/md_stats/exports blocks (the first line a header), with a marker
    row per snapshot without counters, the number of repeated counters dropped and each
    row's line (index into `lines`; a marker's is its snapshot's last line)."""
    if not pc.all(matches(lines, GRAMMAR)).as_py():
        raise NotFast("a line outside the capture grammar")
    is_hdr = pc.ends_with(lines, "=")
    if not is_hdr[0].as_py():
        raise NotFast("lines before the first header")
    # in the grammar only counter lines hold " samples"; the line parser checks it first
    is_ctr = pc.match_substring(lines, " samples")
    is_snap = pc.and_not(pc.starts_with(lines, "snapshot_time"), is_ctr)
    is_start = pc.and_not(pc.starts_with(lines, "start_time"), is_ctr)

    n_snap = _count(is_snap)
    after_snap = pc.greater(n_snap, _carry(when(is_hdr, n_snap, _NONE_I64)))
    if not pc.all(pc.or_(after_snap, pc.invert(pc.or_(is_ctr, is_start)))).as_py():
        raise NotFast("a counter or start_time before its block's snapshot_time")

    timed = pc.or_(is_snap, is_start)
    tf = Fields(pc.filter(lines, timed), runs=True)
    at_time = pc.replace_with_mask(pa.nulls(len(lines), pa.int64()), timed,
                                   _micros(tf.field(1), tf.field(2)))
    snapshot = _carry(when(is_snap, at_time, _NONE_I64))
    # start_time holds from its line to the next snapshot or header (-1: none yet)
    start = _carry(when(is_start, at_time, when(pc.or_(is_snap, is_hdr), -1, _NONE_I64)))
    start = when(pc.equal(start, -1), _NONE_I64, start)

    h = pc.extract_regex(pc.filter(lines, is_hdr), "^" + _HEADER + "$")
    h_target = pc.struct_field(h, "target")
    h_nid = pc.struct_field(h, "nid")          # "" where the header names no export
    no_nid = pc.equal(h_nid, "")
    h_nid = when(no_nid, pa.scalar(None, pa.string()), h_nid)
    h_kind = when(no_nid, "target", "export")
    h_fs = pa.array([lustre_stats.fs_of(t) for t in h_target.to_pylist()], pa.string())
    h_node = pa.array([nid_to_node(x, nid_map) for x in h_nid.to_pylist()], pa.string())

    rows = pc.indices_nonzero(is_ctr)
    f = Fields(pc.take(lines, rows), runs=True)
    name = f.field(0)
    first = _first_of_each(pc.take(_count(pc.or_(is_hdr, is_snap)), rows), name)
    dups = 0
    if first is not None:
        dups = len(rows) - len(first)
        rows, name = pc.take(rows, first), pc.take(name, first)
        f = Fields(pc.take(lines, rows), runs=True)
    hdr_no = pc.subtract(_count(is_hdr), 1)

    f3 = f.field(3)
    has_unit = pc.fill_null(pc.starts_with(f3, "["), False)
    unit = pc.utf8_slice_codeunits(f3, 1, -1)
    unit = when(has_unit, when(pc.equal(unit, "regs"), "reqs", unit),
                pa.scalar(None, pa.string()))
    i = pc.add(pc.cast(has_unit, pa.int32()), 3)      # where min max sum [sumsq] begin
    m = len(rows)
    counters = {
        "at": rows, "last": rows, "counter": name, "samples": pc.cast(f.field(1), pa.int64()),
        "unit": unit, "min": pc.cast(f.field(i), pa.int64()),
        "max": pc.cast(f.field(pc.add(i, 1)), pa.int64()),
        "sum": pc.cast(f.field(pc.add(i, 2)), pa.int64()),
        "sumsq": pc.cast(f.field(pc.add(i, 3)), pa.float64())}
    empty, last = _empty_snapshots(is_snap, is_hdr, is_ctr, closed)
    if len(empty):
        k = len(empty)
        markers = {
            "at": pa.array(empty, pa.int64()), "last": pa.array(last, pa.int64()),
            "counter": pa.repeat(pa.scalar(lustre_stats.ZERO_MARKER), k),
            "samples": pa.repeat(pa.scalar(0, pa.int64()), k),
            "unit": pa.nulls(k, pa.string()), "min": pa.nulls(k, pa.int64()),
            "max": pa.nulls(k, pa.int64()), "sum": pa.nulls(k, pa.int64()),
            "sumsq": pa.nulls(k, pa.float64())}
        both = {c: pa.concat_arrays([pc.cast(counters[c], markers[c].type), markers[c]])
                for c in counters}
        order = pc.sort_indices(both["last"])     # a marker's row comes after its lines
        counters = {c: pc.take(a, order) for c, a in both.items()}
        m += k
    at, last = counters["at"], counters["last"]
    hdr_of = pc.take(hdr_no, at)
    out = pa.Table.from_arrays([
        pa.repeat(pa.scalar(server, pa.string()), m),
        pc.take(h_target, hdr_of),
        pc.take(h_fs, hdr_of),
        pc.take(h_kind, hdr_of),
        pc.take(h_nid, hdr_of),
        pc.take(h_node, hdr_of),
        pa.nulls(m, pa.string()),
        pc.take(snapshot, at),
        counters["counter"],
        counters["samples"],
        counters["unit"],
        counters["min"],
        counters["max"],
        counters["sum"],
        counters["sumsq"],
        pc.take(start, last),
        pa.repeat(pa.scalar(file, pa.string()), m),
    ], schema=schema)
    return out, dups, last.to_numpy().astype(np.int64)


def parse_file_arrow(path: str | Path, *, server: str | None = None,
                     nid_map: Mapping[str, str] | None = None
                     ) -> tuple[pa.Table, list[Quarantined], ParseStats]:
    """`lustre_stats.parse_file` as an Arrow table of `row_schema("raw_lustre_stats")`:
    the columnar fast path for captures in the strict grammar, else the line parser."""
    tables, end = [], None
    for table, last in stream_file_arrow(path, server=server, nid_map=nid_map):
        tables.append(table)
        end = last or end
    return pa.concat_tables(tables), *end


def stream_file_arrow(path: str | Path, *, server: str | None = None,
                      nid_map: Mapping[str, str] | None = None
                      ) -> Iterator[tuple[pa.Table, tuple[list[Quarantined], ParseStats] | None]]:
    """`parse_file_arrow` as a stream: (table, None) ... then (table, (quarantine, stats)),
    a table about every `lustre_stats.CHUNK_ROWS` rows, so memory does not grow with the
    file. The parts outside the fast path's grammar (a /proc tree file, a broken line) go
    through the line parser on their own (`_Part`); a file that cannot be read to its end,
    from the last rows handed on."""
    schema = row_schema("raw_lustre_stats")
    file = str(path)
    stats = ParseStats(lustre_stats.SOURCE, files=1)
    spec, _ = lustre_stats._classify_path(file)
    if spec[0] == "skip":
        stats.extra["blocks_skipped"] = 1
    tables: list[pa.Table] = []
    pending = dups = 0
    handed = ParseStats(lustre_stats.SOURCE, files=1)    # what was handed on so far
    quarantined: list[Quarantined] = []
    handed_q: list[Quarantined] = []               # what was handed on: its quarantine
    try:
        blocks = header_blocks(path)
        lines = next(blocks, None)
        while lines is not None:
            after = next(blocks, None)          # one block ahead: is this one the last?
            if after is None and not stats.lines_read and not pc.any(_resets(lines)).as_py():
                raise NotFast("no header (a bare stats file)")   # streamed by the parser
            part = _Part(server, file, nid_map, schema, spec[0] == "skip")
            part.read(lines, stats.lines_read, closed=after is not None)
            for t in part.tables:
                tables.append(t)
                pending += t.num_rows
                stats.rows += t.num_rows
            dups += part.dups
            quarantined += part.quarantined
            for k, v in part.extra.items():
                stats.extra[k] = stats.extra.get(k, 0) + v
            stats.lines_read += len(lines)
            if pending >= lustre_stats.CHUNK_ROWS and after is not None:
                yield pa.concat_tables(tables), None
                tables, pending = [], 0
                handed.lines_read, handed.rows = stats.lines_read, stats.rows
                handed.extra = {**stats.extra, "duplicate_counters": dups}
                handed_q = list(quarantined)
            lines = after
    except NotFast:                             # unreadable to its end, or bare
        del tables
        yield from _line_parser_rest(path, server, nid_map, schema, handed, handed_q,
                                     spec[0] == "skip")
        return
    if dups:
        stats.extra["duplicate_counters"] = stats.extra.get("duplicate_counters", 0) + dups
    stats.lines_quarantined = len(quarantined)
    stats.lines_used = stats.lines_read - stats.lines_quarantined
    yield ((pa.concat_tables(tables) if tables else schema.empty_table()),
           (quarantined, stats))


class _Part:
    """One block of a capture read column-wise; when the fast path refuses it, halved at
    the headers where the line parser's state resets (`_resets`) and both halves tried:
    a refused half is halved again, down to single parameter blocks, which the line
    parser reads on their own; where both halves are refused, the line parser reads the
    pair whole. So one broken block costs a few attempts on ever smaller halves, and a
    file whose every block is refused about the line parser's time. Collects the rows in
    line order, the repeated counters dropped, quarantined lines and the line parser's
    other counts."""

    def __init__(self, server: str | None, file: str, nid_map: Mapping[str, str] | None,
                 schema: pa.Schema, path_skipped: bool) -> None:
        self.server, self.file, self.nid_map, self.schema = server, file, nid_map, schema
        self.path_skipped = path_skipped
        self.tables: list[pa.Table] = []
        self.dups = 0
        self.quarantined: list[Quarantined] = []
        self.extra: dict[str, int] = {}

    def read(self, lines: pa.StringArray, first: int, closed: bool) -> None:
        """Lines `first`.. of the file (0-based); `closed`: more lines follow them."""
        done = self._try(lines, closed)
        if done is not None:
            self._keep(done)
            return
        starts = np.flatnonzero(np.asarray(_resets(lines)))
        self._refused(lines, first, closed, starts[starts > 0])

    def _refused(self, lines: pa.StringArray, first: int, closed: bool,
                 cuts: np.ndarray) -> None:
        """Lines the fast path refused, with the resets inside them where they may be cut."""
        if not len(cuts):
            self._by_line_parser(lines, first, closed)
            return
        mid = int(cuts[len(cuts) // 2])
        left = self._try(lines.slice(0, mid), True)
        right = self._try(lines.slice(mid), closed)
        if left is None and right is None:
            self._by_line_parser(lines, first, closed)
            return
        if left is None:
            self._refused(lines.slice(0, mid), first, True, cuts[cuts < mid])
        else:
            self._keep(left)
        if right is None:
            self._refused(lines.slice(mid), first + mid, closed, cuts[cuts > mid] - mid)
        else:
            self._keep(right)

    def _try(self, lines: pa.StringArray, closed: bool) -> tuple[pa.Table, int] | None:
        """The block's rows column-wise, or None when the fast path refuses it."""
        try:
            return _block(lines, self.server, self.file, self.nid_map, self.schema, closed)
        except NotFast:
            return None

    def _keep(self, done: tuple[pa.Table, int]) -> None:
        self.tables.append(done[0])
        self.dups += done[1]

    def _by_line_parser(self, lines: pa.StringArray, first: int, closed: bool) -> None:
        """The line parser's reading of lines that start the file or start at a reset."""
        q, st = [], None
        for chunk, end in lustre_stats.stream_lines(
                lines.to_pylist(), self.file, server=self.server, nid_map=self.nid_map,
                path_hint=self.file, first_line_no=first + 1, opened=first == 0,
                closed=closed):
            self.tables.append(rows_table(chunk, self.schema))    # dicts a chunk at a time
            if end is not None:
                q, st = end
        self.quarantined += q
        extra = dict(st.extra)
        if first == 0 and self.path_skipped:    # the file's own block, counted once
            extra["blocks_skipped"] -= 1
        for k, v in extra.items():
            if v:
                self.extra[k] = self.extra.get(k, 0) + v


def _line_parser_rest(path: str | Path, server: str | None, nid_map: Mapping[str, str] | None,
                      schema: pa.Schema, handed: ParseStats, handed_q: list[Quarantined],
                      path_skipped: bool
                      ) -> Iterator[tuple[pa.Table, tuple[list[Quarantined], ParseStats] | None]]:
    """The line parser's rows of a file that cannot be read to its end, after the
    `handed.lines_read` lines whose rows were handed on (all of it when none), its
    accounting plus theirs (`handed_q` their quarantined lines; the file's own skipped
    block, `path_skipped`, counted once)."""
    skip = handed.lines_read
    for rows, end in lustre_stats.stream_file(path, server=server, nid_map=nid_map,
                                              skip_lines=skip):
        if end is not None and skip:
            q, st = end
            st.lines_read += skip
            st.lines_used += skip - len(handed_q)
            st.lines_quarantined += len(handed_q)
            st.rows += handed.rows
            q[:0] = handed_q
            for k, v in handed.extra.items():
                if k == "blocks_skipped" and path_skipped:
                    v -= 1                      # the rest's parser counted it again
                if v:
                    st.extra[k] = st.extra.get(k, 0) + v
        yield rows_table(rows, schema), end
