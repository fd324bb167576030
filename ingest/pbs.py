"""PBS / Torque / PBS Pro accounting logs -> `app_run` rows (source `pbs`), one per job.

Record: `MM/DD/YYYY HH:MM:SS;<type>;<job id>;key=value key=value ...` (header time local
in `tz`). Rules:
- `E` records give complete rows; an `S` record is held until its job's `E` arrives (in
  these lines, or across files with `parse_files`); an `S` never ended gives a row with
  end None (stats.extra["unfinished"]). Every `E` gives a row (Torque may write two for
  a rerun job); an `E` lacking a field (e.g. `start=`) takes it from its job's `S`.
  Other record types (Q, D, A, R, L, ...) are used and ignored
  (extra["other_records"]).
- app_id = job_id = the job id exactly as written (`6.edge.ccr.buffalo.edu`, `2994.pbs`).
- start/end: the epoch `start=`/`end=` when present and non-zero, else the record's header
  time (S: start, E: end) read in `tz`. Stored naive UTC.
- nodes: hosts of `exec_host` (`i02n33/7+i02n33/6`, `c1/0*13`, `n404/2-5`) deduplicated
  in order, else the vnodes of `exec_vnode` with a trailing `[n]` dropped (`host[1]`).
- n_procs: exec_host slots, else exec_vnode ncpus, else total_execution_slots,
  resources_used.ncpus, Resource_List.ncpus. n_nodes: distinct nodes, else
  unique_node_count / Resource_List.nodect.
- user = user; project = account, else project (unless `_pbs_project_default`), else
  group; job_name = jobname; exit_status = Exit_status; exe and command are None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from lassi.ingest.alps import app_row, node_count, read_lines, to_int, to_utc, unreadable

from lassi.core.quarantine import ParseStats, Quarantined

SOURCE = "pbs"

_RECORD = re.compile(r"(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);([A-Za-z]);([^;]*);(.*)")
_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*")+')
# without a quote in the message: the `key=value` tokens at once (a token without `=` or
# with an empty key matches nothing, as split_attributes drops it)
_PLAIN_KV = re.compile(r"(?<!\S)([^\s=]+)=(\S*)")
PBS_DEFAULT_PROJECT = "_pbs_project_default"
# the common exec_host shape `host/first*count+host/first*count...` (one regex, not a
# Python loop per element; anything else goes through parse_exec_host's general rules)
_EXEC_STAR = re.compile(r"[^+/]+/\d+\*\d+(?:\+[^+/]+/\d+\*\d+)*")
_EXEC_STAR_ITEM = re.compile(r"([^+/]+)/\d+\*(\d+)")
_EPOCH = datetime(1970, 1, 1)


def split_attributes(message: str) -> dict[str, str]:
    """`user=a jobname="x y" exec_host=h/0` -> dict; tokens without `=` are dropped."""
    if '"' not in message:
        return dict(_PLAIN_KV.findall(message))
    return _split_tokens(message)


def _split_tokens(message: str) -> dict[str, str]:
    """split_attributes' general rule: token by token, quotes kept together."""
    out = {}
    for tok in _TOKEN.findall(message):
        key, eq, value = tok.partition("=")
        if eq and key:
            out[key] = value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
    return out


def _slots(spec: str, element: str) -> int:
    """CPU slots of one exec_host element's spec: `7`, `0-3`, `0,2-3`, `0*13`, ``."""
    if not spec:
        return 1
    if "*" in spec:
        first, _, count = spec.partition("*")
        if not (first.isdigit() and count.isdigit()):
            raise ValueError(f"bad exec_host element {element!r}")
        return int(count)
    total = 0
    for item in spec.split(","):
        lo, dash, hi = item.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()) or (dash and int(hi) < int(lo)):
            raise ValueError(f"bad exec_host element {element!r}")
        total += int(hi) - int(lo) + 1 if dash else 1
    return total


def parse_exec_host(value: str) -> tuple[list[str], int]:
    """Distinct hosts in order and total CPU slots of an exec_host value."""
    hosts, slots = _exec_host(value)
    return list(hosts), slots


@lru_cache(maxsize=1 << 14)    # a job's S and E records carry the same exec_host
def _exec_host(value: str) -> tuple[tuple[str, ...], int]:
    if _EXEC_STAR.fullmatch(value):
        items = _EXEC_STAR_ITEM.findall(value)
        return tuple(dict.fromkeys(h for h, _ in items)), sum(int(c) for _, c in items)
    return _exec_host_elements(value)


def _exec_host_elements(value: str) -> tuple[tuple[str, ...], int]:
    """parse_exec_host's general rule: element by element."""
    hosts, slots = [], 0
    for element in value.split("+"):
        host, _, spec = element.partition("/")
        if not host:
            raise ValueError(f"bad exec_host element {element!r}")
        hosts.append(host)
        slots += _slots(spec, element)
    return tuple(dict.fromkeys(hosts)), slots


def parse_exec_vnode(value: str) -> tuple[list[str], int]:
    """Distinct hosts in order and total ncpus of `(c1:ncpus=13)+(h[0]:ncpus=24+h[1]:...)`."""
    hosts, ncpus = [], 0
    for chunk in value.replace("(", "").replace(")", "").split("+"):
        vnode, *resources = chunk.split(":")
        if not vnode:
            raise ValueError(f"bad exec_vnode chunk {chunk!r}")
        hosts.append(re.sub(r"\[\d+\]$", "", vnode))
        for res in resources:
            name, _, amount = res.partition("=")
            if name == "ncpus":
                ncpus += to_int(amount) or 0
    return list(dict.fromkeys(hosts)), ncpus


def _epoch(kv: dict[str, str], key: str) -> datetime | None:
    """An epoch-seconds attribute as naive UTC; absent or 0 gives None."""
    value = kv.get(key)
    if value is None or value in ("", "0"):
        return None
    if not value.isdigit():
        raise ValueError(f"bad {key}={value!r} (epoch seconds expected)")
    try:
        return _EPOCH + timedelta(seconds=int(value))
    except OverflowError:
        raise ValueError(f"bad {key}={value!r} (out of range)") from None


def _nodes_and_procs(kv: dict[str, str]) -> tuple[list[str] | None, int | None]:
    hosts, slots = parse_exec_host(kv["exec_host"]) if kv.get("exec_host") else ([], 0)
    vhosts, vcpus = parse_exec_vnode(kv["exec_vnode"]) if kv.get("exec_vnode") else ([], 0)
    nodes = hosts or vhosts or None
    fallbacks = ("total_execution_slots", "resources_used.ncpus", "Resource_List.ncpus")
    procs = slots or vcpus or next(
        (n for n in (to_int(kv.get(k)) for k in fallbacks) if n is not None), None)
    return nodes, procs


def _project(kv: dict[str, str]) -> str | None:
    project = kv.get("project")
    if project == PBS_DEFAULT_PROJECT:
        project = None
    return kv.get("account") or project or kv.get("group")


def job_row(rtype: str, header_time: datetime, job_id: str, kv: dict[str, str]) -> dict:
    """The app_run row of an S or E record (ValueError on unreadable attributes)."""
    start = _epoch(kv, "start") or (header_time if rtype == "S" else None)
    end = (_epoch(kv, "end") or header_time) if rtype == "E" else None
    if start and end and end < start:
        raise ValueError(f"end {end} before start {start}")
    exit_text = kv.get("Exit_status")
    if exit_text is not None and to_int(exit_text) is None:
        raise ValueError(f"bad Exit_status={exit_text!r}")
    nodes, procs = _nodes_and_procs(kv)
    stated = to_int(kv.get("unique_node_count")) or to_int(kv.get("Resource_List.nodect"))
    return app_row(
        app_id=job_id, job_id=job_id, user=kv.get("user") or None, project=_project(kv),
        job_name=kv.get("jobname") or None, nodes=nodes, n_nodes=node_count(nodes, stated),
        n_procs=procs, start=start, end=end, exit_status=to_int(exit_text), source=SOURCE,
    )


def _header_time(stamp: str) -> datetime:
    """`MM/DD/YYYY HH:MM:SS` (digits checked by _RECORD) -> naive datetime; ValueError on
    an impossible date or time."""
    try:
        return datetime(int(stamp[6:10]), int(stamp[0:2]), int(stamp[3:5]), int(stamp[11:13]),
                        int(stamp[14:16]), int(stamp[17:19]))
    except ValueError as exc:
        raise ValueError(f"bad record time {stamp!r}: {exc}") from None


# an E row's fields its job's S record does not fill in
UNPAIRED = ("end", "exit_status")


def record(line: str, tz: str) -> tuple[str, dict | None]:
    """One line read alone: ("blank" | "other", None) or ("S" | "E", its app_run row);
    ValueError (the quarantine reason) when it is no readable record."""
    if not line.strip():
        return "blank", None
    m = _RECORD.fullmatch(line)
    if m is None:
        raise ValueError("not a PBS accounting record `MM/DD/YYYY HH:MM:SS;T;id;...`")
    stamp, rtype, job_id, message = m.groups()
    header_time = to_utc(_header_time(stamp), tz)
    if rtype not in ("S", "E"):
        return "other", None
    if not job_id.strip():
        raise ValueError(f"{rtype} record without a job id")
    kv = split_attributes(message)
    if not kv:
        raise ValueError(f"{rtype} record without key=value attributes")
    return rtype, job_row(rtype, header_time, job_id.strip(), kv)


@dataclass
class _State:
    """S records waiting for their E, across the files of one ingest."""

    tz: str
    stats: ParseStats = field(default_factory=lambda: ParseStats(source=SOURCE))
    quarantine: list[Quarantined] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    started: dict[str, dict] = field(default_factory=dict)

    def bump(self, key: str) -> None:
        self.stats.extra[key] = self.stats.extra.get(key, 0) + 1

    def feed(self, lines: Iterable[str], file: str) -> None:
        self.stats.files += 1
        for line_no, raw in enumerate(lines, 1):
            line = raw.rstrip("\r\n")
            self.stats.lines_read += 1
            try:
                self._line(line)
            except ValueError as exc:
                self.stats.lines_quarantined += 1
                self.quarantine.append(Quarantined(SOURCE, file, line_no, line, str(exc)))
            else:
                self.stats.lines_used += 1

    def _line(self, line: str) -> None:
        kind, row = record(line, self.tz)
        if kind == "other":
            self.bump("other_records")
        elif kind == "S":
            self.started[row["job_id"]] = row
        elif kind == "E":
            started = self.started.pop(row["job_id"], {})
            for key, value in started.items():
                if row[key] is None and key not in UNPAIRED:
                    row[key] = value
            self.rows.append(row)

    def finish(self) -> tuple[list[dict], list[Quarantined], ParseStats]:
        """Rows of E records, then S records that never ended (end None)."""
        for row in self.started.values():
            self.bump("unfinished")
            self.rows.append(row)
        self.started = {}
        self.stats.rows = len(self.rows)
        return self.rows, self.quarantine, self.stats


def parse_lines(
    lines: Iterable[str], file: str, *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one accounting file's lines (header times local in `tz`)."""
    state = _State(tz)
    state.feed(lines, file)
    return state.finish()


def parse_files(
    paths: Iterable[str | Path], *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse several accounting files, pairing S and E records across them."""
    state = _State(tz)
    for path in paths:
        lines, bad = read_lines(path, SOURCE)
        if bad is not None:                 # counted as one quarantined line and file
            _, qs, st = unreadable(bad)
            state.stats.add(st)
            state.quarantine += qs
            continue
        state.feed(lines, str(path))
    return state.finish()


def parse_file(path: str | Path, *, tz: str = "UTC") -> tuple[list[dict], list[Quarantined],
                                                              ParseStats]:
    """Parse one (possibly gzipped) accounting file."""
    return parse_files([path], tz=tz)
