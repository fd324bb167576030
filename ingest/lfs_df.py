"""`lfs df` snapshots (OST/MDT fullness) -> `ost_health` rows (source `lfs-df`); TOKIO's
NERSC `lfsstate` connector (pytokio `tokio/connectors/nersc_lfsstate.py`).

Accepted lines (the 1K-blocks form of `lfs df`):
- `fsname-OST0000_UUID  total  used  avail  use%  /mount[OST:0]` (also MDT): one row;
- `fsname-OST0002_UUID : inactive device` (and other `: <status>` lines): a row with
  status `inactive` (or the text given) and no sizes;
- the `UUID 1K-blocks ...` header, `filesystem summary:` / `filesystem_summary:` totals and
  blank lines: used, no row;
- `BEGIN <epoch>`: NERSC's cron separator (`echo "BEGIN $(date +%s)"`), the time of the
  snapshot that follows;
- anything else is quarantined, and so are the data lines of an `lfs df -i` section (inode
  counts: `ost_health` has no inode columns) and of `lfs df -h` (sizes with units).
A UUID too long for its column, alone on its line with the numbers on the next, is joined.
A target that appears twice in one snapshot (a file system mounted twice) keeps its last
line, as pytokio does; the others count in extra["duplicate_targets"].

Snapshot time (both `lfs df` and `lctl dl -t` files, see `snapshot_time`): a `BEGIN <epoch>`
line; else a time in the file name — `lfs-df_2017-03-20T02:00:00.txt`,
`lfs-df.2017-03-20T020000Z.txt`, `osts-20170320T020000.txt`, `lfs-df_2017-03-20.txt`
(00:00) or a 10-digit epoch (`osts.1489975200.txt`); name times without `Z` are local in
`tz` (`--tz`, else the site's `timezones.lfs_df` / `lctl_dl`, default UTC); else the
`date` argument at 00:00Z; else the file's mtime (UTC). With `date`, data lines of
snapshots on another UTC day are quarantined (a write never touches a day it does not own).

`read_inputs` (the connector; `lassi.ingest.writer` writes) gives `ost_health` rows for the
snapshots' UTC days, replacing only this source's rows of those days (an ingest owns whole
days of its source: give a day's snapshots together); the quarantine rows go to `date`
(today when None).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.columnar import table_schema
from lassi.ingest.contract import IngestError, IngestResult, SourceRows, TableRows
from lassi.ingest.snapshot_columnar import Tail, read_table

from lassi.core.quarantine import ParseStats, Quarantined

SOURCE = "lfs-df"
COLUMNS = ["source", "host", "ts", "fs", "target", "kind", "target_index", "mount",
           "total_kib", "used_kib", "avail_kib", "use_pct", "status", "server_nid",
           "failed_over"]

_BEGIN = re.compile(r"^BEGIN\s+(\d+(?:\.\d+)?)\s*$")
_TARGET = r"(?P<target>(?P<fs>[A-Za-z0-9_.]+?)-(?P<kind>OST|MDT)(?P<hex>[0-9a-fA-F]{4,8}))"
_DATA = re.compile(r"^\s*" + _TARGET + r"_UUID\s+(?P<total>\d+)\s+(?P<used>\d+)\s+"
                   r"(?P<avail>\d+)\s+(?P<pct>\d+(?:\.\d+)?|-)%?\s+(?P<mount>\S+?)"
                   r"\[(?P<kind2>OST|MDT):(?P<idx>\d+)\]\s*$")
_STATUS = re.compile(r"^\s*" + _TARGET + r"_UUID\s*:\s*(?P<status>\S.*?)\s*$")
_ALONE = re.compile(r"^\s*" + _TARGET + r"_UUID\s*$")
_SUMMARY = re.compile(r"^\s*filesystem[ _]summary:", re.IGNORECASE)
_HEADER = re.compile(r"^\s*UUID\s+(?P<unit>\S+)\s+")
_NAME_ISO = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?:[T_ ](\d{2}):?(\d{2})(?::?(\d{2}))?)?"
                       r"(Z)?(?!\d)")
_NAME_EPOCH = re.compile(r"(?<!\d)(\d{10})(?!\d)")

# classify(line) -> ("row", dict) | ("used", None) | ("bad", reason)
Classifier = Callable[[str], tuple[str, dict | str | None]]


# --- snapshot time ----------------------------------------------------------------------------
def name_time(path: str | Path, tz: str = "UTC") -> dt.datetime | None:
    """The UTC time a file name carries (see the module doc), or None."""
    name = Path(path).name
    for m in _NAME_ISO.finditer(name):
        y, mo, d, hh, mm, ss, z = m.groups()
        try:
            t = dt.datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0), int(ss or 0))
        except ValueError:
            continue
        if not 1990 <= t.year <= 2100:
            continue
        zone = dt.timezone.utc if z else ZoneInfo(tz)
        return t.replace(tzinfo=zone).astimezone(dt.timezone.utc).replace(tzinfo=None)
    m = _NAME_EPOCH.search(name)
    if m:
        return epoch_utc(float(m.group(1)))
    return None


def epoch_utc(sec: float) -> dt.datetime:
    """A naive UTC datetime of epoch seconds."""
    return dt.datetime.fromtimestamp(sec, dt.timezone.utc).replace(tzinfo=None)


def snapshot_time(path: str | Path, date: dt.date | None, tz: str = "UTC") -> dt.datetime:
    """Time of a file's lines before any `BEGIN`: its name's, else `date` 00:00Z, else mtime."""
    t = name_time(path, tz)
    if t is not None:
        return t
    if date is not None:
        return dt.datetime.combine(date, dt.time())
    return epoch_utc(Path(path).stat().st_mtime)


# --- shared snapshot parser ------------------------------------------------------------------
def parse_snapshots(path: str | Path, source: str, classify: Classifier,
                    date: dt.date | None = None, tz: str = "UTC",
                    ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Read a file of snapshots (`BEGIN <epoch>` separated or one), classify each line.

    Rows get `ts`, `source`, `_line`; a target repeated in one snapshot keeps its last row.
    """
    from lassi.ingest.alps import read_lines, unreadable

    lines, bad = read_lines(path, source)
    if lines is None:
        return unreadable(bad)
    stats = ParseStats(source, files=1, lines_read=len(lines))
    qs: list[Quarantined] = []
    snaps: dict[dt.datetime, dict[str, dict]] = {}
    try:
        first = snapshot_time(path, date, tz)
    except OSError as exc:
        q = Quarantined(source, str(path), 0, "", f"no snapshot time: {exc}")
        return [], [q], ParseStats(source, files=1, lines_read=len(lines),
                                   lines_quarantined=len(lines))
    dup = 0
    for no, line, kind, val, ts in snapshot_lines(lines, 1, first, classify):
        if kind == "begin":
            stats.lines_used += 1
            continue
        if kind == "bad":
            qs.append(Quarantined(source, str(path), no, line, str(val)))
            continue
        if kind == "row" and date is not None and ts.date() != date:
            qs.append(Quarantined(source, str(path), no, line,
                                  f"snapshot {ts.isoformat()}Z is not on {date}"))
            continue
        stats.lines_used += 1
        if kind == "row":
            row = dict(val, source=source, ts=ts, _line=no)
            snap = snaps.setdefault(ts, {})
            dup += row["target"] in snap
            snap[row["target"]] = row
    rows = [r for snap in snaps.values() for r in snap.values()]
    stats.lines_quarantined = len(qs)
    stats.rows = len(rows)
    if dup:
        stats.extra["duplicate_targets"] = dup
    return rows, qs, stats


def snapshot_lines(lines: list[str], first_no: int, ts: dt.datetime, classify: Classifier
                   ) -> Iterator[tuple[int, str, str, dict | str | None, dt.datetime]]:
    """Each line's (number, text, kind, value, snapshot time): kind "begin" for a `BEGIN`
    line (whose epoch is the time from there on), else the classifier's."""
    for no, line in enumerate(lines, first_no):
        m = _BEGIN.match(line)
        if m:
            ts = epoch_utc(float(m.group(1)))
            yield no, line, "begin", None, ts
            continue
        kind, val = classify(line)
        yield no, line, kind, val, ts


def tail_reader(source: str, classifier: Callable[[], Classifier]) -> Tail:
    """The `Tail` of a source whose lines a fresh `classifier()` reads (its state as at a
    snapshot boundary after lines the column-wise reading took)."""
    def tail(lines: list[str], first_no: int, ts: dt.datetime):
        classify, rows, bad, other = classifier(), [], [], 0
        for no, line, kind, val, at in snapshot_lines(lines, first_no, ts, classify):
            if kind == "bad":
                bad.append((no, line, str(val)))
            elif kind == "row":
                rows.append(dict(val, source=source, ts=at, _line=no))
            elif kind == "used" and val:
                other += 1
        return rows, bad, other
    return tail


def _target_fields(m: re.Match) -> dict:
    return {"fs": m.group("fs"), "target": m.group("target"), "kind": m.group("kind"),
            "target_index": int(m.group("hex"), 16)}


class _LfsDfClassifier:
    """Line classifier of `lfs df` output; remembers the unit of the last header."""

    def __init__(self) -> None:
        self.unit = "1K-blocks"
        self.pending: str | None = None   # a long UUID that `lfs df` put on a line of its own

    def __call__(self, line: str) -> tuple[str, dict | str | None]:
        pending, self.pending = self.pending, None
        if pending is not None and line[:1].isspace() and line.strip()[:1].isdigit():
            line = f"{pending} {line.strip()}"
        if _ALONE.match(line):
            self.pending = line.strip()
            return "used", None
        if not line.strip() or _SUMMARY.match(line):
            return "used", None
        h = _HEADER.match(line)
        if h and "Mounted" in line:
            self.unit = h.group("unit")
            return "used", None
        m = _DATA.match(line)
        if m:
            if self.unit != "1K-blocks":
                return "bad", f"`lfs df` {self.unit} output is not supported (1K-blocks only)"
            if m.group("kind") != m.group("kind2"):
                return "bad", "target kind differs from the [kind:index] of its mount"
            pct = m.group("pct")
            row = _target_fields(m) | {
                "mount": m.group("mount"), "total_kib": int(m.group("total")),
                "used_kib": int(m.group("used")), "avail_kib": int(m.group("avail")),
                "use_pct": None if pct == "-" else float(pct), "status": None}
            if row["target_index"] != int(m.group("idx")):
                return "bad", f"index [{m.group('idx')}] differs from the target name's"
            return "row", row
        s = _STATUS.match(line)
        if s:
            status = s.group("status").lower()
            status = "inactive" if status.startswith("inactive") else status
            return "row", _target_fields(s) | {"mount": None, "status": status}
        if self.unit != "1K-blocks" and line.lstrip().split()[0].endswith("_UUID"):
            return "bad", f"`lfs df` {self.unit} output is not supported (1K-blocks only)"
        return "bad", "not an `lfs df` line (target_UUID 1K-blocks used avail use% mount[kind:idx])"


def complete_rows(rows: list[dict]) -> list[dict]:
    """Every schema column present (None where the source has nothing)."""
    return [{c: r.get(c) for c in COLUMNS} for r in rows]


def parse_file(path: str | Path, date: dt.date | None = None, tz: str = "UTC",
               ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one `lfs df` file: `ost_health` rows (dicts without `date`)."""
    rows, qs, stats = parse_snapshots(path, SOURCE, _LfsDfClassifier(), date, tz)
    return complete_rows(rows), qs, stats


# --- pandas level ---------------------------------------------------------------------------
def to_pandas(rows: list[dict]):
    """`ost_health` rows as a pandas DataFrame (schema columns and order, `date` last)."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=COLUMNS)
    df["date"] = [t.date() for t in df["ts"]]
    return df


# --- the ingest contract -------------------------------------------------------------------
def read_files(site, inputs: list[str], date: dt.date | None, tz: str | None, source: str,
               parse: Callable, tail: Tail) -> list[IngestResult]:
    """Read every input file of one snapshot source (`snapshot_columnar.read_table`, with
    the line parser `parse(path, date, tz)` for the files it leaves, `tail` for the
    snapshots after a line it does not take): `ost_health` rows
    that replace this source's rows of the snapshots' UTC days (and of `date`)."""
    from lassi.core.textio import iter_files

    files = list(iter_files(inputs))
    if not files:
        raise IngestError(f"no input files under {' '.join(inputs)}")
    zone = tz or (site.tz(source.replace("-", "_")) if site is not None else "UTC")
    tables, qs, stats = [], [], ParseStats(source)
    for f in files:
        t, q, s = read_table(f, source, date, zone, parse, snapshot_time, tail)
        tables.append(t)
        qs += q
        stats.add(s)
    rows = pa.concat_tables(tables) if tables else table_schema("ost_health").empty_table()
    rows = rows.append_column("date", pc.cast(rows.column("ts"), pa.date32()))
    days = sorted(set(pc.unique(rows.column("date")).to_pylist()) | ({date} if date else set()))
    tables = [TableRows("ost_health", rows, days, SourceRows((source,)))] if days else []
    return [IngestResult(stats, tables, qs)]


def read_inputs(site, inputs: list[str], date: dt.date | None, tz: str | None
                ) -> list[IngestResult]:
    """`lassi ingest --source lfs-df`: files/directories of `lfs df` output -> ost_health."""
    return read_files(site, inputs, date, tz, SOURCE, parse_file, TAIL)


TAIL = tail_reader(SOURCE, _LfsDfClassifier)


def ingest_inputs(spark, wh, site, inputs: list[str], date: dt.date | None,
                  tz: str | None) -> ParseStats:
    """Compatibility entry point (the table registry names it): `read_inputs` written by
    `lassi.ingest.writer` (tables and quarantine, no ingest_log row). Use
    `lassi.ingest.runner.ingest_source(..., "lfs-df", ...)`."""
    from lassi.ingest.writer import write_ingest

    del spark
    return write_ingest(wh, SOURCE, read_inputs(site, inputs, date, tz), date, log=False)
