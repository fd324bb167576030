"""Lustre server statistics -> rows of `raw_lustre_stats` (pure Python, no Spark).

Reads `lctl get_param` captures (many `<param.path>=` blocks), single `stats` /
`md_stats` / `exports/<nid>/stats` / `job_stats` files, and whole `/proc/fs/lustre` or
`/sys/kernel/debug/lustre` trees, of every Lustre version from 1.8 to 2.15:

* stats blocks: `snapshot_time <secs.usecs|secs.nsecs> ...`, optional `start_time` and
  `elapsed_time`, then `<name> <samples> samples [<unit>] [min max sum [sumsq]]`;
* job_stats YAML, old (`{ samples: N, unit: u, min: .. }`) and new (quoted job_id,
  start_time, elapsed_time, sumsq, hist) forms.

Kinds: `export` (per client NID), `target` (whole-target stats/md_stats), `job`.
Blocks of other parameters (brw_stats, uuid, quota, ldlm, service and client stats, ...)
are recognised and skipped: their lines count as used. Only malformed lines of a stats or
job_stats block are quarantined. A counter repeated within one snapshot keeps its FIRST
value (Lustre 2.10 prints `statfs` twice). Old Lustre printed `secs.usecs` snapshot times
with `%lu.%lu`, so a fraction shorter than 6 digits there is a count of microseconds.

Lustre prints no zero counters, so a client that has just (re)connected has an export block
holding only `snapshot_time` (and `start_time`): every counter is zero at that capture. Such
a block gives one marker row, counter `snapshot_time` with 0 samples, which the deltas
read as zeros (`sql/risk/node_window.sql`) and not as a missing capture. A capture's last
block is trusted only when a line follows it (a collector that died mid-capture leaves
exactly such a block); a bare stats file is its own whole block.
"""

from __future__ import annotations

import itertools
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path, PurePath

from lassi.ingest.nid import nid_to_node

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.textio import open_text

SOURCE = "lustre"
UNKNOWN = "unknown"
ZERO_MARKER = "snapshot_time"    # the counter of a snapshot without counters (all zero)
CHUNK_ROWS = 200_000             # rows handed on at a time by the streaming parsers

_EPOCH = datetime(1970, 1, 1)
_I64 = 2**63 - 1
_SERVER_FAMILIES = frozenset({"obdfilter", "mdt", "mds"})
_TIME_FIELDS = frozenset({"snapshot_time", "start_time", "elapsed_time"})
# Parameters printed by `lctl get_param` without a dot in their name.
_TOP_PARAMS = frozenset({
    "memused", "memused_max", "lnet_memused", "health_check", "version", "pinger",
    "catastrophe", "timeout", "jobid_var", "jobid_name", "jobid_this_session", "debug",
    "subsystem_debug", "debug_mb", "debug_path", "panic_on_lbug", "printk", "console_ratelimit",
    "at_min", "at_max", "at_extra", "at_early_margin", "at_history", "ldlm_timeout",
    "max_dirty_mb", "fail_loc", "fail_val", "dump_on_timeout", "dump_on_eviction", "nis",
    "peers", "routes", "stats", "enable_ping", "obd_timeout",
})
# Files under a Lustre tree (or loose files) that are histograms or tables, not counters.
_NON_COUNTER_FILES = (
    "brw_stats", "rpc_stats", "osc_stats", "extents_stats", "offset_stats",
    "read_ahead_stats", "statahead_stats", "unstable_stats", "hash_stats", "rename_stats",
    "site_stats", "io_latency_stats", "ldlm_stats", "nodemap", "uuid",
)
# A file under one of these (not matched as server stats) is another Lustre parameter.
_TREE_ROOTS = (
    "proc/fs/lustre/", "sys/fs/lustre/", "debug/lustre/", "proc/sys/lnet/", "debug/lnet/",
)
_TARGET_RE = re.compile(r"(?:([A-Za-z0-9_]+)-)?((?:OST|MDT)[0-9a-fA-F]{4})")
_UNITS = {"regs": "reqs"}  # the 2.10 llite `[regs]` typo

_FIELDS = (
    "server", "target", "fs", "kind", "nid", "node", "job_id", "snapshot_time", "counter",
    "samples", "unit", "min", "max", "sum", "sumsq", "start_time", "file",
)

Spec = tuple[str, str, str | None]  # (mode: stats|job|skip, kind, nid)


# --------------------------------------------------------------------------- helpers


def fs_of(target: str) -> str:
    """The filesystem of a target name: `fs2-OST0003` -> `fs2`; no prefix -> `unknown`."""
    prefix, sep, _ = target.rpartition("-")
    return prefix if sep and prefix else UNKNOWN


def epoch_to_datetime(text: str, unit: str | None = None) -> datetime | None:
    """Naive UTC datetime of `secs[.frac]`, microsecond precision (truncated); None if bad.

    With unit `secs.usecs` a fraction of fewer than 6 digits is a microsecond count (old
    Lustre printed `%lu.%lu`); otherwise the fraction is decimal (nsecs are zero-padded).
    """
    secs, _, frac = text.partition(".")
    if not secs.isdigit() or (frac and not frac.isdigit()):
        return None
    if not frac:
        usec = 0
    elif unit == "secs.usecs" and len(frac) < 6:
        usec = int(frac)
    else:
        usec = int((frac + "00000")[:6])
    try:
        return _EPOCH + timedelta(seconds=int(secs), microseconds=usec)
    except OverflowError:
        return None


def _classify(family: str, target: str, rest: list[str]) -> Spec | None:
    """(mode, kind, nid) of a server parameter `<family>.<target>.<rest>`; None if not one."""
    if family not in _SERVER_FAMILIES or not target:
        return None
    if family == "mds" and target.upper() == "MDS":
        return ("skip", "", None)  # mds.MDS.<service>.stats: service, not target stats
    if len(rest) == 1:
        leaf = rest[0]
        if leaf == "job_stats":
            return ("job", "job", None)
        if leaf in ("stats", "md_stats"):
            return ("stats", "target", None)
    elif len(rest) == 3 and rest[0] == "exports" and rest[2] == "stats":
        return ("stats", "export", rest[1])
    return ("skip", "", None)


def _classify_param(key: str) -> tuple[Spec, str]:
    """(spec, target) of an lctl parameter path, e.g. `obdfilter.<target>.exports.<nid>.stats`."""
    parts = key.split(".")
    if len(parts) < 3:
        return ("skip", "", None), ""
    rest = parts[2:]
    if rest[0] == "exports" and len(parts) >= 5:
        rest = ["exports", ".".join(parts[3:-1]), parts[-1]]
    spec = _classify(parts[0], parts[1], rest)
    return (spec or ("skip", "", None)), parts[1]


def _classify_path(path: str) -> tuple[Spec, str]:
    """(spec, target) of a file from its path (a /proc or /sys tree, or a loose file)."""
    parts = list(PurePath(path).parts)
    if not parts:
        return ("stats", "target", None), UNKNOWN
    if parts[-1].endswith(".gz"):
        parts[-1] = parts[-1][:-3]
    for i in range(len(parts) - 2, -1, -1):
        spec = _classify(parts[i], parts[i + 1], parts[i + 2:]) if i + 2 < len(parts) else None
        if spec is not None:
            return spec, parts[i + 1]
    base = parts[-1]
    joined = "/".join(parts) + "/"
    in_tree = any(t in joined for t in _TREE_ROOTS)
    if in_tree or any(s in base for s in _NON_COUNTER_FILES):
        return ("skip", "", None), ""
    m = _TARGET_RE.search(base)
    target = (f"{m.group(1)}-{m.group(2)}" if m.group(1) else m.group(2)) if m else UNKNOWN
    if "job_stats" in base:
        return ("job", "job", None), target
    return ("stats", "target", None), target


def _header(line: str, in_data_block: bool) -> tuple[str, str] | None:
    """(key, rest) when the line is an `lctl get_param` `<param.path>=` header, else None."""
    eq = line.find("=")
    if eq <= 0:
        return None
    key = line[:eq]
    if " " in key or "\t" in key or key[0] in "-{#":
        return None
    if "." not in key and in_data_block and key not in _TOP_PARAMS:
        return None  # e.g. a broken `read_bytes=5` inside a stats block: quarantine it
    return key, line[eq + 1:]


def is_header(line: str) -> bool:
    """Whether the line opens a block whatever block it is in (the parser's state resets
    there): a `<param.path>=` header, or one of the top-level parameters."""
    return _header(line, True) is not None


def _unquote(text: str) -> str:
    """A YAML scalar without its surrounding quotes."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _int64(text: str) -> int:
    """An int that fits a LongType, else ValueError."""
    v = int(text)
    if v > _I64 or v < -_I64 - 1:
        raise ValueError(text)
    return v


# --------------------------------------------------------------------------- the parser


class _Parser:
    """State of one file: the current block and, within it, the current snapshot/job."""

    def __init__(self, file: str, server: str | None, nid_map: Mapping[str, str] | None):
        self.file = file
        self.server = server
        self.nid_map = nid_map
        self.rows: list[dict] = []
        self.extra: dict[str, int] = {}
        self.mode = "skip"
        self.base: dict | None = None  # row template of the current snapshot (or job)
        self.seen: set[str] = set()
        self.target = UNKNOWN
        self.kind = ""
        self.nid: str | None = None
        self.node: str | None = None
        self.job_id: str | None = None
        self.in_job = False
        self.empty = False             # a stats snapshot without counters so far

    def _count(self, key: str) -> None:
        self.extra[key] = self.extra.get(key, 0) + 1

    def close_snapshot(self) -> None:
        """End the current stats snapshot: one marker row when it held no counter."""
        if self.mode == "stats" and self.empty and self.base is not None:
            self.rows.append({**self.base, "counter": ZERO_MARKER, "samples": 0})
        self.empty = False

    def open_block(self, spec: Spec, target: str) -> None:
        """Start a new block (a parameter of a capture, or the whole of a bare file)."""
        self.close_snapshot()
        mode, kind, nid = spec
        self.mode, self.kind, self.nid = mode, kind, nid
        self.base, self.job_id, self.in_job = None, None, False
        self.seen = set()
        if mode == "skip":
            self._count("blocks_skipped")
            return
        self.target = target if target and target != "*" else UNKNOWN
        self.node = nid_to_node(nid, self.nid_map) if nid else None

    def _new_base(self, snapshot: datetime) -> dict:
        row = dict.fromkeys(_FIELDS)
        row.update(
            server=self.server, target=self.target, fs=fs_of(self.target), kind=self.kind,
            nid=self.nid, node=self.node, job_id=self.job_id, snapshot_time=snapshot,
            file=self.file,
        )
        return row

    def line(self, line: str) -> str | None:
        """Consume one line of the current block; a quarantine reason, or None if used."""
        if self.mode == "stats":
            return self.stats_line(line)
        if self.mode == "job":
            return self.job_line(line)
        return None

    # ---- stats blocks

    def stats_line(self, line: str) -> str | None:
        """A `stats`/`md_stats` line: snapshot_time, start_time or a counter."""
        parts = line.split()
        n = len(parts)
        if n >= 3 and parts[2] == "samples":
            return self._counter(parts, n)
        if not n:
            return None
        head = parts[0].rstrip(":")
        if head in _TIME_FIELDS:
            return self._time_field(head, parts)
        return "counter line: expected '<name> <samples> samples [<unit>] [min max sum [sumsq]]'"

    def _time_field(self, head: str, parts: list[str]) -> str | None:
        if head == "elapsed_time":
            return None
        unit = parts[2] if len(parts) > 2 else None
        ts = epoch_to_datetime(parts[1], unit) if len(parts) > 1 else None
        if head == "snapshot_time":
            self.close_snapshot()
            self.seen = set()
            self.base = None if ts is None else self._new_base(ts)
            self.empty = ts is not None
            return None if ts is not None else "snapshot_time: not <secs>.<usecs|nsecs>"
        if ts is None:
            return "start_time: not <secs>.<usecs|nsecs>"
        if self.base is None:
            return "start_time before snapshot_time"
        self.base["start_time"] = ts
        return None

    def _counter(self, parts: list[str], n: int) -> str | None:
        base = self.base
        if base is None:
            return "no snapshot_time before counters"
        try:
            samples = int(parts[1])
        except ValueError:
            return "counter line: samples is not an integer"
        unit = None
        i = 3
        if n > 3 and parts[3][0] == "[":
            u = parts[3]
            if u[-1] != "]":
                return "counter line: unit is not in [brackets]"
            unit = u[1:-1]
            unit = _UNITS.get(unit, unit)
            i = 4
        k = n - i
        mn = mx = sm = sq = None
        if k:
            if k not in (3, 4):
                return "counter line: expected min max sum [sumsq] after the unit"
            try:
                mn, mx, sm = _int64(parts[i]), _int64(parts[i + 1]), _int64(parts[i + 2])
            except ValueError:
                return "counter line: min/max/sum is not a 64-bit integer"
            if k == 4:
                try:
                    sq = float(parts[i + 3])
                except ValueError:
                    return "counter line: sumsq is not a number"
        name = parts[0]
        self.empty = False
        if name in self.seen:
            self._count("duplicate_counters")
            return None
        self.seen.add(name)
        self.rows.append({**base, "counter": name, "samples": samples, "unit": unit,
                          "min": mn, "max": mx, "sum": sm, "sumsq": sq})
        return None

    # ---- job_stats blocks

    def job_line(self, line: str) -> str | None:
        """A job_stats YAML line: `- job_id:`, snapshot/start/elapsed time or an op."""
        s = line.strip()
        if not s or s == "job_stats:":
            return None
        if s[0] == "-":
            if not s.startswith("- job_id:"):
                return "job_stats: expected '- job_id: <id>'"
            self.job_id = _unquote(s[9:].strip())
            self.in_job, self.base, self.seen = True, None, set()
            return None
        name, sep, val = s.partition(":")
        if not sep:
            return "job_stats: expected '<name>: <value>'"
        name, val = name.strip(), val.strip()
        if name in _TIME_FIELDS:
            return self._job_time(name, val)
        if not val.startswith("{"):
            return None  # an informational scalar (e.g. job_name): understood, not a counter
        return self._job_counter(name, val)

    def _job_time(self, name: str, val: str) -> str | None:
        if name == "elapsed_time":
            return None
        if not self.in_job:
            return f"job_stats: {name} before job_id"
        words = val.split()
        ts = epoch_to_datetime(words[0], words[1] if len(words) > 1 else None) if words else None
        if ts is None:
            return f"job_stats: {name} is not <secs>[.<frac>]"
        if name == "snapshot_time":
            self.base = self._new_base(ts)
        elif self.base is None:
            return "start_time before snapshot_time"
        else:
            self.base["start_time"] = ts
        return None

    def _job_counter(self, name: str, val: str) -> str | None:
        if not self.in_job:
            return "job_stats: counter before job_id"
        base = self.base
        if base is None:
            return "no snapshot_time before counters"
        if not val.endswith("}"):
            return "job_stats counter: unterminated { ... }"
        h = val.find("hist:")
        body = (val[1:h] if h >= 0 else val[1:-1]).strip().rstrip(",")
        fields: dict[str, str] = {}
        for item in body.split(","):
            k, sep, v = item.partition(":")
            if not sep:
                return "job_stats counter: item is not 'key: value'"
            fields[k.strip()] = v.strip()
        try:
            samples = int(fields["samples"])
            mn, mx, sm = (_int64(fields[f]) if f in fields else None for f in ("min", "max", "sum"))
            sq = float(fields["sumsq"]) if "sumsq" in fields else None
        except KeyError:
            return "job_stats counter: no samples"
        except ValueError:
            return "job_stats counter: a value is not a number"
        if name in self.seen:
            self._count("duplicate_counters")
            return None
        self.seen.add(name)
        unit = fields.get("unit")
        self.rows.append({**base, "counter": name, "samples": samples,
                          "unit": _UNITS.get(unit, unit) if unit else None,
                          "min": mn, "max": mx, "sum": sm, "sumsq": sq})
        return None


# --------------------------------------------------------------------------- public API


def parse_lines(
    lines: Iterable[str],
    file: str,
    *,
    server: str | None = None,
    nid_map: Mapping[str, str] | None = None,
    path_hint: str | None = None,
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one capture or stats file given as lines.

    Lines before the first `<param>=` header (all of a bare stats file) belong to a block
    described by `path_hint` (default `file`): a /proc path gives target, kind and NID.
    """
    return collect(stream_lines(lines, file, server=server, nid_map=nid_map,
                                path_hint=path_hint))


def collect(stream: Iterable[tuple[list[dict], tuple | None]]
            ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """A parser stream's rows, quarantine and stats at once."""
    rows: list[dict] = []
    end = None
    for chunk, last in stream:
        rows += chunk
        end = last or end
    quarantined, stats = end
    return rows, quarantined, stats


def stream_lines(
    lines: Iterable[str],
    file: str,
    *,
    server: str | None = None,
    nid_map: Mapping[str, str] | None = None,
    path_hint: str | None = None,
    chunk_rows: int | None = None,
    first_line_no: int = 1,
    opened: bool = True,
    closed: bool = False,
) -> Iterator[tuple[list[dict], tuple[list[Quarantined], ParseStats] | None]]:
    """`parse_lines` as a stream, so that memory does not grow with the file (a day of
    job_stats at 20,000 ids per OSS is gigabytes): (rows, None) every `chunk_rows` rows,
    then (the last rows, (quarantined lines, stats)). `first_line_no`: the file's line
    number of the first line (the rest of a file whose start was parsed elsewhere).
    A part of a file that starts at a header (`is_header`; the parser's state resets
    there): without `opened`, the file's own block (lines before any header) is not
    opened again; with `closed`, a header follows the part (its last snapshot ends)."""
    chunk_rows = chunk_rows or CHUNK_ROWS
    p = _Parser(file, server, nid_map)
    if opened:
        spec, target = _classify_path(path_hint if path_hint is not None else file)
        p.open_block(spec, target)
    quarantined: list[Quarantined] = []
    read = used = headers = rows = 0
    for line_no, line in enumerate(lines, first_line_no):
        read += 1
        if "=" in line:
            hdr = _header(line, p.mode != "skip")
            if hdr is not None:
                headers += 1
                spec, target = _classify_param(hdr[0])
                p.open_block(spec, target)
                line = hdr[1]
        reason = p.line(line)
        if reason is None:
            used += 1
        else:
            quarantined.append(
                Quarantined(SOURCE, file, line_no, line.rstrip("\r\n"), reason)
            )
        if len(p.rows) >= chunk_rows:
            rows += len(p.rows)
            yield p.rows, None
            p.rows = []
    if not headers or closed:   # a bare stats file's end closes its only block; a part
        p.close_snapshot()      # that a header follows ends as that header would end it
    stats = ParseStats(
        source=SOURCE, files=1, lines_read=read, lines_used=used,
        lines_quarantined=len(quarantined), rows=rows + len(p.rows), extra=p.extra,
    )
    yield p.rows, (quarantined, stats)


def _guarded(lines: Iterable[str], errors: list[BaseException]) -> Iterator[str]:
    """Yield lines until the reader fails (truncated gzip, I/O error); keep the error."""
    it = iter(lines)
    while True:
        try:
            line = next(it)
        except StopIteration:
            return
        except (OSError, EOFError, zlib.error) as exc:
            errors.append(exc)
            return
        yield line


def _file_quarantine(
    stats: ParseStats, q: list[Quarantined], file: str, line_no: int, reason: str
) -> None:
    """Quarantine a whole file (or its unreadable rest) as one pseudo-line."""
    q.append(Quarantined(SOURCE, file, line_no, "", reason))
    stats.lines_read += 1
    stats.lines_quarantined += 1


def parse_file(
    path: str | Path,
    *,
    server: str | None = None,
    nid_map: Mapping[str, str] | None = None,
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one file (`.gz` read transparently); target/kind/NID of bare files from the path.

    A file that cannot be opened (dangling symlink, permissions) or that fails mid-read is
    quarantined as one pseudo-line (line_no 0, or the line after the last one read).
    """
    return collect(stream_file(path, server=server, nid_map=nid_map))


def stream_file(
    path: str | Path,
    *,
    server: str | None = None,
    nid_map: Mapping[str, str] | None = None,
    chunk_rows: int | None = None,
    skip_lines: int = 0,
) -> Iterator[tuple[list[dict], tuple[list[Quarantined], ParseStats] | None]]:
    """`parse_file` as a stream of row chunks (see `stream_lines`); `skip_lines`: parse
    only the lines after the first `skip_lines` (which must end at a header line: parser
    state resets there), counting lines from the file's start."""
    file = str(path)
    errors: list[BaseException] = []
    try:
        fh = open_text(path)
    except OSError as exc:
        stats = ParseStats(source=SOURCE, files=1)
        q: list[Quarantined] = []
        dangling = os.path.islink(file) and not os.path.exists(file)
        if dangling:
            stats.extra["dangling_links"] = 1
        reason = "dangling symlink" if dangling else f"cannot open: {exc.strerror or exc}"
        stats.extra["files_unreadable"] = 1
        _file_quarantine(stats, q, file, 0, reason)
        yield [], (q, stats)
        return
    with fh:
        lines = _guarded(fh, errors)
        for _ in itertools.islice(lines, skip_lines):
            pass
        for chunk, end in stream_lines(lines, file, server=server, nid_map=nid_map,
                                       path_hint=file, chunk_rows=chunk_rows,
                                       first_line_no=skip_lines + 1):
            if end is not None and errors:
                q, stats = end
                _file_quarantine(stats, q, file, skip_lines + stats.lines_read + 1,
                                 f"read error: {errors[0]}")
            yield chunk, end


def is_server_stats_path(path: str | Path) -> bool:
    """True for the files parse_tree reads: server stats, md_stats, exports stats, job_stats."""
    parts = list(PurePath(path).parts)
    if parts and parts[-1].endswith(".gz"):
        parts[-1] = parts[-1][:-3]
    for i in range(len(parts) - 3, -1, -1):
        spec = _classify(parts[i], parts[i + 1], parts[i + 2:])
        if spec is not None:
            return spec[0] != "skip"
    return False


def parse_tree(
    root: str | Path,
    *,
    server: str | None = None,
    nid_map: Mapping[str, str] | None = None,
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse every server stats file under a /proc/fs/lustre or /sys/kernel/debug tree.

    Other files are not read (counted in extra["files_skipped"]); symlinks are followed to
    real files only, each real file read once; dangling links are counted in
    extra["dangling_links"] and never fatal. A file given as root is parsed as parse_file.
    """
    if os.path.isfile(root):
        return parse_file(root, server=server, nid_map=nid_map)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such directory: {root}")
    total = ParseStats(source=SOURCE)
    rows: list[dict] = []
    quarantined: list[Quarantined] = []
    seen: set[str] = set()
    skipped = dangling = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path) and not os.path.exists(path):
                dangling += 1
                continue
            if not os.path.isfile(path) or not is_server_stats_path(path):
                skipped += 1
                continue
            real = os.path.realpath(path)
            if real in seen:
                skipped += 1
                continue
            seen.add(real)
            r, q, s = parse_file(path, server=server, nid_map=nid_map)
            rows.extend(r)
            quarantined.extend(q)
            total.add(s)
    total.extra["files_skipped"] = total.extra.get("files_skipped", 0) + skipped
    total.extra["dangling_links"] = total.extra.get("dangling_links", 0) + dangling
    return rows, quarantined, total
