"""Beacon's first-pass trace compression: what each compute node runs on its LWFS trace.

Input and output are lines of the LWFS client trace (FORMATS.md §4):

    <ip> <UTC ts> READ|WRITE <fd> <offset> <size> [<count>]      data entry
    <ip> <UTC ts> <OP> <fd> [path=<p>] [count=<n>]               anything else (OPEN, CLOSE ...)

`compress_lines` merges adjacent READ/WRITE entries of one node (ip) and fd that have the
same op and size, lie in the same second and continue each other's offsets (next offset =
offset + count x size) into one line `<ip> <ts of the first> <OP> <fd> <offset> <size>
<count>`. A line that already carries a count is a valid input, and compressing twice
equals compressing once: the same entries, in the same order per (ip, fd) (unless the
`max_pending` cap below forced entries out early). Merging is lossless at second
granularity: `expand_lines` turns every entry back into its `count` requests (count 1,
offsets offset + i x size, the entry's timestamp), and multiset(expand(compress(x))) ==
multiset(expand(x)) once every timestamp is truncated to its second (`request_multiset`);
a merged entry keeps its first request's millisecond timestamp, the others' milliseconds
are not kept (the trace's granularity is the second, so per-second bandwidth stays exact).

Memory is bounded: the only state is one pending entry per (ip, fd) for that ip's current
second, plus the current second of each ip. A node's pending entries are written when its
second changes; one (ip, fd)'s entry when a line of the same (ip, fd) cannot extend it or
is a metadata line; everything at the end. If more than `max_pending` entries or ips are
held (never in a real trace), everything is written first, which only costs compression.

Output order keeps, per (ip, fd), the input order; entries of different fds or ips may
come out in another relative order than their lines went in (a pending entry is written
when it is complete). Metadata lines are written unchanged (their own `count=` included).
Lines that are not trace lines (blank, garbage, a READ without numbers, a bad timestamp)
are passed through unchanged, at once: the ingest quarantines them later.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

DATA_OPS = frozenset({"READ", "WRITE"})
DEFAULT_MAX_PENDING = 65536
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z?\Z")
_OP = re.compile(r"[A-Z][A-Z0-9_]*\Z")

# A pending entry is a list [ts, op, fd, offset, size, count] (mutable: count grows).


@dataclass
class CompressStats:
    """Counters of one `compress_lines` run; `max_pending`/`max_ips` show its state size."""

    lines_in: int = 0
    lines_out: int = 0
    data_in: int = 0          # READ/WRITE lines read
    data_out: int = 0         # READ/WRITE lines written
    requests: int = 0         # sum of the counts read (= of the counts written)
    passed: int = 0           # lines that are not trace lines, passed through
    max_pending: int = 0      # most pending entries held at once
    max_ips: int = 0          # most ips with state at once
    evictions: int = 0        # times the caps forced everything out

    @property
    def ratio(self) -> float:
        """Lines in per line out (1.0 for empty input)."""
        return self.lines_in / self.lines_out if self.lines_out else 1.0


def _second(ts: str) -> str | None:
    """The timestamp's second (`YYYY-MM-DDTHH:MM:SS`), None when it is not a trace time."""
    return ts[:19] if _TS.match(ts) else None


def parse_data(fields: list[str]) -> tuple[int, int, int] | None:
    """(offset, size, count) of a READ/WRITE line's fields, None when they are not valid."""
    n = len(fields)
    if n not in (6, 7):
        return None
    off, size, cnt = fields[4], fields[5], fields[6] if n == 7 else "1"
    if not (off.isdigit() and size.isdigit() and cnt.isdigit()):
        return None
    try:
        o, s, c = int(off), int(size), int(cnt)
    except ValueError:      # non-ASCII digits
        return None
    return (o, s, c) if c >= 1 else None


def format_entry(ip: str, ts: str, op: str, fd: str, offset: int, size: int,
                 count: int) -> str:
    """The canonical data line."""
    return f"{ip} {ts} {op} {fd} {offset} {size} {count}"


def _fmt(ip: str, fd: str, e: list) -> str:
    return format_entry(ip, e[0], e[1], fd, e[3], e[4], e[5])


def _is_meta(fields: list[str]) -> bool:
    return len(fields) >= 4 and _OP.match(fields[2]) is not None


class _State:
    """Pending entries per ip (insertion-ordered fd -> entry) and each ip's second."""

    def __init__(self, max_pending: int, stats: CompressStats) -> None:
        self.pending: dict[str, dict[str, list]] = {}
        self.second: dict[str, str] = {}
        self.n = 0
        self.max_pending = max_pending
        self.stats = stats

    def flush_ip(self, ip: str) -> Iterator[str]:
        """Write the ip's pending entries (in the order they were started)."""
        entries = self.pending.pop(ip, None)
        if entries:
            self.n -= len(entries)
            for fd, e in entries.items():
                yield _fmt(ip, fd, e)

    def flush_all(self) -> Iterator[str]:
        """Write every pending entry and forget every ip's second."""
        for ip in list(self.pending):
            yield from self.flush_ip(ip)
        self.second.clear()

    def pop(self, ip: str, fd: str) -> list | None:
        """Remove and return the (ip, fd) pending entry, if any."""
        entries = self.pending.get(ip)
        e = entries.pop(fd, None) if entries else None
        if e is not None:
            self.n -= 1
        return e

    def enter(self, ip: str, second: str) -> Iterator[str]:
        """Make `second` the ip's current one, writing the ip's entries of another second."""
        cur = self.second.get(ip)
        if cur == second:
            return
        if cur is not None:
            yield from self.flush_ip(ip)
        elif len(self.second) >= self.max_pending:
            self.stats.evictions += 1
            yield from self.flush_all()
        self.second[ip] = second
        self.stats.max_ips = max(self.stats.max_ips, len(self.second))

    def add(self, ip: str, fd: str, entry: list) -> Iterator[str]:
        """Hold `entry` as the (ip, fd) pending one (writing everything first at the cap)."""
        if self.n >= self.max_pending:
            self.stats.evictions += 1
            sec = self.second.get(ip)
            yield from self.flush_all()
            self.second[ip] = sec
        self.pending.setdefault(ip, {})[fd] = entry
        self.n += 1
        self.stats.max_pending = max(self.stats.max_pending, self.n)


def compress_lines(lines: Iterable[str], *, max_pending: int = DEFAULT_MAX_PENDING,
                   stats: CompressStats | None = None) -> Iterator[str]:
    """First-pass compress trace lines (streaming; see the module docstring).

    Lines may end in a newline (it is dropped); output lines have none. `stats`, when
    given, is filled in when the generator ends or is closed; its `max_pending` and
    `max_ips` (kept up to date as it runs) are the state-size hook.
    """
    st = stats if stats is not None else CompressStats()
    state = _State(max(1, max_pending), st)
    pending, seconds, ts_match = state.pending, state.second, _TS.match
    n_in = n_out = n_data = n_passed = requests = 0
    try:
        for raw in lines:
            n_in += 1
            line = raw[:-1] if raw[-1:] == "\n" else raw
            f = line.split()
            nf = len(f)
            if nf < 4 or ts_match(f[1]) is None:
                n_passed += 1
                n_out += 1
                yield line
                continue
            ip, op, fd, second = f[0], f[2], f[3], f[1][:19]
            if op in DATA_OPS:
                if nf == 7:
                    so, ss, sc = f[4], f[5], f[6]
                elif nf == 6:
                    so, ss, sc = f[4], f[5], "1"
                else:
                    so = ss = sc = ""
                try:
                    if not (so.isdigit() and ss.isdigit() and sc.isdigit()):
                        raise ValueError(so)
                    offset, size, count = int(so), int(ss), int(sc)
                    if count < 1:
                        raise ValueError(sc)
                except ValueError:
                    n_passed += 1
                    n_out += 1
                    yield line
                    continue
                n_data += 1
                requests += count
                if seconds.get(ip) != second:
                    for o in state.enter(ip, second):
                        n_out += 1
                        yield o
                entries = pending.get(ip)
                e = entries.get(fd) if entries else None
                if e is not None:
                    if e[1] == op and e[4] == size and e[3] + e[5] * size == offset:
                        e[5] += count       # [ts, op, fd, offset, size, count]
                        continue
                    state.pop(ip, fd)
                    n_out += 1
                    yield _fmt(ip, fd, e)
                for o in state.add(ip, fd, [f[1], op, fd, offset, size, count]):
                    n_out += 1
                    yield o
            elif _OP.match(op) is not None:
                fd = fd if "=" not in fd else ""
                if seconds.get(ip) != second:
                    for o in state.enter(ip, second):
                        n_out += 1
                        yield o
                e = state.pop(ip, fd)
                if e is not None:
                    n_out += 1
                    yield _fmt(ip, fd, e)
                n_out += 1
                yield line
            else:
                n_passed += 1
                n_out += 1
                yield line
        for o in state.flush_all():
            n_out += 1
            yield o
    finally:
        st.lines_in, st.lines_out, st.passed = n_in, n_out, n_passed
        st.data_in, st.requests = n_data, requests
        st.data_out = n_out - (n_in - n_data)


def compress_stream(inp: BinaryIO, out: BinaryIO, stats: CompressStats | None = None, *,
                    max_pending: int = DEFAULT_MAX_PENDING, batch: int = 8192) -> CompressStats:
    """Compress the trace lines of a byte stream into another (what `lassi compress-trace`
    runs). Bytes that are not UTF-8 pass through unchanged; every output line ends in a
    newline. Memory: the compressor's state plus `batch` output lines."""
    st = stats if stats is not None else CompressStats()
    # newline="": lines are split at \n only and keep a \r, so they pass through byte-exact
    text = io.TextIOWrapper(inp, encoding="utf-8", errors="surrogateescape", newline="")
    gen = compress_lines(text, max_pending=max_pending, stats=st)
    buf: list[str] = []
    try:
        for line in gen:
            buf.append(line)
            if len(buf) >= batch:
                out.write(("\n".join(buf) + "\n").encode("utf-8", "surrogateescape"))
                buf.clear()
        if buf:
            out.write(("\n".join(buf) + "\n").encode("utf-8", "surrogateescape"))
        out.flush()
    finally:
        gen.close()
        text.detach()          # leave the caller's stream open
    return st


def expand_lines(lines: Iterable[str]) -> Iterator[str]:
    """The inverse of the first pass: every data entry as `count` lines of count 1.

    Offsets are offset + i x size and every line keeps the entry's timestamp. Metadata
    lines and lines that are not trace lines are written unchanged (newline dropped).
    """
    for raw in lines:
        line = raw[:-1] if raw.endswith("\n") else raw
        fields = line.split()
        vals = None
        if len(fields) >= 4 and fields[2] in DATA_OPS and _second(fields[1]) is not None:
            vals = parse_data(fields)
        if vals is None:
            yield line
            continue
        ip, ts, op, fd = fields[:4]
        offset, size, count = vals
        for i in range(count):
            yield format_entry(ip, ts, op, fd, offset + i * size, size, 1)


def line_key(line: str) -> tuple[str, str] | None:
    """(ip, fd) of a trace line, fd '' for a metadata line without one; None for a line that
    is not a trace line (what `compress_lines` passes through at once)."""
    fields = line.split()
    if len(fields) < 4 or _second(fields[1]) is None:
        return None
    if fields[2] in DATA_OPS:
        return (fields[0], fields[3]) if parse_data(fields) is not None else None
    if _is_meta(fields):
        return fields[0], fields[3] if "=" not in fields[3] else ""
    return None


def at_second(line: str) -> str:
    """A line with its timestamp truncated to the second (data lines also canonical)."""
    fields = line.split()
    if len(fields) < 4 or _second(fields[1]) is None:
        return line
    sec = fields[1][:19]
    if fields[2] in DATA_OPS:
        vals = parse_data(fields)
        if vals is not None:
            return format_entry(fields[0], sec, fields[2], fields[3], *vals)
        return line
    if _is_meta(fields):
        return " ".join([fields[0], sec, *fields[2:]])
    return line


def request_multiset(lines: Iterable[str]) -> Counter:
    """The multiset of a trace's requests at second granularity (for losslessness checks;
    holds the whole expanded trace, so meant for tests and samples)."""
    return Counter(at_second(x) for x in expand_lines(lines))
