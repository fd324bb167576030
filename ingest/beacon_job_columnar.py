"""Beacon's scheduler job log read column-wise (Arrow): the fast path of
`lassi.ingest.beacon_job`.

A line is read here when it is printable ASCII fields separated by tabs, five of them, a
job id, a node list that is one name or one Slurm bracket group (`cn[00000-00028,40]`,
a prefix and a suffix around it), and ISO-8601 times (`T` or a space; an offset, `Z` or
none: local in `tz`) with a start and an end that is a time, `-` or empty. Any other line
is read by `beacon_job.parse_record`, the line parser's own reading (which also gives the
quarantine reason). Node ranges are expanded with numpy, each distinct number written
once, zero-padded as its range's lower bound is. The rows equal the line parser's (tests
compare them).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.alps import NO_TIME
from lassi.ingest.beacon_job import SOURCE, parse_record
from lassi.ingest.columnar import (
    all_of,
    any_of,
    blank_lines,
    iso_micros,
    kept_rows,
    list_item,
    names_of,
    table_schema,
    utc_timestamps,
    when,
)
from lassi.ingest.driver_reads import FileReads, files_parser
from lassi.ingest.hostlist_columnar import expand_hostlists

from lassi.core.quarantine import ParseStats, Quarantined

_NO_TIME = pa.array(["-", *sorted(NO_TIME)])        # beacon_job.parse_record: `-` too


@dataclass
class _Parse(FileReads):
    """Rows across the files of one ingest."""

    source = SOURCE
    tables: list[pa.Table] = field(default_factory=list)

    def file(self, path: str | Path, pool: ThreadPoolExecutor) -> None:
        """Read one file's rows."""
        blocks = self.blocks(path, partial(_fast, tz=self.tz), pool,
                             lambda lines: (len(lines), table_schema("app_run").empty_table(),
                                            list(enumerate(lines))))
        if blocks is None:
            return
        self.stats.files += 1
        first = 0
        for n, table, slow in blocks:
            self.stats.lines_read += n
            rows = []
            for i, line in slow:
                try:
                    row = parse_record(line, self.tz) if line.strip() else None
                except ValueError as exc:
                    self.stats.lines_quarantined += 1
                    self.quarantine.append(Quarantined(SOURCE, str(path), first + i + 1, line,
                                                       str(exc)))
                    continue
                if row is not None:
                    rows.append(row)
            self.tables.append(table)
            if rows:
                self.tables.append(pa.Table.from_pylist(rows, schema=table_schema("app_run")))
            first += n

    def finish(self) -> tuple[pa.Table, list[Quarantined], ParseStats]:
        rows = (pa.concat_tables(self.tables) if self.tables
                else table_schema("app_run").empty_table())
        self.stats.lines_used = self.stats.lines_read - self.stats.lines_quarantined
        self.bump("unfinished", rows.column("end").null_count)
        self.stats.rows = rows.num_rows
        return rows, self.quarantine, self.stats


parse_files = files_parser(_Parse)


def _fast(lines: pa.StringArray, tz: str) -> tuple[int, pa.Table, list[tuple[int, str]]]:
    """A block's rows the column-wise reading takes, and the lines left over."""
    n = len(lines)
    tabs = pc.split_pattern(lines, "\t")
    count = pc.list_value_length(tabs)
    field_ = [pc.utf8_trim(list_item(tabs, i), " ") for i in range(5)]
    printable = pc.ascii_is_printable(pc.replace_substring(lines, "\t", " "))
    blank = blank_lines(lines, " \t")
    header = pc.equal(pc.utf8_lower(field_[0]), "job_id")
    start, start_ok = iso_micros(field_[3], tz)
    end, end_ok = iso_micros(field_[4], tz)
    no_end = pc.fill_null(pc.is_in(pc.utf8_lower(field_[4]), _NO_TIME), False)
    end = when(no_end, pa.scalar(None, pa.int64()), end)
    nodes, nodes_ok = expand_hostlists(field_[1])
    row = all_of(printable, pc.equal(count, 5), pc.invert(header), pc.not_equal(field_[0], ""),
                 nodes_ok, start_ok, pc.or_(no_end, end_ok),
                 pc.invert(pc.fill_null(pc.less(end, start), False)))
    used = any_of(all_of(printable, pc.or_(blank, header)), row)
    slow_idx = pc.indices_nonzero(pc.invert(used))
    slow = list(zip(slow_idx.to_pylist(), lines.take(slow_idx).to_pylist(), strict=True))
    keep = pc.indices_nonzero(row)
    pick = kept_rows(keep, n)
    nodes = pick(nodes)
    cols = {"app_id": pick(field_[0]), "job_id": pick(field_[0]),
            "job_name": pick(when(pc.equal(field_[2], ""), pa.scalar(None, pa.string()),
                                  field_[2])),
            "nodes": nodes, "n_nodes": pc.list_value_length(nodes).cast(pa.int32()),
            "start": utc_timestamps(pick(start)), "end": utc_timestamps(pick(end)),
            "source": pa.repeat(pa.scalar(SOURCE), len(keep))}
    table = pa.Table.from_arrays([cols.get(f.name, pa.nulls(len(keep), f.type)).cast(f.type)
                                  for f in table_schema("app_run")], schema=table_schema("app_run"))
    return n, table, slow


def named_nodes(table: pa.Table, names: dict[str, str]) -> pa.Table:
    """`beacon_job.named_nodes` on a table: nodes listed by IP named through `names`, their
    duplicates dropped again, n_nodes their count."""
    nodes = table.column("nodes").combine_chunks()
    if not names or nodes.null_count == len(nodes):
        return table
    flat = nodes.flatten()
    if not pc.any(pc.is_in(flat, value_set=pa.array(list(names), pa.string()))).as_py():
        return table                             # nothing to name: no table of names built
    mapped = names_of(flat, names)
    hit = np.asarray(pc.is_valid(mapped))
    if not hit.any():
        return table
    flat = pc.coalesce(mapped, flat)
    who = np.asarray(pc.list_parent_indices(nodes))
    n = len(nodes)
    touched = np.zeros(n, bool)                 # lists with a name mapped: new repeats
    touched[who[hit]] = True
    at = np.flatnonzero(touched[who])
    codes = np.asarray(pc.dictionary_encode(flat.take(pa.array(at))).indices).astype(np.int64)
    keep = np.ones(len(flat), bool)
    keep[at] = ~pd.Series(who[at] * (codes.max(initial=0) + 1) + codes).duplicated().to_numpy()
    first = np.flatnonzero(keep)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(who[first], minlength=n), out=offsets[1:])
    named = pa.ListArray.from_arrays(pa.array(offsets), flat.take(pa.array(first)),
                                     mask=pc.is_null(nodes))
    table = table.set_column(table.schema.get_field_index("nodes"), "nodes", named)
    n_nodes = when(pc.is_valid(named), pc.list_value_length(named).cast(pa.int32()),
                   table.column("n_nodes").combine_chunks())
    return table.set_column(table.schema.get_field_index("n_nodes"), "n_nodes", n_nodes)
