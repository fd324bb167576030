"""Slurm `sacct --parsable2` dumps read column-wise (Arrow): the fast path of
`lassi.ingest.slurm`.

Header rows are found first (lines holding `jobid`, each read by `slurm.read_header`), so
each run of data lines between them is read with its layout, headed or XDMoD's, in a
block of lines split once at `|`. A line is read here when it is printable ASCII, has
its layout's fields (surplus `|` in a last JobName, a trailing `|` of `sacct -p`), and
each field a record needs reads exactly: times that are ISO-8601 (`T` or a space; an
offset, `Z` or none: local in `tz`), epoch seconds or a no-time word; counts whose
leading integer has at most 9 digits; node lists that are comma lists of names and
single bracket groups (`hostlist_columnar`). Launch commands (SubmitLine) are read by
`parse_launch`, once per distinct command. Any other line is read by `slurm.record`, the
line parser's own reading (which also gives the quarantine reason), and joins the others
as a record of the same form.

The step/job rule then runs per file on the records, in numpy, as `slurm.decide` runs it:
an allocation line gives no row when a numbered step of its job started in the file;
steps take user, project and job name from the job's last allocation line. A file whose
header lacks a required field, a pytokio JSON cache and a file that cannot be read to its
end go to `slurm.parse_file` whole. The rows equal the line parser's (tests compare them),
in the same order. Runs of lines are read by two threads: Arrow's kernels run outside the
GIL.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.alps import NO_TIME, parse_launch
from lassi.ingest.arrow_bytes import first_bytes
from lassi.ingest.columnar import (
    READ_THREADS,
    NotFast,
    all_of,
    any_of,
    balanced_block_chars,
    blank_lines,
    iso_micros,
    kept_rows,
    leading_ints,
    line_blocks,
    list_item,
    matches,
    nonempty,
    table_schema,
    utc_timestamps,
    when,
)
from lassi.ingest.driver_reads import FileReads, files_parser
from lassi.ingest.hostlist_columnar import expand_host_lists
from lassi.ingest.slurm import (
    NO_NODES,
    NOT_ENDED,
    SOURCE,
    XDMOD_FIELDS,
    BadHeader,
    Record,
    is_trailing,
    parse_file,
    read_header,
    record,
)

from lassi.core.quarantine import ParseStats, Quarantined

_NO_TIME = pa.array(sorted(NO_TIME))
_EPOCH = r"^[0-9]{1,11}$"                  # 11 digits stay < year 5138
_NUMBERED = r"^[0-9]+(?:\+[0-9]+)?$"
_INFO = ("user", "project", "job_name")


def _records_schema() -> pa.Schema:
    """Records before the step/job rule: app_run's columns (user, project and job name as
    the line wrote them), `seq` (line index in the file), `step`, `has_row`."""
    return pa.schema([*table_schema("app_run"), pa.field("seq", pa.int64()),
                      pa.field("step", pa.string()), pa.field("has_row", pa.bool_())])


@dataclass
class _Run:
    """One run of lines of a layout, read column-wise: its records, the lines left to the
    line parser (index in the file, line) and the counters of its records."""

    records: pa.Table
    slow: list[tuple[int, str]]
    counts: dict[str, int]
    names: tuple[str, ...]
    trailing: bool


class _WholeFile(Exception):
    """The file is for `slurm.parse_file` whole (a bad header, a JSON cache)."""


@dataclass
class _Parse(FileReads):
    """Rows across the files of one ingest."""

    source = SOURCE
    tables: list[pa.Table] = field(default_factory=list)

    def file(self, path: str | Path, pool: ThreadPoolExecutor) -> None:
        """Read one file's rows."""
        try:
            runs, lines = self._runs(path, pool)
        except (NotFast, _WholeFile):
            self._whole(path)
            return
        stats = ParseStats(source=SOURCE, files=1, lines_read=lines)
        quarantine, tables = [], []
        for run in runs:
            for key, n in run.counts.items():
                stats.extra[key] = stats.extra.get(key, 0) + n
            tables.append(run.records)
            recs, seqs = [], []
            for i, line in run.slow:
                try:
                    rec, bumps = record(line, run.names, run.trailing, self.tz)
                except ValueError as exc:
                    stats.lines_quarantined += 1
                    quarantine.append(Quarantined(SOURCE, str(path), i + 1, line, str(exc)))
                    continue
                for key in bumps:
                    stats.extra[key] = stats.extra.get(key, 0) + 1
                if rec is not None:
                    recs.append(rec)
                    seqs.append(i)
            if recs:
                tables.append(_from_records(recs, seqs))
        stats.lines_used = stats.lines_read - stats.lines_quarantined
        rows, dropped = decided(pa.concat_tables(tables) if tables
                                else _records_schema().empty_table())
        if dropped:
            stats.extra["jobs_with_steps"] = dropped
        stats.extra = {k: v for k, v in stats.extra.items() if v}
        stats.rows = rows.num_rows
        self.stats.add(stats)
        self.quarantine += quarantine
        self.tables.append(rows)

    def finish(self) -> tuple[pa.Table, list[Quarantined], ParseStats]:
        rows = (pa.concat_tables(self.tables) if self.tables
                else table_schema("app_run").empty_table())
        return rows, self.quarantine, self.stats

    def _whole(self, path: str | Path) -> None:
        rows, qs, stats = parse_file(path, tz=self.tz)
        self.stats.add(stats)
        self.quarantine += qs
        if rows:
            self.tables.append(pa.Table.from_pylist(rows, schema=table_schema("app_run")))

    def _runs(self, path: str | Path, pool: ThreadPoolExecutor) -> tuple[list[_Run], int]:
        """The file's runs of lines between header rows, each read column-wise in the
        pool with the layout in force; and the file's line count."""
        names, trailing = XDMOD_FIELDS, False
        ahead: deque[Future] = deque()
        runs: list[_Run] = []
        first = 0
        for lines in line_blocks(path, balanced_block_chars(path)):
            if first == 0 and len(lines) and lines[0].as_py().lstrip().startswith("{"):
                raise _WholeFile("a pytokio JSON cache")
            at = 0
            for i, header, ends_bar in _headers(lines):
                if i > at:
                    ahead.append(pool.submit(_run, lines.slice(at, i - at), names, trailing,
                                             self.tz, first + at))
                names, trailing, at = tuple(header), ends_bar, i + 1
            if len(lines) > at:
                ahead.append(pool.submit(_run, lines.slice(at), names, trailing, self.tz,
                                         first + at))
            while len(ahead) > READ_THREADS:
                runs.append(ahead.popleft().result())
            first += len(lines)
        runs += [f.result() for f in ahead]
        return runs, first


parse_files = files_parser(_Parse)


def _headers(lines: pa.StringArray) -> list[tuple[int, list[str], bool]]:
    """The header rows of a block: (index, field names, ends with `|`); _WholeFile when
    one lacks a required field.

    `read_header` reads the lines that hold `jobid` in any case, or any non-ASCII text
    (lower-cased, some becomes ASCII). A line that starts with a digit is never a header
    (field names start with a letter), so data lines, which start with their JobID, are
    not searched."""
    filled, first = first_bytes(lines)
    cand = filled[(first < ord("0")) | (first > ord("9"))]
    some = lines.take(pa.array(cand))
    maybe = any_of(pc.match_substring(some, "jobid", ignore_case=True),
                   pc.invert(pc.string_is_ascii(some)))
    idx = cand[np.asarray(maybe, dtype=bool)]
    out = []
    for i, line in zip(idx.tolist(), lines.take(pa.array(idx)).to_pylist(), strict=True):
        try:
            header = read_header(line) if line.strip() else None
        except BadHeader as exc:
            raise _WholeFile(str(exc)) from exc
        if header is not None:
            out.append((i, header, is_trailing(line)))
    return out


def _from_records(recs: list[Record], seqs: list[int]) -> pa.Table:
    """The line parser's records as a records table."""
    return pa.Table.from_pylist(
        [{**(r.row or {}), **r.info, "job_id": r.job_id, "seq": i, "step": r.step,
          "has_row": r.row is not None} for r, i in zip(recs, seqs, strict=True)],
        schema=_records_schema())


# --- the step/job rule --------------------------------------------------------------------
def decided(records: pa.Table) -> tuple[pa.Table, int]:
    """`slurm.decide` on a file's records: its rows in line order, and how many
    allocation rows its steps dropped."""
    seq = np.asarray(records.column("seq").combine_chunks())
    if (np.diff(seq) < 0).any():                      # the line parser's records follow
        records = records.sort_by("seq")
    job = np.asarray(pc.dictionary_encode(records.column("job_id").combine_chunks())
                     .indices).astype(np.int64)
    alloc = np.asarray(pc.equal(records.column("step"), "").combine_chunks())
    has_row = np.asarray(records.column("has_row").combine_chunks())
    jobs = int(job.max(initial=-1)) + 1
    stepped = np.zeros(jobs, bool)
    stepped[job[~alloc & has_row]] = True
    drop = alloc & has_row & stepped[job]
    parent = np.full(jobs, -1, np.int64)              # each job's last allocation line
    np.maximum.at(parent, job[alloc], np.flatnonzero(alloc))
    parent = pa.array(parent[job], mask=parent[job] < 0)
    cols = {}
    for name in table_schema("app_run").names:
        col = records.column(name)
        if name in _INFO:
            col = col.combine_chunks()
            theirs = col.take(parent)
            col = (when(_truthy(theirs), theirs, col) if name == "job_name"
                   else when(_truthy(col), col, theirs))
            col = nonempty(col)
        cols[name] = col
    rows = pa.table(cols, schema=table_schema("app_run"))
    kept = has_row & ~drop
    if not kept.all():
        rows = rows.take(pa.array(np.flatnonzero(kept)))
    return rows, int(drop.sum())


def _truthy(v: pa.Array) -> pa.BooleanArray:
    return pc.fill_null(pc.not_equal(v, ""), False)


# --- one run of lines, column-wise --------------------------------------------------------
class _Layout:
    """A run's lines split at `|` onto its layout's field names."""

    def __init__(self, lines: pa.StringArray, names: tuple[str, ...], trailing: bool) -> None:
        self.lines, self.names = lines, names
        self._got: dict[str, pa.Array] = {}
        self.parts = pc.split_pattern(lines, "|")
        count = np.asarray(pc.list_value_length(self.parts))
        width = len(names)
        dropped = np.zeros(len(lines), bool)
        if trailing:
            dropped = (count == width + 1) & np.asarray(
                pc.fill_null(pc.equal(list_item(self.parts, width), ""), False))
        fields = count - dropped
        self.merged = (fields > width) & (names[-1] == "jobname")
        self.fits = (fields == width) | self.merged

    def get(self, name: str) -> pa.Array:
        """The field's text per line (null when the layout lacks it), read once."""
        if name not in self._got:
            self._got[name] = self._get(name)
        return self._got[name]

    def _get(self, name: str) -> pa.Array:
        if name not in self.names:
            return pa.nulls(len(self.lines), pa.string())
        i = self.names.index(name)
        value = list_item(self.parts, i)
        if i == len(self.names) - 1 and self.merged.any():       # JobName keeps its `|`
            rest = pc.extract_regex(self.lines, rf"^(?:[^|]*\|){{{i}}}(?P<rest>.*)$")
            value = when(pa.array(self.merged), rest.flatten()[0], value)
        return value


def _run(lines: pa.StringArray, names: tuple[str, ...], trailing: bool, tz: str,
         first: int) -> _Run:
    """A run's records that the column-wise reading takes; the rest left over."""
    lay = _Layout(lines, names, trailing)
    ident, job, step = _ids(lay)
    is_alloc = pc.equal(step, "")
    numbered = matches(step, _NUMBERED)
    app = pc.or_(is_alloc, numbered)                 # its line may give a row
    start, start_ok = _times(lay.get("start"), tz)
    end, end_ok = _times(lay.get("end"), tz)
    started = all_of(app, pc.is_valid(start))
    state = list_item(pc.split_pattern(pc.fill_null(lay.get("state"), ""), " "), 0)
    state = pc.utf8_rtrim(pc.utf8_upper(state), "+")
    open_end = all_of(started, any_of(pc.is_in(state, pa.array(sorted(NOT_ENDED))),
                                      pc.is_null(end)))
    end = when(open_end, pa.scalar(None, pa.int64()), end)
    backwards = pc.fill_null(pc.less(end, start), False)
    nodes, nodes_ok = _nodes(lay.get("nodelist"))
    n_nodes, long_nodes = leading_ints(lay.get("nnodes"))
    n_procs, long_procs = leading_ints(lay.get("ncpus"))
    exit_status, long_exit = leading_ints(lay.get("exitcode"))
    n_nodes = when(pc.is_valid(nodes), pc.list_value_length(nodes).cast(pa.int64()), n_nodes)
    long_any = any_of(all_of(pc.is_null(nodes), long_nodes), long_procs, long_exit)
    readable = any_of(pc.invert(app), all_of(start_ok, end_ok, pc.invert(backwards), nodes_ok,
                                             pc.invert(long_any)))
    blank = blank_lines(lines)
    take = all_of(pc.ascii_is_printable(lines), pc.invert(blank), pa.array(lay.fits),
                  pc.not_equal(ident, ""), readable)
    slow_idx = pc.indices_nonzero(pc.invert(pc.or_(take, blank)))
    slow = [(first + i, line) for i, line in zip(slow_idx.to_pylist(),
                                                 lines.take(slow_idx).to_pylist(), strict=True)]
    keep = pc.indices_nonzero(take)
    command = lay.get("submitline")
    command = nonempty(command)
    exe = _exes(command)
    job_name = lay.get("jobname")
    exe = when(all_of(numbered, pc.is_null(exe), pc.is_null(command), _truthy(job_name)),
               job_name, exe)
    cols = {"app_id": when(is_alloc, job, pc.binary_join_element_wise(job, step, ".")),
            "job_id": job, "user": lay.get("user"), "project": lay.get("account"),
            "job_name": job_name, "exe": exe, "command": command, "nodes": nodes,
            "n_nodes": n_nodes, "n_procs": n_procs, "start": start, "end": end,
            "exit_status": exit_status, "step": step, "has_row": started}
    taken = np.asarray(take)
    counts = {"non_app_steps": int((taken & ~np.asarray(app)).sum()),
              "not_started": int((taken & np.asarray(app) & ~np.asarray(started)).sum()),
              "unfinished": int((taken & np.asarray(open_end)).sum())}
    return _Run(_records(cols, keep, first), slow, counts, names, trailing)


def _ids(lay: _Layout) -> tuple[pa.Array, pa.Array, pa.Array]:
    """`slurm._split_id` per line: the id read (JobIDRaw, else JobID; "" when neither),
    the job and the step ("" for the allocation line)."""
    shown = pc.utf8_trim(pc.fill_null(lay.get("jobid"), ""), " ")
    raw = pc.utf8_trim(pc.fill_null(lay.get("jobidraw"), ""), " ")
    ident = when(pc.not_equal(raw, ""), raw, shown)
    job_step = pc.split_pattern(ident, ".", max_splits=1)
    step = pc.fill_null(list_item(job_step, 1), "")
    shown_step = pc.fill_null(list_item(pc.split_pattern(shown, ".", max_splits=1), 1), "")
    return ident, list_item(job_step, 0), when(pc.equal(step, ""), shown_step, step)


def _records(cols: dict[str, pa.Array], keep: pa.Array, first: int) -> pa.Table:
    """The records table of the lines `keep` (indices in a run starting at line `first`)."""
    pick = kept_rows(keep, len(cols["job_id"]))
    arrays = []
    for f in _records_schema():
        if f.name == "seq":
            arrays.append(pc.add(keep.cast(pa.int64()), first))
        elif f.name == "source":
            arrays.append(pa.repeat(pa.scalar(SOURCE), len(keep)))
        elif f.name in ("start", "end"):
            arrays.append(utc_timestamps(pick(cols[f.name])))
        else:
            arrays.append(pick(cols[f.name]).cast(f.type))
    return pa.Table.from_arrays(arrays, schema=_records_schema())


def _times(text: pa.Array, tz: str) -> tuple[pa.Array, pa.Array]:
    """`alps.parse_time` as UTC epoch microseconds (null: no time) and where this reading
    is exact: ISO-8601 as written, then the other values trimmed (no-time words, epoch
    seconds, ISO-8601 between spaces)."""
    text = pc.fill_null(text, "")
    micros, ok = iso_micros(text, tz)
    rest = pc.indices_nonzero(pc.invert(ok))
    if not len(rest):
        return micros, ok
    s = pc.utf8_trim(text.take(rest), " ")
    none = pc.is_in(pc.utf8_lower(s), _NO_TIME)
    epoch = matches(s, _EPOCH)
    seconds = pc.multiply(pc.cast(when(epoch, s, "0"), pa.int64()), 1_000_000)
    iso, iso_ok = iso_micros(s, tz)
    values = when(none, pa.scalar(None, pa.int64()), when(epoch, seconds, iso))
    good = any_of(none, epoch, iso_ok)
    at = np.asarray(rest)
    out = np.asarray(micros).copy()
    valid = np.ones(len(out), bool)
    out[at] = np.asarray(pc.fill_null(values, 0))
    valid[at] = np.asarray(pc.is_valid(values))
    flags = np.asarray(ok).copy()
    flags[at] = np.asarray(good)
    return pa.array(out, pa.int64(), mask=~valid), pa.array(flags)


def _nodes(text: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`slurm._nodes` per line (null: no nodes) and where this reading is exact."""
    s = pc.utf8_trim(pc.fill_null(text, ""), " ")
    none = pc.is_in(pc.utf8_lower(s), pa.array(sorted(NO_NODES)))
    listed = pc.indices_nonzero(pc.invert(none))
    nodes, ok = expand_host_lists(s.take(listed))
    where = np.full(len(s), -1, np.int64)
    where[np.asarray(listed)] = np.arange(len(listed))
    at = pa.array(where, mask=where < 0)
    return nodes.take(at), any_of(none, pc.fill_null(ok.take(at), False))


def _exes(command: pa.Array) -> pa.Array:
    """parse_launch's executable of each command, each distinct command read once."""
    enc = pc.dictionary_encode(command)
    exes = pa.array([parse_launch(c)[0] for c in enc.dictionary.to_pylist()], pa.string())
    return exes.take(enc.indices)
