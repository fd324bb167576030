"""Slurm `sacct --parsable2` dumps -> `app_run` rows (source `slurm`).

Two layouts:
- headed: a header row names the fields, in any order (`sacct -p`'s trailing `|` is
  accepted); JobID, Start, End, NodeList are required, and a header lacking one
  quarantines the whole file (one record, line 0; all its lines count quarantined).
  JobIDRaw, JobName, User, Account, NNodes, NCPUS, State, ExitCode, SubmitLine are used
  when present. A repeated header is skipped; a different header switches the layout.
- headerless: XDMoD's 26 fields (`jobid|jobidraw|cluster|partition|qos|account|group|gid|
  user|uid|submit|eligible|start|end|elapsed|exitcode|state|nnodes|ncpus|reqcpus|reqmem|
  reqtres|alloctres|timelimit|nodelist|jobname`). Extra `|` belong to the job name.
- pytokio's JSON cache of sacct (`tokio.connectors.slurm`, e.g. its `sample.slurm`):
  `{jobidraw: {jobidraw, start, end, nodelist}}`, read as a headed dump of those fields.

Step/job rule: a numbered step (`123.4`, `123.4+1`) is one application launch: app_id
`123.4`, job_id `123`. The allocation line (`123`) gives a row (app_id = job_id) only when
no numbered step of that job occurs in the same input (dropped allocation lines count in
extra["jobs_with_steps"]); `.batch`, `.extern`, `.interactive`
and other named steps give no row (extra["non_app_steps"]). job_id is the JobIDRaw job part
when that field exists (what SLURM_JOB_ID, Lustre jobstats and Darshan record; array tasks
differ from the displayed `123_7`), else the JobID's. Steps take user, project and job
name from their allocation line when theirs are empty (sacct leaves them blank).

Fields: user = User, project = Account, job_name = JobName, command = SubmitLine, exe from
SubmitLine (for a numbered step without SubmitLine: the step's JobName, which srun sets to
the executable), nodes = NodeList expanded (`None assigned` -> None), n_nodes = distinct
nodes (else NNodes), n_procs = NCPUS, exit_status = ExitCode's first part.
Times: `Unknown`/`None` -> None; ISO without offset is local in `tz`; epoch seconds
accepted. A record that never started (Start None) gives no row (extra["not_started"]); a
RUNNING/PENDING/SUSPENDED/REQUEUED... record, or one without End, gives end None
(extra["unfinished"]).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lassi.ingest.alps import (
    app_row,
    node_count,
    parse_launch,
    parse_time,
    read_lines,
    to_int,
    unreadable,
)

from lassi.core.hostlist import expand_hostlist
from lassi.core.quarantine import ParseStats, Quarantined

SOURCE = "slurm"

XDMOD_FIELDS = (
    "jobid", "jobidraw", "cluster", "partition", "qos", "account", "group", "gid", "user",
    "uid", "submit", "eligible", "start", "end", "elapsed", "exitcode", "state", "nnodes",
    "ncpus", "reqcpus", "reqmem", "reqtres", "alloctres", "timelimit", "nodelist", "jobname",
)
REQUIRED = ("jobid", "start", "end", "nodelist")
# states of a record that has not ended (its End is no end time)
NOT_ENDED = {
    "RUNNING", "PENDING", "SUSPENDED", "REQUEUED", "RESIZING", "CONFIGURING",
    "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT",
}
NO_NODES = {"", "none assigned", "none", "(null)", "unknown"}  # NodeList naming no node
_NUMBERED_STEP = re.compile(r"\d+(\+\d+)?")
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*")


class BadHeader(ValueError):
    """A header row that lacks a required field: the whole file is quarantined."""


def read_header(line: str) -> list[str] | None:
    """Lower-cased field names if `line` is a header row (has JobID or JobIDRaw), else None."""
    if "jobid" not in line.lower():           # a data line, found without splitting it
        return None
    names = [f.strip().lower() for f in line.split("|")]
    if len(names) > 1 and names[-1] == "":
        names = names[:-1]
    if ("jobid" not in names and "jobidraw" not in names) or not all(
            _FIELD_NAME.fullmatch(n) for n in names):
        return None
    missing = [f for f in REQUIRED if f not in names]
    if missing:
        raise BadHeader(f"sacct header lacks required field(s): {', '.join(missing)}")
    return names


def split_record(line: str, names: list[str] | tuple[str, ...], trailing: bool) -> dict:
    """Map one data line onto field names; surplus `|` go to a last JobName field."""
    fields = line.split("|")
    if trailing and fields and fields[-1] == "" and len(fields) == len(names) + 1:
        fields = fields[:-1]
    if len(fields) > len(names) and names[-1] == "jobname":
        fields = fields[: len(names) - 1] + ["|".join(fields[len(names) - 1:])]
    if len(fields) != len(names):
        raise ValueError(f"{len(fields)} fields, layout has {len(names)}")
    return dict(zip(names, fields, strict=True))


def _split_id(rec: dict) -> tuple[str, str]:
    """(job id, step suffix) of a record; step '' for the allocation line."""
    shown = rec["jobid"].strip() if rec.get("jobid") else ""
    raw = (rec.get("jobidraw") or "").strip()
    ident = raw or shown
    if not ident:
        raise ValueError("empty JobID")
    job, _, step = ident.partition(".")
    if not step and shown:
        step = shown.partition(".")[2]
    return job, step


def _nodes(text: str) -> list[str] | None:
    if text.strip().lower() in NO_NODES:
        return None
    return list(dict.fromkeys(expand_hostlist(text))) or None


@dataclass
class Record:
    """One parsed record awaiting the file-level step/job decision."""

    job_id: str
    step: str
    row: dict | None
    info: dict  # user / project / job_name as written on this line


def record(line: str, names: list[str] | tuple[str, ...], trailing: bool, tz: str
           ) -> tuple[Record | None, tuple[str, ...]]:
    """One data line of a layout (`names`, `trailing` `|`) as a record (None for a blank
    line) and the counters it bumps; ValueError (the quarantine reason) when unreadable."""
    if not line.strip():
        return None, ()
    rec = split_record(line, names, trailing)
    job_id, step = _split_id(rec)
    info = {"user": rec.get("user"), "project": rec.get("account"),
            "job_name": rec.get("jobname")}
    if step and not _NUMBERED_STEP.fullmatch(step):
        return Record(job_id, step, None, info), ("non_app_steps",)
    row, bumps = _row(rec, job_id, step, tz)
    return Record(job_id, step, row, info), bumps


def _row(rec: dict, job_id: str, step: str, tz: str) -> tuple[dict | None, tuple[str, ...]]:
    """An allocation's or numbered step's app_run row (None: never started) and the
    counters it bumps."""
    start = parse_time(rec.get("start", ""), tz)
    end = parse_time(rec.get("end", ""), tz)
    if start is None:
        return None, ("not_started",)
    bumps: tuple[str, ...] = ()
    state = (rec.get("state") or "").split(" ")[0].upper().rstrip("+")
    if state in NOT_ENDED or end is None:
        end = None
        bumps = ("unfinished",)
    elif end < start:
        raise ValueError(f"End {end} before Start {start}")
    nodes = _nodes(rec["nodelist"])
    command = rec.get("submitline") or None
    exe, _ = parse_launch(command)
    if exe is None and step and not command:
        exe = rec.get("jobname") or None
    return app_row(
        app_id=f"{job_id}.{step}" if step else job_id, job_id=job_id, exe=exe,
        command=command, nodes=nodes, n_nodes=node_count(nodes, to_int(rec.get("nnodes"))),
        n_procs=to_int(rec.get("ncpus")), start=start, end=end,
        exit_status=to_int(rec.get("exitcode")), source=SOURCE,
    ), bumps


def decide(records: list[Record]) -> tuple[list[dict], int]:
    """The step/job rule over one input's records: the rows, steps' blank user/project/job
    name filled from their allocation line; and how many allocation rows were dropped
    (extra["jobs_with_steps"])."""
    stepped = {r.job_id for r in records if r.step and r.row is not None}
    alloc = {r.job_id: r.info for r in records if not r.step}
    rows, dropped = [], 0
    for r in records:
        if r.row is None:
            continue
        if not r.step and r.job_id in stepped:
            dropped += 1
            continue
        parent = alloc.get(r.job_id, {})
        for key, own in r.info.items():
            value = (parent.get(key) or own) if key == "job_name" else (own or parent.get(key))
            r.row[key] = value or None
        rows.append(r.row)
    return rows, dropped


@dataclass
class _Parser:
    tz: str
    file: str
    stats: ParseStats = field(default_factory=lambda: ParseStats(source=SOURCE, files=1))
    quarantine: list[Quarantined] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    names: list[str] | tuple[str, ...] = XDMOD_FIELDS
    trailing: bool = False

    def bump(self, key: str, n: int = 1) -> None:
        if n:
            self.stats.extra[key] = self.stats.extra.get(key, 0) + n

    def run(self, lines: list[str]) -> tuple[list[dict], list[Quarantined], ParseStats]:
        self.stats.lines_read = len(lines)
        try:
            for line in lines:
                read_header(line)  # a bad header anywhere condemns the file
        except BadHeader as exc:
            raw = next(ln for ln in lines if _is_bad_header(ln))
            self.stats.lines_quarantined = len(lines)
            return [], [Quarantined(SOURCE, self.file, 0, raw, str(exc))], self.stats
        for line_no, line in enumerate(lines, 1):
            try:
                self._line(line)
            except ValueError as exc:
                self.stats.lines_quarantined += 1
                self.quarantine.append(Quarantined(SOURCE, self.file, line_no, line, str(exc)))
            else:
                self.stats.lines_used += 1
        rows, dropped = decide(self.records)
        self.bump("jobs_with_steps", dropped)
        self.stats.rows = len(rows)
        return rows, self.quarantine, self.stats

    def _line(self, line: str) -> None:
        header = read_header(line) if line.strip() else None
        if header is not None:
            self.names, self.trailing = header, is_trailing(line)
            return
        rec, bumps = record(line, self.names, self.trailing, self.tz)
        for key in bumps:
            self.bump(key)
        if rec is not None:
            self.records.append(rec)


def is_trailing(header: str) -> bool:
    """Whether a header row ends with `|` (`sacct -p`): its data lines do too."""
    return header.rstrip().endswith("|")


def _is_bad_header(line: str) -> bool:
    try:
        read_header(line)
    except BadHeader:
        return True
    return False


def parse_lines(
    lines: Iterable[str], file: str, *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one sacct dump (headed or XDMoD headerless); times local in `tz`."""
    return _Parser(tz, file).run([ln.rstrip("\r\n") for ln in lines])


def parse_file(path: str | Path, *, tz: str = "UTC") -> tuple[list[dict], list[Quarantined],
                                                              ParseStats]:
    """Parse one (possibly gzipped) sacct dump, or pytokio's JSON cache of sacct."""
    lines, bad = read_lines(path, SOURCE)
    if bad is not None:
        return unreadable(bad)
    if lines and lines[0].lstrip().startswith("{"):
        return parse_json_cache("\n".join(lines), str(path), tz=tz)
    return parse_lines(lines, str(path), tz=tz)


CACHE_HEADER = "JobID|JobIDRaw|Start|End|NodeList"


def parse_json_cache(text: str, file: str, *, tz: str = "UTC"
                     ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """pytokio's serialised sacct (`{jobidraw: {jobidraw, start, end, nodelist: [...]}}`,
    local times): each record becomes a headed sacct line, then the usual step rules.

    Line accounting counts records (the file is one JSON document); a file that is not
    such JSON is quarantined whole."""
    try:
        cache = json.loads(text)
        recs = [(str(k), v["start"], v["end"], ",".join(v["nodelist"] or []))
                for k, v in cache.items()]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return unreadable(Quarantined(SOURCE, file, 0, text[:200],
                                      f"not a pytokio sacct JSON cache: {exc}"))
    lines = [CACHE_HEADER] + [f"{j}|{j}|{start}|{end}|{nodes}" for j, start, end, nodes in recs]
    rows, qs, stats = parse_lines(lines, file, tz=tz)
    stats.lines_read -= 1           # the header was made here, not read
    stats.lines_used -= 1
    return rows, qs, stats
