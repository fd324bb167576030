"""LWFS server (I/O forwarding node) latency traces -> `raw_lwfs_server` rows (pure Python).

Real format (FORMATS.md §4, sample `beacon/data_example.txt`), one file per forwarding node
per UTC day, `beacon/lwfs-server/<fwd>/<YYYY-MM-DD>.log[.gz]`:

    <fwd-ip> [<YYYY-MM-DD HH:MM:SS>]  [Trace]: <Meta|Read|Write> <exe|wait>: n1 .. n8 <UTC ISO>
    <fwd-ip> [<YYYY-MM-DD HH:MM:SS>]  [Trace]: queue length: <n> <UTC ISO>

n1..n8 are cumulative counters of a latency histogram (bucket edges in `conf/`,
`latency_buckets_s`); queue length is a gauge (op_class `Queue`, kind `length`). The
bracketed local time is in the site's `beacon_local` zone, whole seconds; a line whose
local time disagrees with its UTC time by more than MAX_SKEW_S (beyond the UTC
milliseconds the local time drops) is quarantined, as is any line matching neither form
(the real sample's first five lines are the analysis script's debug output).

Per series (ip, op_class, kind), in UTC order: hist_delta = element-wise difference from
the previous sample, requests = its sum; a series' first sample (no earlier sample in the
file nor in the D−1 seed file `prev`) has null hist_delta and requests; a counter that goes
down is a reset: hist_delta = the new histogram, reset True, counted in
ParseStats.counter_resets. The real sample is sorted by host and kind, not by time: deltas
follow time. fwd = the site's name of the IP (null when the site does not know it).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from lassi.ingest.beacon_layers import (
    Sample,
    apply_deltas,
    counter,
    counters,
    parse_samples,
    parse_utc,
    read_seed,
    site_names,
)

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import LATENCY_BUCKETS

if TYPE_CHECKING:
    from lassi.core.config import Site

SOURCE = "lwfs-server"
MAX_SKEW_S = 2.0
_LINE = re.compile(
    r"(?P<ip>\S+) \[(?P<local>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]\s+\[Trace\]:\s+"
    r"(?:(?P<cls>Meta|Read|Write) (?P<kind>exe|wait):(?P<hist>(?: +\d+)+)"
    r"|queue length: +(?P<queue>\d+))"
    r" +(?P<utc>\S+)\s*"
)
_UTC = timedelta(0)


def local_matches(local: datetime, utc: datetime, tz: ZoneInfo) -> bool:
    """True when the whole-second local time names the same instant as the UTC time.

    Either fold of an ambiguous local time (a DST change) may match.
    """
    for fold in (0, 1):
        off = local.replace(fold=fold, tzinfo=tz).utcoffset() or _UTC
        skew = (utc - (local - off)).total_seconds()
        if -MAX_SKEW_S <= skew < 1.0 + MAX_SKEW_S:
            return True
    return False


def line_parser(names: dict[str, str], tz: ZoneInfo):
    """Parser of one LWFS server line (names: IP -> forwarding node name)."""

    def parse(line: str) -> Sample:
        m = _LINE.fullmatch(line)
        if m is None:
            raise ValueError("not an LWFS server trace line ('<ip> [<local>]  [Trace]: "
                             "<Meta|Read|Write> <exe|wait>: n1..n8 <UTC>' or 'queue length')")
        ts = parse_utc(m["utc"])
        if ts is None:
            raise ValueError(f"bad UTC time {m['utc']!r} (expected YYYY-MM-DDTHH:MM:SS.fffZ)")
        try:
            local = datetime.strptime(m["local"], "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise ValueError(f"bad local time {m['local']!r}") from None
        if not local_matches(local, ts, tz):
            raise ValueError(f"local time {m['local']} ({tz.key}) disagrees with UTC time "
                             f"{m['utc']} by more than {MAX_SKEW_S:g} s")
        ip = m["ip"]
        row = {"fwd": names.get(ip), "ip": ip, "ts": ts, "local_ts": local, "hist": None,
               "hist_delta": None, "requests": None, "queue_len": None, "reset": False}
        if m["queue"] is not None:
            row.update(op_class="Queue", kind="length", queue_len=counter(m["queue"], "queue"))
            return Sample((ip, "Queue", "length"), ts, (), row)
        hist = list(counters(m["hist"].split(), "histogram"))
        if len(hist) != LATENCY_BUCKETS:
            raise ValueError(f"{len(hist)} histogram counters, expected {LATENCY_BUCKETS}")
        row.update(op_class=m["cls"], kind=m["kind"], hist=hist)
        return Sample((ip, m["cls"], m["kind"]), ts, tuple(hist), row)

    return parse


def parse_file(path: str | Path, site: Site | None = None, prev: str | Path | None = None,
               day: date | None = None, tz: str | None = None
               ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one forwarding node's LWFS server file (`.gz` transparently).

    `prev`: the same node's previous-day file, read only for each series' last sample;
    `day`: the UTC day the file holds (lines of other days are quarantined);
    `tz`: zone of the bracketed local times (default site.tz('beacon_local'), else UTC).
    """
    zone = ZoneInfo(tz or (site.tz("beacon_local") if site is not None else "UTC"))
    parse = line_parser(site_names(site), zone)
    samples, q, stats = parse_samples(path, SOURCE, parse, day)
    hists = [s for s in samples if s.values]
    seed = read_seed(prev, SOURCE, parse, stats)
    for s, d in zip(hists, apply_deltas(hists, seed, stats, newborn=False), strict=True):
        if d.delta is not None:
            s.row.update(hist_delta=list(d.delta), requests=sum(d.delta), reset=d.reset)
    stats.extra["queue_lines"] = len(samples) - len(hists)
    rows = []
    for s in samples:
        s.row["file"] = str(path)
        rows.append(s.row)
    stats.rows = len(rows)
    return rows, q, stats
