"""Beacon's scheduler job log -> `app_run` rows (source `beacon-job`), one per job.

Line: `job_id<TAB>nodelist<TAB>job_name<TAB>start<TAB>end` (FORMATS.md §3). nodelist is in
Slurm host-list syntax; times are ISO-8601 (`T` or space; an offset or `Z` is honoured,
otherwise local in `tz`), stored naive UTC. app_id = job_id; n_nodes = distinct nodes.
A header row starting with `job_id` and blank lines are used and skipped; an empty end
(`-`, `Unknown`, empty) gives end None (extra["unfinished"]). Lines with another number
of fields, a bad host list or time, or end before start are quarantined.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from lassi.ingest.alps import app_row, parse_time, read_lines, unreadable

from lassi.core.hostlist import expand_hostlist
from lassi.core.quarantine import ParseStats, Quarantined

SOURCE = "beacon-job"


def _time(text: str, tz: str, what: str) -> datetime | None:
    text = text.strip()
    if text == "-":
        return None
    try:
        return parse_time(text, tz)
    except ValueError:
        raise ValueError(f"bad {what} time {text!r}") from None


def parse_record(line: str, tz: str = "UTC") -> dict | None:
    """One job line -> row; None for a header row; ValueError when malformed."""
    fields = line.split("\t")
    if fields[0].strip().lower() == "job_id":
        return None
    if len(fields) != 5:
        raise ValueError(f"{len(fields)} tab-separated fields, expected 5")
    job_id, nodelist, job_name, start_s, end_s = (f.strip() for f in fields)
    if not job_id:
        raise ValueError("empty job_id")
    nodes = list(dict.fromkeys(expand_hostlist(nodelist))) or None
    start, end = _time(start_s, tz, "start"), _time(end_s, tz, "end")
    if start is None:
        raise ValueError("no start time")
    if end is not None and end < start:
        raise ValueError(f"end {end} before start {start}")
    return app_row(
        app_id=job_id, job_id=job_id, job_name=job_name or None, nodes=nodes,
        n_nodes=len(nodes) if nodes else None, start=start, end=end, source=SOURCE,
    )


def named_nodes(row: dict, names: dict[str, str]) -> dict:
    """A job log may list nodes by IP (Beacon's node identity): a row's nodes named through
    `names` (the site's map), repeats dropped, n_nodes their count. The rule
    `beacon_job_columnar.named_nodes` applies to a table (its test compares)."""
    if row.get("nodes"):
        row["nodes"] = list(dict.fromkeys(names.get(n, n) for n in row["nodes"]))
        row["n_nodes"] = len(row["nodes"])
    return row


def parse_lines(
    lines: Iterable[str], file: str, *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one job log's lines (times without offset local in `tz`)."""
    stats = ParseStats(source=SOURCE, files=1)
    rows: list[dict] = []
    quarantine: list[Quarantined] = []
    for line_no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        stats.lines_read += 1
        try:
            row = parse_record(line, tz) if line.strip() else None
        except ValueError as exc:
            stats.lines_quarantined += 1
            quarantine.append(Quarantined(SOURCE, file, line_no, line, str(exc)))
            continue
        stats.lines_used += 1
        if row is not None:
            rows.append(row)
            if row["end"] is None:
                stats.extra["unfinished"] = stats.extra.get("unfinished", 0) + 1
    stats.rows = len(rows)
    return rows, quarantine, stats


def parse_file(path: str | Path, *, tz: str = "UTC") -> tuple[list[dict], list[Quarantined],
                                                              ParseStats]:
    """Parse one (possibly gzipped) Beacon job log."""
    lines, bad = read_lines(path, SOURCE)
    return unreadable(bad) if bad is not None else parse_lines(lines, str(path), tz=tz)
