"""Beacon's Lustre-side layers -> `raw_lustre_client`, `raw_ost`, `raw_mds` rows (pure Python).

Formats (FORMATS.md §4), one file per host per UTC day,
`beacon/<layer>/<host>/<YYYY-MM-DD>.log[.gz]`:

- `lustre-client` (forwarding node, `osc.*.rpc_stats`), one line per OST per sample:
  `<fwd-ip> <UTC ISO> <ost> <read_rpcs> <write_rpcs> <pages_per_rpc> [<rpc_wait_us>]`
  — the optional 7th field (a lassi extension) is the cumulative `req_waittime` sum of
  `osc.*.stats` in microseconds: how long the node's Lustre client waited for that OST's
  replies, the evidence that separates a slow OST from a slow forwarding node.
- `ost` (OSS, `obdfilter.*.brw_stats`/`stats`), one line per OST per sample:
  `<oss-host> <UTC ISO> <ost> <read_rpcs> <write_rpcs> <pages_per_rpc> <read_bytes> <write_bytes>`
- `mds`, one line per requesting host per sample: `<source> <UTC ISO> op=count op=count ...`
  (ops from schemas.BEACON_MDS_OPS, any order, missing ones 0; mds = the host folder name).

RPC, byte and op counts are cumulative; pages_per_rpc is the interval's average (not a
counter). UTC times are ISO-8601 with `Z` (`2018-02-25T10:00:12.544Z`), stored naive UTC.

Deltas (shared with `lwfs_server` through `apply_deltas`). Per series ((ip, ost),
(oss, ost), (mds, source)) in timestamp order (stable for equal times):

- delta = value − previous value of the series, interval_s = seconds since that sample;
- a reset: if any counter of the series went down, every delta of that sample is the
  new value (counters restart together), `reset` is True and ParseStats.counter_resets
  counts it — deltas are never negative;
- the previous value of a day's first sample comes from the same host's D−1 file when
  the caller passes it (`prev`): only its last sample per series is read, its lines are
  neither counted nor quarantined;
- a series with no earlier sample is a *first sample*: delta null, interval_s null —
  unless the host had sampled before without it. The host's line times (this file and the
  seed's last) form samples, a pause of more than NEWBORN_GAP_S starting the next one (a
  collector's lines of one sample may spread over a few seconds); a series first seen in
  a later sample than the host's first did not exist, or was all zero, at the previous
  one — a Lustre OSC or MDS export starts with zero counters — so its delta is its whole
  value and interval_s the time since the previous sample's last line
  (`extra["newborn_series"]`). `lwfs_server` switches this rule off.

Lines that do not parse are quarantined with a one-line reason; lines read = lines used
+ lines quarantined (blank lines are used). A file that breaks mid-read (truncated gzip)
gets one more quarantined pseudo-line after the last line read.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import BEACON_MDS_OPS
from lassi.core.textio import open_text

if TYPE_CHECKING:
    from lassi.core.config import Site

NEWBORN_GAP_S = 1.0
MAX_LONG = 2**63 - 1
LAYERS = ("lustre-client", "ost", "mds")
_OST_RE = re.compile(r"[A-Za-z0-9_.]+-OST[0-9a-fA-F]{4,}")
_MDS_INDEX = {op: i for i, op in enumerate(BEACON_MDS_OPS)}

Key = tuple
Values = tuple[int, ...]


# --------------------------------------------------------------------------- shared helpers


def parse_utc(text: str) -> datetime | None:
    """Naive UTC datetime of `YYYY-MM-DDTHH:MM:SS[.frac]Z`; None when it is not one."""
    if len(text) < 20 or text[-1] != "Z" or text[10] != "T":
        return None
    try:
        ts = datetime.fromisoformat(text[:-1])
    except ValueError:
        return None
    return ts if ts.tzinfo is None else None


def site_names(site: Site | None) -> dict[str, str]:
    """IP/NID -> node name of every compute and forwarding node of the site."""
    return site.nid_map if site is not None else {}


def fwd_identities(site: Site | None) -> frozenset[str]:
    """Names and IPs of the site's forwarding nodes."""
    if site is None or not site.has_forwarding:
        return frozenset()
    return frozenset(site.fwd_nodes) | frozenset(site.fwd_ip(f) for f in site.fwd_nodes)


def read_numbered(path: str | Path, source: str, q: list[Quarantined],
                  stats: ParseStats) -> Iterator[tuple[int, str]]:
    """(line_no, line without newline) of a (gzipped) file; read errors become a quarantined
    pseudo-line (line_no 0 when the file cannot be opened), counted as read."""
    file = str(path)
    line_no = 0
    try:
        with open_text(path) as fh:
            for line_no, line in enumerate(fh, 1):
                yield line_no, line.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        stats.lines_read += 1
        stats.lines_quarantined += 1
        where = "cannot read file" if line_no == 0 else f"read error after line {line_no}"
        if line_no == 0:
            stats.extra["files_unreadable"] = stats.extra.get("files_unreadable", 0) + 1
        q.append(Quarantined(source, file, line_no + 1 if line_no else 0, "",
                             f"{where}: {type(exc).__name__}: {exc}"))


def counter(text: str, what: str) -> int:
    """A non-negative integer that fits a LongType, else ValueError naming `what`."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > MAX_LONG:
        raise ValueError(f"{what}: {text!r} is not a non-negative 64-bit integer")
    return int(text)


def counters(tokens: list[str], what: str) -> tuple[int, ...]:
    """Non-negative 64-bit integers, else ValueError naming `what`."""
    return tuple(counter(t, what) for t in tokens)


# --------------------------------------------------------------------------- deltas


@dataclass
class Sample:
    """One parsed cumulative sample: its series key, time, counters and the row it fills."""

    key: Key
    ts: datetime
    values: Values
    row: dict
    aux: Values = ()      # optional counters: deltas kept apart, never a reset of `values`


@dataclass
class Seed:
    """The previous day's last sample per series, and the host's last sample time."""

    last: dict[Key, tuple[datetime, Values, Values]] = field(default_factory=dict)
    host_ts: datetime | None = None

    def add(self, s: Sample) -> None:
        old = self.last.get(s.key)
        if old is None or s.ts >= old[0]:
            self.last[s.key] = (s.ts, s.values, s.aux)
        if self.host_ts is None or s.ts > self.host_ts:
            self.host_ts = s.ts


@dataclass
class Delta:
    """What apply_deltas found for one sample."""

    delta: Values | None
    interval_s: float | None
    reset: bool
    aux: Values | None = None


@dataclass
class HostSamples:
    """The host's samples: first and last line time of each, in time order."""

    starts: list[datetime]
    ends: list[datetime]

    @classmethod
    def of(cls, samples: list[Sample], seed: Seed) -> HostSamples:
        times = {s.ts for s in samples}
        if seed.host_ts is not None:
            times.add(seed.host_ts)
        gap = timedelta(seconds=NEWBORN_GAP_S)
        starts: list[datetime] = []
        ends: list[datetime] = []
        for t in sorted(times):
            if ends and t - ends[-1] <= gap:
                ends[-1] = t
            else:
                starts.append(t)
                ends.append(t)
        return cls(starts, ends)

    def previous_end(self, ts: datetime) -> datetime | None:
        """Last line time of the sample before the one holding ts; None in the first."""
        i = bisect.bisect_right(self.starts, ts) - 1
        return self.ends[i - 1] if i > 0 else None


def _step(values: Values, prev: Values) -> tuple[Values, bool]:
    """(delta, reset) from the previous values: a counter that went down resets them all."""
    if len(prev) != len(values) or any(v < p for v, p in zip(values, prev, strict=True)):
        return values, True
    return tuple(v - p for v, p in zip(values, prev, strict=True)), False


def _aux_step(aux: Values, prev: Values, reset: bool) -> Values | None:
    """Deltas of the optional counters: their new values after a reset, None when either
    sample lacks them (a collector that started or stopped reporting them) or one went down
    on its own."""
    if not aux or len(prev) != len(aux):
        return None
    if reset:
        return aux
    if any(v < p for v, p in zip(aux, prev, strict=True)):
        return None
    return tuple(v - p for v, p in zip(aux, prev, strict=True))


def apply_deltas(samples: list[Sample], seed: Seed | None, stats: ParseStats,
                 newborn: bool = True) -> list[Delta]:
    """Per-interval deltas of every sample (same order as `samples`); see the module doc.

    Counts resets in stats.counter_resets and first/newborn samples in stats.extra.
    """
    seed = seed or Seed()
    out: list[Delta | None] = [None] * len(samples)
    series: dict[Key, list[int]] = {}
    for i, s in enumerate(samples):
        series.setdefault(s.key, []).append(i)
    host = HostSamples.of(samples, seed) if newborn else None
    for key, idx in series.items():
        idx.sort(key=lambda i: samples[i].ts)  # stable: equal times keep line order
        prev = seed.last.get(key)
        for i in idx:
            s = samples[i]
            if prev is not None:
                delta, reset = _step(s.values, prev[1])
                out[i] = Delta(delta, (s.ts - prev[0]).total_seconds(), reset,
                               _aux_step(s.aux, prev[2], reset))
                stats.counter_resets += reset
            else:
                born = host.previous_end(s.ts) if host is not None else None
                if born is None:
                    out[i] = Delta(None, None, False)
                    _count(stats, "first_samples")
                else:
                    out[i] = Delta(s.values, (s.ts - born).total_seconds(), False,
                                   s.aux or None)
                    _count(stats, "newborn_series")
            prev = (s.ts, s.values, s.aux)
    return out  # type: ignore[return-value]


def _count(stats: ParseStats, key: str, n: int = 1) -> None:
    stats.extra[key] = stats.extra.get(key, 0) + n


LineParser = Callable[[str], Sample | None]


def parse_samples(path: str | Path, source: str, parse_line: LineParser,
                  day: date | None = None
                  ) -> tuple[list[Sample], list[Quarantined], ParseStats]:
    """Run `parse_line` over a file: samples, quarantine, accounting (rows not yet set).

    parse_line returns a Sample, None for a line that is understood but yields nothing
    (blank), or raises ValueError with the reason. With `day` (the UTC day the file
    holds), a line of another UTC day is quarantined.
    """
    stats = ParseStats(source=source, files=1)
    q: list[Quarantined] = []
    samples: list[Sample] = []
    file = str(path)
    for line_no, line in read_numbered(path, source, q, stats):
        s = judge_line(parse_line, source, file, line_no, line, day, q, stats)
        if s is not None:
            samples.append(s)
    return samples, q, stats


def judge_line(parse_line: LineParser, source: str, file: str, line_no: int, line: str,
               day: date | None, q: list[Quarantined], stats: ParseStats) -> Sample | None:
    """One line's verdict, counted in `stats`: its Sample, None (blank, or quarantined into
    `q` with the reason; a line of another UTC day than `day` included)."""
    stats.lines_read += 1
    try:
        s = parse_line(line) if line.strip() else None
        if day is not None and s is not None and s.ts.date() != day:
            raise ValueError(f"UTC day {s.ts.date()} of the line is not the file's day {day}")
    except ValueError as exc:
        stats.lines_quarantined += 1
        q.append(Quarantined(source, file, line_no, line, str(exc)))
        return None
    stats.lines_used += 1
    return s


def read_seed(prev: str | Path | None, source: str, parse_line: LineParser,
              stats: ParseStats) -> Seed | None:
    """The last sample per series of the previous day's file (bad lines skipped silently)."""
    if prev is None:
        return None
    seed = Seed()
    q: list[Quarantined] = []
    scratch = ParseStats(source=source)
    for _, line in read_numbered(prev, source, q, scratch):
        try:
            s = parse_line(line) if line.strip() else None
        except ValueError:
            continue
        if s is not None:
            seed.add(s)
    if q:
        _count(stats, "seed_read_errors")
    _count(stats, "seed_files")
    return seed


def _head(line: str, n_min: int, n_max: int, what: str) -> tuple[list[str], datetime]:
    """Split a sample line; check the field count and parse the UTC time (2nd field)."""
    parts = line.split()
    if not n_min <= len(parts) <= n_max:
        want = n_min if n_min == n_max else f"{n_min}-{n_max}"
        raise ValueError(f"{len(parts)} fields, expected {want} ({what})")
    ts = parse_utc(parts[1])
    if ts is None:
        raise ValueError(f"bad UTC time {parts[1]!r} (expected YYYY-MM-DDTHH:MM:SS.fffZ)")
    return parts, ts


def _ost_name(text: str) -> str:
    if not _OST_RE.fullmatch(text):
        raise ValueError(f"bad OST name {text!r} (expected <fs>-OST<hex>)")
    return text


# --------------------------------------------------------------------------- lustre-client


def lustre_client_line(names: dict[str, str]) -> LineParser:
    """Parser of one lustre-client line (names: IP -> forwarding node name)."""
    what = "<fwd-ip> <UTC> <ost> <read_rpcs> <write_rpcs> <pages_per_rpc> [<rpc_wait_us>]"

    def parse(line: str) -> Sample:
        parts, ts = _head(line, 6, 7, what)
        ip, ost = parts[0], _ost_name(parts[2])
        rr, wr, ppr = counters(parts[3:6], "rpc counts/pages per rpc")
        wait = counters(parts[6:], "rpc wait microseconds")
        row = {"fwd": names.get(ip), "ip": ip, "ts": ts, "ost": ost, "read_rpc": rr,
               "write_rpc": wr, "pages_per_rpc": ppr, "rpc_wait_us": wait[0] if wait else None}
        return Sample((ip, ost), ts, (rr, wr), row, wait)

    return parse


def parse_lustre_client(path: str | Path, site: Site | None = None,
                        prev: str | Path | None = None, day: date | None = None
                        ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """One forwarding node's lustre-client file -> `raw_lustre_client` rows (no `date`).

    `prev`: the node's previous-day file (delta seed); `day`: the UTC day the file holds.
    """
    parse = lustre_client_line(site_names(site))
    samples, q, stats = parse_samples(path, "lustre-client", parse, day)
    deltas = apply_deltas(samples, read_seed(prev, "lustre-client", parse, stats), stats)
    for s, d in zip(samples, deltas, strict=True):
        dv = d.delta or (None, None)
        s.row.update(read_rpc_delta=dv[0], write_rpc_delta=dv[1], interval_s=d.interval_s,
                     rpc_wait_us_delta=d.aux[0] if d.aux and dv[0] is not None else None,
                     reset=d.reset, file=str(path))
    return _finish(samples, q, stats)


# --------------------------------------------------------------------------- ost


def ost_line() -> LineParser:
    """Parser of one ost line."""
    what = ("<oss> <UTC> <ost> <read_rpcs> <write_rpcs> <pages_per_rpc> <read_bytes> "
            "<write_bytes>")

    def parse(line: str) -> Sample:
        parts, ts = _head(line, 8, 8, what)
        oss, ost = parts[0], _ost_name(parts[2])
        rr, wr, ppr, rb, wb = counters(parts[3:8], "rpc/byte counts")
        row = {"ost": ost, "oss": oss, "ts": ts, "read_rpc": rr, "write_rpc": wr,
               "pages_per_rpc": ppr, "read_bytes": rb, "write_bytes": wb}
        return Sample((oss, ost), ts, (rr, wr, rb, wb), row)

    return parse


def parse_ost(path: str | Path, site: Site | None = None, prev: str | Path | None = None,
              day: date | None = None) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """One OSS's ost file -> `raw_ost` rows (prev, day: as parse_lustre_client)."""
    parse = ost_line()
    samples, q, stats = parse_samples(path, "ost", parse, day)
    deltas = apply_deltas(samples, read_seed(prev, "ost", parse, stats), stats)
    keys = ("read_rpc_delta", "write_rpc_delta", "read_bytes_delta", "write_bytes_delta")
    for s, d in zip(samples, deltas, strict=True):
        s.row.update(zip(keys, d.delta or (None,) * 4, strict=True))
        s.row.update(interval_s=d.interval_s, reset=d.reset, file=str(path))
    return _finish(samples, q, stats)


# --------------------------------------------------------------------------- mds


def source_kind(source: str, fwds: frozenset[str]) -> str:
    """forwarding | login | cluster | other, from the source's name or IP."""
    if source in fwds:
        return "forwarding"
    low = source.lower()
    if low.startswith("login"):
        return "login"
    if low.endswith("-gw") or "cluster" in low:
        return "cluster"
    return "other"


def mds_line(mds: str, names: dict[str, str], fwds: frozenset[str]) -> LineParser:
    """Parser of one mds line of MDS host `mds`."""

    def parse(line: str) -> Sample:
        parts = line.split()
        if len(parts) < 2:
            raise ValueError(f"{len(parts)} fields, expected <source> <UTC> op=count ...")
        ts = parse_utc(parts[1])
        if ts is None:
            raise ValueError(f"bad UTC time {parts[1]!r} (expected YYYY-MM-DDTHH:MM:SS.fffZ)")
        vals = [0] * len(BEACON_MDS_OPS)
        seen: set[str] = set()
        for tok in parts[2:]:
            op, sep, n = tok.partition("=")
            if not sep:
                raise ValueError(f"{tok!r} is not op=count")
            i = _MDS_INDEX.get(op)
            if i is None:
                raise ValueError(f"unknown MDS op {op!r}")
            if op in seen:
                raise ValueError(f"op {op!r} twice")
            vals[i] = counter(n, op)
            seen.add(op)
        src = parts[0]
        node = names.get(src) or (src if src in fwds else None)
        row = {"mds": mds, "source": src, "source_node": node,
               "source_kind": source_kind(src, fwds), "ts": ts, "cumulative": vals}
        return Sample((mds, src), ts, tuple(vals), row)

    return parse


def parse_mds(path: str | Path, site: Site | None = None, prev: str | Path | None = None,
              day: date | None = None, mds: str | None = None
              ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """One MDS's file -> `raw_mds` rows; mds defaults to the host folder name (prev, day:
    as parse_lustre_client)."""
    parse = mds_line(mds or Path(path).parent.name, site_names(site), fwd_identities(site))
    samples, q, stats = parse_samples(path, "mds", parse, day)
    deltas = apply_deltas(samples, read_seed(prev, "mds", parse, stats), stats)
    for s, d in zip(samples, deltas, strict=True):
        dv = d.delta
        s.row.update(zip(BEACON_MDS_OPS, dv or (None,) * len(BEACON_MDS_OPS), strict=True))
        s.row.update(ops=sum(dv) if dv is not None else None, interval_s=d.interval_s,
                     reset=d.reset, file=str(path))
    return _finish(samples, q, stats)


# --------------------------------------------------------------------------- common end


def _finish(samples: list[Sample], q: list[Quarantined], stats: ParseStats
            ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    rows = [s.row for s in samples]
    stats.rows = len(rows)
    return rows, q, stats


PARSERS = {"lustre-client": parse_lustre_client, "ost": parse_ost, "mds": parse_mds}


def parse_file(path: str | Path, site: Site | None, layer: str,
               prev: str | Path | None = None, day: date | None = None
               ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one file of `layer` (lustre-client | ost | mds), with the D−1 file as seed."""
    if layer not in PARSERS:
        raise ValueError(f"unknown Beacon layer {layer!r}; known: {', '.join(LAYERS)}")
    return PARSERS[layer](path, site, prev, day)
