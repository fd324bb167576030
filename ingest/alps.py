"""Cray ALPS `apsys` messages -> `app_run` rows (source `alps`), one row per apid.

Pinned format (FORMATS.md §3), one syslog line per message:

    <ISO time with offset> <host> apsys <pid> - - apid=<n>, Starting, user=<uid>,
        batch_id=<id>, cmd_line="<launch command>", num_nodes=<n>, node_list=<nid ranges>, ...
    <ISO time with offset> <host> apsys <pid> - - apid=<n>, Finishing, user=<uid>,
        batch_id=<id>, exit_code=<n>, ...

Rules:
- `Starting` and `Finishing` pair by apid over all the input (`parse_files` pairs across
  files, in any file order). app_id = apid, job_id = batch_id exactly as written
  (`4567890.sdb`), command = cmd_line (unquoted), exe = executable after the launcher's
  options, n_procs = aprun `-n` (summed over MPMD `:` segments), nodes = `nid%05d`,
  n_nodes = number of listed nodes (num_nodes only when no list; a disagreement is
  counted in extra["node_count_mismatch"]). A Starting without batch_id is quarantined.
- A `Starting` never finished gives a row with end None (stats.extra["unfinished"]); a
  `Finishing` never started is quarantined; a second `Starting`/`Finishing` of an apid is
  quarantined. Other apsys events are used and ignored (extra["other_apsys"]).
- Lines of other programs (any syslog line whose tag is not apsys, e.g. apsched's own log)
  are used and produce nothing (extra["ignored"]); apsys lines that do not parse are
  quarantined.
- Times with an offset convert by it; times without one are in `tz`. Stored naive UTC.

This module also holds the helpers the other scheduler parsers share: the app_run row
shape, time conversion, launch-command parsing and file reading.
"""

from __future__ import annotations

import os
import re
import shlex
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from lassi.core.hostlist import expand_nid_ranges
from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.textio import open_text

SOURCE = "alps"

APP_RUN_FIELDS = (
    "app_id", "job_id", "user", "project", "job_name", "exe", "command", "nodes",
    "n_nodes", "n_procs", "start", "end", "exit_status", "source",
)

# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


_APP_RUN_SET = frozenset(APP_RUN_FIELDS)


# app_run's 32-bit integer fields
_COUNTS = ("n_nodes", "n_procs", "exit_status")
_INT32 = 2**31


def app_row(**values: object) -> dict:
    """An app_run row (all APP_RUN fields but `date`), unspecified fields None; ValueError
    (the line's quarantine reason) when a count does not fit app_run's 32-bit integers, as
    the table's write would otherwise fail for the whole day."""
    unknown = values.keys() - _APP_RUN_SET
    if unknown:
        raise KeyError(f"not app_run fields: {sorted(unknown)}")
    check_counts(values)
    row = dict.fromkeys(APP_RUN_FIELDS)
    row.update(values)
    return row


def check_counts(values: dict) -> None:
    """ValueError when one of app_run's integer fields in `values` is beyond 32 bits."""
    for name in _COUNTS:
        value = values.get(name)
        if value is not None and not -_INT32 <= value < _INT32:
            raise ValueError(f"{name} {value} out of range (app_run holds 32-bit integers)")


def to_utc(dt: datetime, tz: str = "UTC") -> datetime:
    """Naive UTC from an aware datetime, or from a naive one read as local time in `tz`."""
    if dt.tzinfo is None:
        if tz == "UTC":
            return dt
        dt = dt.replace(tzinfo=ZoneInfo(tz))
    return dt.astimezone(timezone.utc).replace(tzinfo=None)


NO_TIME = {"", "unknown", "none", "n/a", "(null)"}  # texts parse_time reads as no time


def parse_time(text: str, tz: str = "UTC") -> datetime | None:
    """ISO-8601 (offset or `Z` honoured, else local in `tz`) or epoch seconds -> naive UTC.

    Empty/`Unknown`/`None` give None; anything else unreadable or beyond datetime's
    years (year 1-9999 in UTC) raises ValueError.
    """
    s = text.strip()
    if s.lower() in NO_TIME:
        return None
    try:
        if s.isdigit():
            return datetime.fromtimestamp(int(s), timezone.utc).replace(tzinfo=None)
        if s.endswith(("Z", "z")):
            s = s[:-1] + "+00:00"
        return to_utc(datetime.fromisoformat(s), tz)
    except (OverflowError, OSError) as exc:       # beyond datetime's years once in UTC
        raise ValueError(f"time {text.strip()!r} out of range: {exc}") from exc


def node_count(nodes: list[str] | None, stated: int | None) -> int | None:
    """Distinct nodes listed when known, else the count the scheduler stated."""
    return len(nodes) if nodes else stated


_LEADING_INT = re.compile(r"\s*(-?\d+)")


def to_int(text: str | None) -> int | None:
    """Leading integer of a field (`4:ppn=8` -> 4), None when there is none."""
    if text is None:
        return None
    m = _LEADING_INT.match(text)
    return int(m.group(1)) if m else None


def read_lines(path: str | Path, source: str) -> tuple[list[str] | None, Quarantined | None]:
    """All lines of a (possibly gzipped) file, or a whole-file quarantine record."""
    try:
        with open_text(path) as fh:
            return [ln.rstrip("\r\n") for ln in fh], None
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        reason = f"cannot read file: {type(exc).__name__}: {exc}"
        return None, Quarantined(source, str(path), 0, "", reason)


def unreadable(q: Quarantined) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Result of a file that could not be read: no rows, the file counted as one line read
    and quarantined (its record), and as an unreadable file (`extra["files_unreadable"]`,
    which the ingest summary names)."""
    return [], [q], ParseStats(source=q.source, files=1, lines_read=1, lines_quarantined=1,
                               extra={"files_unreadable": 1})


# Launch commands: options of launchers (name -> number of values it takes; others: 0).
_APRUN = {
    **dict.fromkeys("-a -cc -cp -d -D -e -E -F -j -L -l -m -n -N -p -r -R -S -sl -sn -t".split(),
                    1),
    **dict.fromkeys(
        "--cc --cp --pes --pes-per-node --cpus-per-pe --wdir --exclude-node-list --node-list "
        "--node-list-file --access-mode --architecture --memory-per-pe --pes-per-numa-node "
        "--protection-domain --numa-node-list --numa-nodes-per-node --cpu-time-limit "
        "--environment-override --debug --relaunch --specialized-cpus --p-governor --p-state "
        "--zone-sort-secs".split(), 1),
}
_SRUN = {
    **dict.fromkeys("-A -B -c -C -d -D -e -G -i -J -L -m -M -n -N -o -p -q -r -S -t -T -w -W "
                    "-x -a".split(), 1),
    **dict.fromkeys(
        "--account --extra-node-info --cpus-per-task --constraint --dependency --chdir --error "
        "--gpus --input --job-name --licenses --distribution --clusters --ntasks --nodes "
        "--output --partition --qos --relative --core-spec --time --threads --nodelist --wait "
        "--exclude --mpi --cpu-bind --cpu_bind --mem --mem-per-cpu --mem-per-gpu "
        "--ntasks-per-node --ntasks-per-core --ntasks-per-socket --gres --export --hint "
        "--gpus-per-node --gpus-per-task --het-group --begin --comment --reservation "
        "--switches --time-min --uid --gid --network --tres-per-task --mem-bind --cpu-freq "
        "--signal --mail-type --mail-user --array --open-mode --profile --prolog --epilog "
        "--task-prolog --task-epilog --jobid --export-file --cores-per-socket "
        "--sockets-per-node --threads-per-core --tmp --container --gres-flags --wckey "
        "--cpus-per-gpu --gpu-bind --nodefile".split(), 1),
}
_MPIRUN = {
    **dict.fromkeys(
        "-n -np --np -c -N -npernode --npernode -npersocket --npersocket -H -host --host "
        "-hosts -hostfile --hostfile -machinefile --machinefile -machine -f -ppn -perhost "
        "-wdir --wdir -wd -path --path -prefix --prefix -x -configfile -launcher -bootstrap "
        "-bootstrap-exec -iface -genvlist -envlist -map-by --map-by -bind-to --bind-to "
        "-rank-by --rank-by -binding -output-filename --output-filename -tmpdir "
        "-preload-files -am -rf --rankfile -timeout --timeout -default-hostfile "
        "-launcher-exec -gpath -gwdir -gumask -umask -errfile-pattern -outfile-pattern "
        "--cpus-per-proc -cpus-per-proc --cpus-per-rank -cpus-per-rank --app -app "
        "--personality".split(), 1),
    **dict.fromkeys("--mca -mca --gmca -gmca -env -genv".split(), 2),
}
LAUNCHERS: dict[str, dict[str, int]] = {
    "aprun": _APRUN, "srun": _SRUN, "sbatch": _SRUN, "salloc": _SRUN,
    "mpirun": _MPIRUN, "mpiexec": _MPIRUN, "mpiexec.hydra": _MPIRUN, "orterun": _MPIRUN,
}
_COUNT_OPTS = {
    "aprun": ("-n", "--pes"), "srun": ("-n", "--ntasks"), "sbatch": ("-n", "--ntasks"),
    "salloc": ("-n", "--ntasks"), "mpirun": ("-n", "-np", "--np"),
    "mpiexec": ("-n", "-np", "--np"), "mpiexec.hydra": ("-n", "-np"), "orterun": ("-n", "-np"),
}
_WRAPPERS = {"env", "time", "nohup"}
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _count_value(tokens: list[str], i: int, opts: tuple[str, ...]) -> int | None:
    """The process count given by tokens[i] (and maybe tokens[i+1]), if it is one."""
    tok = tokens[i]
    for opt in opts:
        if tok == opt and i + 1 < len(tokens):
            return to_int(tokens[i + 1])
        if tok.startswith(opt + "="):
            return to_int(tok[len(opt) + 1:])
        if len(opt) == 2 and tok.startswith(opt) and tok[2:].isdigit():
            return int(tok[2:])
    return None


def _skip_options(tokens: list[str], i: int, launcher: str) -> tuple[int, int | None]:
    """Index of the first token after `launcher`'s options, and the process count given."""
    spec, opts, count = LAUNCHERS[launcher], _COUNT_OPTS[launcher], None
    while i < len(tokens) and tokens[i].startswith("-") and tokens[i] != "-":
        tok = tokens[i]
        if tok == "--":
            return i + 1, count
        value = _count_value(tokens, i, opts)
        count = value if value is not None else count
        i += 1 if "=" in tok else 1 + spec.get(tok, 0)
    return i, count


# printable ASCII without quotes or backslashes: shlex.split is a split on spaces
_PLAIN_COMMAND = re.compile(r"[ !#-&(-\[\]-~]*")


def _tokens(command: str) -> list[str]:
    if _PLAIN_COMMAND.fullmatch(command):
        return command.split()
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def parse_launch(command: str | None) -> tuple[str | None, int | None]:
    """(exe basename, process count) of a launch command such as `aprun -n 48 ./wrf.exe`.

    Leading `VAR=value`, `env`, `time`, `nohup` are skipped; after aprun/srun/mpirun/
    mpiexec/sbatch/salloc their options (with values) are skipped; MPMD segments after `:`
    add their counts. The count is None when the launcher gives none.
    """
    if not command:
        return None, None
    tokens, i, launcher, count = _tokens(command), 0, None, None
    while i < len(tokens):
        base = os.path.basename(tokens[i])
        if _ASSIGN.match(tokens[i]) or base in _WRAPPERS:
            i += 1
        elif base in LAUNCHERS and launcher is None:
            launcher = base
            i, count = _skip_options(tokens, i + 1, base)
        else:
            break
    if i >= len(tokens):
        return None, count
    exe = os.path.basename(tokens[i]) or None
    if launcher and count is not None:
        for j in range(i + 1, len(tokens)):
            if tokens[j] == ":":
                extra = _skip_options(tokens, j + 1, launcher)[1]
                count += extra or 0
    return exe, count


# ---------------------------------------------------------------------------------------
# apsys parsing
# ---------------------------------------------------------------------------------------

_SYSLOG = re.compile(r"(?P<ts>\S+)\s+(?P<host>\S+)\s+(?P<tag>\S+?)(?:\[\d+\])?:?(?:\s+|$)")
_APSYS = re.compile(r"(?P<ts>\S+)\s+\S+\s+apsys\s+\S+\s+\S+\s+\S+\s+(?P<msg>.*)")
_ITEM = re.compile(r"\s*([^=,]*)(=|,|$)")


# The usual message, matched at once: items `word`, `key=value` (no spaces or quotes; a
# comma only inside, as in `1-2,5`) or `key="text"` (no escapes), one `, ` apart. What
# these give equals the general parse below; any other message takes that parse.
_KEY, _WORD = r"[A-Za-z_][A-Za-z0-9_]*", r"[A-Za-z][A-Za-z0-9_]*"
_PLAIN_VALUE = r'[^",\s]*(?:,[^",\s]+)*'
_ITEM_RE = rf'(?:{_KEY}=(?:"[^"\\]*"|{_PLAIN_VALUE})|{_WORD})'
_PLAIN_MESSAGE = re.compile(rf"{_ITEM_RE}(?:, {_ITEM_RE})*")
_PLAIN_ITEM = re.compile(rf'(?:^|, )(?:({_KEY})=(?:"([^"\\]*)"|({_PLAIN_VALUE}))|({_WORD}))')


def split_message(msg: str) -> tuple[dict[str, str], list[str]]:
    """`apid=1, Starting, cmd_line="a, b", node_list=1-2,5` -> ({...}, ['Starting']).

    Items are separated by `, `; a value is a double-quoted string (backslash escapes)
    or runs to the next `, `. ValueError on an unterminated quote or an empty key.
    """
    if _PLAIN_MESSAGE.fullmatch(msg):
        items = _PLAIN_ITEM.findall(msg)
        return ({k: q or u for k, q, u, _ in items if k}, [w for *_, w in items if w])
    return _split_items(msg)


def _split_items(msg: str) -> tuple[dict[str, str], list[str]]:
    """split_message's general rule: item by item."""
    kv: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(msg):
        m = _ITEM.match(msg, i)
        token, i = m.group(1).strip(), m.end()
        if m.group(2) != "=":
            if token:
                words.append(token)
            continue
        if not token:
            raise ValueError(f"empty key before {msg[i - 1:i + 30]!r}")
        kv[token], i = _read_value(msg, i)
    return kv, words


def _read_value(msg: str, i: int) -> tuple[str, int]:
    """The value starting at msg[i] and the index just after its separating comma."""
    if not msg.startswith('"', i):
        end = msg.find(", ", i)
        return (msg[i:].strip(), len(msg)) if end < 0 else (msg[i:end].strip(), end + 1)
    j = msg.find('"', i + 1)
    if j > 0 and "\\" not in msg[i + 1:j]:       # no escapes: the text up to the next quote
        text = msg[i + 1:j]
    else:
        text, j = _unescape(msg, i + 1)
    if j >= len(msg):
        raise ValueError(f"unterminated quote in {msg[i:i + 40]!r}")
    rest = msg[j + 1:]
    if rest.strip() and not rest.startswith(","):
        raise ValueError(f"text after a closing quote: {rest[:30]!r}")
    return text, j + 2


def _unescape(msg: str, j: int) -> tuple[str, int]:
    """The quoted text from msg[j] (backslash escapes) and the index of its closing quote
    (len(msg) when there is none)."""
    out = []
    while j < len(msg) and msg[j] != '"':
        if msg[j] == "\\" and j + 1 < len(msg):
            j += 1
        out.append(msg[j])
        j += 1
    return "".join(out), j


def record(line: str, tz: str) -> tuple[str, tuple | None]:
    """One line read alone: ("ignored" | "other_apsys", None), or ("Starting" |
    "Finishing", (time, items, a Starting's (nodes, stated count, exe, process count)));
    ValueError (the quarantine reason) when it is an apsys line that does not parse or a
    count that app_run cannot hold."""
    head = _SYSLOG.match(line)
    if not line.strip() or head is None or head.group("tag") != "apsys":
        return "ignored", None
    m = _APSYS.fullmatch(line)
    if m is None:
        raise ValueError("apsys line without `<pid> - -` and a message")
    when = parse_time(m.group("ts"), tz)
    if when is None:
        raise ValueError(f"no timestamp: {m.group('ts')!r}")
    kv, words = split_message(m.group("msg"))
    apid = kv.get("apid", "")
    if not apid.isdigit():
        raise ValueError(f"apsys message without a numeric apid: {apid!r}")
    kind = next((w for w in words if w in ("Starting", "Finishing")), None)
    if kind is None:
        return "other_apsys", None
    fields = None
    if kind == "Starting":
        if not kv.get("batch_id"):
            raise ValueError(f"Starting without batch_id for apid {apid}")
        nodes, stated = start_fields(kv)   # now, so a bad Starting is quarantined on its line
        exe, procs = parse_launch(kv.get("cmd_line"))
        check_counts({"n_nodes": node_count(nodes, stated), "n_procs": procs})
        fields = (nodes, stated, exe, procs)
    else:
        check_counts({"exit_status": to_int(kv.get("exit_code"))})
    return kind, (when, kv, fields)


@dataclass
class _Event:
    kind: str  # Starting | Finishing
    time: datetime
    kv: dict[str, str]
    file: str
    line_no: int
    raw: str
    # of a Starting: nodes, stated node count, exe, process count
    start_fields: tuple[list[str] | None, int | None, str | None, int | None] | None = None


@dataclass
class _State:
    """Pairing state across the files of one ingest."""

    tz: str
    stats: ParseStats = field(default_factory=lambda: ParseStats(source=SOURCE))
    quarantine: list[Quarantined] = field(default_factory=list)
    starts: dict[str, _Event] = field(default_factory=dict)
    finishes: dict[str, _Event] = field(default_factory=dict)

    def bump(self, key: str) -> None:
        self.stats.extra[key] = self.stats.extra.get(key, 0) + 1

    def reject(self, file: str, line_no: int, raw: str, reason: str) -> None:
        self.stats.lines_quarantined += 1
        self.quarantine.append(Quarantined(SOURCE, file, line_no, raw, reason))

    def feed(self, lines: Iterable[str], file: str) -> None:
        self.stats.files += 1
        for line_no, raw in enumerate(lines, 1):
            line = raw.rstrip("\r\n")
            self.stats.lines_read += 1
            try:
                self._line(line, file, line_no)
            except ValueError as exc:
                self.reject(file, line_no, line, str(exc))

    def _line(self, line: str, file: str, line_no: int) -> None:
        kind, event = record(line, self.tz)
        if event is None:
            self.stats.lines_used += 1
            self.bump(kind)
            return
        when, kv, fields = event
        apid = kv["apid"]
        table = self.starts if kind == "Starting" else self.finishes
        if apid in table:
            raise ValueError(f"second {kind} for apid {apid}")
        table[apid] = _Event(kind, when, kv, file, line_no, line, fields)

    def finish(self) -> tuple[list[dict], list[Quarantined], ParseStats]:
        """Pair the events seen; orphan Finishing lines are quarantined here."""
        rows = []
        for apid, start in self.starts.items():
            end = self.finishes.pop(apid, None)
            self.stats.lines_used += 1 if end is None else 2
            if end is None:
                self.bump("unfinished")
            row = _row(apid, start, end)
            stated = to_int(start.kv.get("num_nodes"))
            if row["nodes"] and stated is not None and stated != len(row["nodes"]):
                self.bump("node_count_mismatch")
            rows.append(row)
        for apid, ev in self.finishes.items():
            self.reject(ev.file, ev.line_no, ev.raw, f"Finishing without Starting for apid {apid}")
        self.stats.rows = len(rows)
        return rows, self.quarantine, self.stats


def start_fields(kv: dict[str, str]) -> tuple[list[str] | None, int | None]:
    """Nodes and stated node count of a Starting message (ValueError when malformed)."""
    nodes = expand_nid_ranges(kv["node_list"]) if kv.get("node_list") else None
    stated = kv.get("num_nodes")
    if stated is not None and not stated.isdigit():
        raise ValueError(f"bad num_nodes {stated!r}")
    return (list(dict.fromkeys(nodes)) if nodes else None), to_int(stated)


def _row(apid: str, start: _Event, end: _Event | None) -> dict:
    kv = start.kv
    nodes, stated, exe, procs = start.start_fields
    command = kv.get("cmd_line")
    exit_code = to_int(end.kv.get("exit_code")) if end else None
    return app_row(
        app_id=apid, job_id=kv["batch_id"], user=kv.get("user"), exe=exe,
        command=command, nodes=nodes, n_nodes=node_count(nodes, stated), n_procs=procs,
        start=start.time, end=end.time if end else None, exit_status=exit_code, source=SOURCE,
    )


def parse_lines(
    lines: Iterable[str], file: str, *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one file's lines; pairs Starting/Finishing within these lines only."""
    state = _State(tz)
    state.feed(lines, file)
    return state.finish()


def parse_files(
    paths: Iterable[str | Path], *, tz: str = "UTC"
) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse several files, pairing Starting/Finishing across all of them."""
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
    """Parse one (possibly gzipped) apsys log."""
    return parse_files([path], tz=tz)
