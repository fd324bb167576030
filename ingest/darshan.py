"""Darshan logs (PyDarshan) -> `darshan_job` and `darshan_file` (TOKIO's Darshan connector).

One log = one job row plus one row per (module, record, rank) of the POSIX, MPI-IO and STDIO
modules, with the LUSTRE module's striping joined on the record id. Times are UTC.

`read_log(path)` is the pandas-level API. `read_inputs` (the connector of `lassi ingest
--source darshan`; it only reads, `lassi.ingest.writer` writes) parses every log in a separate
worker process, because darshan-util's C code can abort the whole interpreter on a corrupt
or truncated log, or hang (a log on a dead mount): such a log, like any other unreadable one,
is quarantined (line_no 0) and the ingest goes on; a worker that has not answered within
`$LASSI_DARSHAN_TIMEOUT` seconds (default 300) is killed. A log counts as one "line" in
the accounting. Rows go to the partitions of the job's UTC start day, merged by log: a
rerun replaces that log's rows (matched by file name) and keeps the others.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lassi.ingest.contract import IngestError, IngestResult, LogRows, TableRows

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import schema_of

SOURCE = "darshan"
MODULES = ("POSIX", "MPI-IO", "STDIO")   # the per-file modules kept in darshan_file
# `<user>_<exe>_id<jobid>[-<n>]_<month>-<day>-<seconds>-<hash>[_<n>].darshan`
REPO_NAME = re.compile(
    r"^(?P<user>[^_]+)_(?P<exe>.+)_id(?P<jobid>\d+)(?:-\d+)?_(?P<month>\d+)-(?P<day>\d+)-"
    r"(?P<seconds>\d+)-(?P<hash>\d+)(?:_\d+)?\.darshan$")
_EPOCH = dt.datetime(1970, 1, 1)
DARSHAN_MAGIC = 6567223   # DARSHAN_MAGIC_NR of the log header

# per module: (opens, reads, writes, bytes read, bytes written, read/write/meta time)
_COUNTERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "POSIX": (("POSIX_OPENS",), ("POSIX_READS",), ("POSIX_WRITES",), ("POSIX_BYTES_READ",),
              ("POSIX_BYTES_WRITTEN",), ("POSIX_F_READ_TIME",), ("POSIX_F_WRITE_TIME",),
              ("POSIX_F_META_TIME",)),
    "MPI-IO": (("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"),
               ("MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS", "MPIIO_NB_READS"),
               ("MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES",
                "MPIIO_NB_WRITES"),
               ("MPIIO_BYTES_READ",), ("MPIIO_BYTES_WRITTEN",), ("MPIIO_F_READ_TIME",),
               ("MPIIO_F_WRITE_TIME",), ("MPIIO_F_META_TIME",)),
    "STDIO": (("STDIO_OPENS", "STDIO_FDOPENS"), ("STDIO_READS",), ("STDIO_WRITES",),
              ("STDIO_BYTES_READ",), ("STDIO_BYTES_WRITTEN",), ("STDIO_F_READ_TIME",),
              ("STDIO_F_WRITE_TIME",), ("STDIO_F_META_TIME",)),
}
_FILE_COLS = ("opens", "reads", "writes", "bytes_read", "bytes_written", "read_time_s",
              "write_time_s", "meta_time_s")
# Darshan's access-size histogram buckets (lower edges, bytes; the last is open-ended)
SIZE_BUCKETS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
                "10M_100M", "100M_1G", "1G_PLUS")
# per module: the access-pattern counters (null where a module or a version lacks them)
_PATTERN: dict[str, dict[str, tuple[str, ...]]] = {
    "POSIX": {"seq_reads": ("POSIX_SEQ_READS",), "seq_writes": ("POSIX_SEQ_WRITES",),
              "rw_switches": ("POSIX_RW_SWITCHES",),
              "file_not_aligned": ("POSIX_FILE_NOT_ALIGNED",),
              "mem_not_aligned": ("POSIX_MEM_NOT_ALIGNED",)},
    "MPI-IO": {"coll_ops": ("MPIIO_COLL_READS", "MPIIO_COLL_WRITES"),
               "rw_switches": ("MPIIO_RW_SWITCHES",)},
}
_PATTERN_COLS = ("seq_reads", "seq_writes", "rw_switches", "file_not_aligned",
                 "mem_not_aligned", "coll_ops")
_HIST_PREFIX = {"POSIX": "POSIX_SIZE_{}_", "MPI-IO": "MPIIO_SIZE_{}_AGG_"}


class DarshanLogError(Exception):
    """A log that PyDarshan cannot read; the message is the quarantine reason."""


def user_from_name(path: str | Path) -> str | None:
    """The user of a repository log name `<user>_<exe>_id<jobid>_...darshan`, else None."""
    m = REPO_NAME.match(Path(path).name)
    return m.group("user") if m else None


def _utc(sec: int, nsec: int = 0) -> dt.datetime:
    return _EPOCH + dt.timedelta(seconds=int(sec), microseconds=int(nsec) // 1000)


def _mount_of(name: str, mounts: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """The longest mount point that prefixes a file name, with its fs type."""
    best: tuple[str | None, str | None] = (None, None)
    for point, fs in mounts:
        if (name == point or name.startswith(point.rstrip("/") + "/")) and \
                len(point) > len(best[0] or ""):
            best = (point, fs)
    return best


def _lustre(report) -> dict[int, tuple[int | None, int | None, list[int]]]:
    """record id -> (stripe size, stripe count, OST list) from the LUSTRE module."""
    from darshan.backend.cffi_backend import counter_names

    if "LUSTRE" not in report.modules:
        return {}
    report.mod_read_all_lustre_records(warnings=False)
    names = counter_names("LUSTRE_COMP")
    out: dict[int, tuple[int | None, int | None, list[int]]] = {}
    for rec in report.records.get("LUSTRE", []):
        size = count = None
        osts: list[int] = []
        for i, comp in enumerate(rec["components"]):
            c = dict(zip(names, (int(v) for v in comp["counters"]), strict=False))
            if i == 0:
                size, count = c.get("LUSTRE_COMP_STRIPE_SIZE"), c.get("LUSTRE_COMP_STRIPE_COUNT")
            osts += [int(o) for o in comp["ost_ids"] if int(o) >= 0 and int(o) not in osts]
        rid = int(rec["id"])
        if rid in out:   # one record per rank: keep the first striping, union the OSTs
            size, count, seen = out[rid][0], out[rid][1], out[rid][2]
            osts = seen + [o for o in osts if o not in seen]
        out[rid] = (size, count, osts)
    return out


def _module_rows(report, mod: str) -> list[dict[str, Any]]:
    """One dict per (record, rank) of a file module with the counters this table keeps."""
    report.mod_read_all_records(mod, warnings=False)
    recs = report.records.get(mod)
    if recs is None or len(recs) == 0:
        if int(report.modules[mod].get("len") or 0) > 0:
            raise DarshanLogError(f"corrupt Darshan log: module {mod} has data but no "
                                  "readable record")
        return []
    df = recs.to_df()
    c, f = df["counters"], df["fcounters"]
    rows = []
    spec = _COUNTERS[mod]
    for i in range(len(c)):
        row = {"record_id": int(c["id"].iat[i]), "rank": int(c["rank"].iat[i])}
        for col, names in zip(_FILE_COLS, spec, strict=True):
            src = f if col.endswith("_s") else c
            vals = [src[n].iat[i] for n in names if n in src.columns]
            vals = [v for v in vals if v >= 0]   # -1: counter not kept by this Darshan
            row[col] = (float(sum(vals)) if col.endswith("_s") else int(sum(vals)))
        row.update(_pattern(c, i, mod))
        rows.append(row)
    return rows


def _pattern(c, i: int, mod: str) -> dict[str, Any]:
    """Row i's access-pattern counters and size histograms (None: not kept)."""
    out: dict[str, Any] = dict.fromkeys(_PATTERN_COLS)
    for col, names in _PATTERN.get(mod, {}).items():
        vals = [int(c[n].iat[i]) for n in names if n in c.columns]
        if vals and all(v >= 0 for v in vals):
            out[col] = sum(vals)
    for kind in ("read", "write"):
        prefix = _HIST_PREFIX.get(mod, "").format(kind.upper())
        names = [prefix + b for b in SIZE_BUCKETS]
        hist = None
        if prefix and all(n in c.columns for n in names):
            hist = [max(int(c[n].iat[i]), 0) for n in names]
        out[f"{kind}_size_hist"] = hist
    return out


def _perf(report) -> tuple[float | None, float | None]:
    """(slowest rank's I/O time s, agg_perf_by_slowest MiB/s) as `darshan-parser --perf`
    computes them (darshan-util's accumulator) for POSIX, else STDIO when there is no POSIX."""
    from darshan.backend.cffi_backend import accumulate_records

    for mod in ("POSIX", "STDIO"):
        recs = report.records.get(mod)
        if recs is not None and len(recs) > 0:
            dm = accumulate_records(recs.to_df(), mod, report.metadata["job"]["nprocs"])
            return float(dm.derived_metrics.agg_time_by_slowest), \
                float(dm.derived_metrics.agg_perf_by_slowest)
    return None, None


def parse_log(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read one log in this process: (job dict, file row dicts), both without `date`.

    Raises DarshanLogError with a one-line reason for a log that cannot be read. A corrupt
    log may abort the interpreter inside darshan-util: `parse_logs` isolates this call.
    """
    import darshan

    p = Path(path)
    if not p.is_file():
        raise DarshanLogError("no such file")
    if p.stat().st_size == 0:
        raise DarshanLogError("empty file (0 bytes): not a Darshan log")
    try:
        report = darshan.DarshanReport(str(p), read_all=False)
    except Exception as exc:  # RuntimeError from darshan-util and the like
        raise DarshanLogError(f"not a readable Darshan log: {_one_line(exc)}") from None
    try:
        _check_size(p, report.modules)
        return _read(report, p)
    except DarshanLogError:
        raise
    except Exception as exc:
        raise DarshanLogError(f"unreadable Darshan records: {_one_line(exc)}") from None
    finally:
        try:
            report.cleanup()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


def _check_size(p: Path, modules: dict) -> None:
    """Refuse a truncated log: the header's name map plus the module regions must fit in
    the file. The name map is at bytes 24-40 of a 3.00-3.21 header, 32-48 from 3.41 on."""
    import struct

    with open(p, "rb") as fh:
        head = fh.read(48)
    if len(head) < 48:
        raise DarshanLogError(f"truncated Darshan log: {len(head)} bytes, no full header")
    try:
        version = tuple(int(x) for x in head[:8].rstrip(b"\0").decode().split("."))
    except ValueError:
        return
    at = 32 if version >= (3, 41) else 24
    for order in "<>":
        magic, = struct.unpack(order + "q", head[8:16])
        if magic == DARSHAN_MAGIC:
            off, length = struct.unpack(order + "QQ", head[at:at + 16])
            need = off + length + sum(int(m.get("len") or 0) for m in modules.values())
            size = p.stat().st_size
            if off > 0 and need > size:
                raise DarshanLogError(f"truncated Darshan log: its header announces {need} "
                                      f"bytes, the file has {size}")
            return


def _one_line(exc: BaseException) -> str:
    s = str(exc).strip().splitlines()
    return (s[0] if s else type(exc).__name__)[:300]


def _read(report, p: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    job_md, meta = report.metadata["job"], report.metadata["job"].get("metadata") or {}
    job_id = str(job_md["jobid"])
    lustre = _lustre(report)
    mounts = [(str(m), str(t)) for m, t in (report.mounts or [])]
    files: list[dict[str, Any]] = []
    for mod in MODULES:
        if mod not in report.modules:
            continue
        for r in _module_rows(report, mod):
            name = report.name_records.get(r["record_id"])
            mount, fs = _mount_of(name, mounts) if name else (None, None)
            size, count, osts = lustre.get(r["record_id"], (None, None, None))
            files.append({"log_path": str(p), "job_id": job_id, "module": mod, **r,
                          "record_id": str(r["record_id"]), "file_name": name, "mount": mount,
                          "fs_type": fs, "stripe_size": size, "stripe_count": count,
                          "ost_ids": osts})
    cmdline = (report.metadata.get("exe") or "").strip()
    slowest, perf = _perf(report)
    posix = [f for f in files if f["module"] == "POSIX"]
    bytes_mods = [f for f in files if f["module"] in ("POSIX", "STDIO")]
    start = _utc(job_md["start_time_sec"], job_md.get("start_time_nsec") or 0)
    end = _utc(job_md["end_time_sec"], job_md.get("end_time_nsec") or 0)
    job = {
        "log_path": str(p), "job_id": job_id, "uid": int(job_md["uid"]),
        "user": user_from_name(p) or str(job_md["uid"]),
        "exe": cmdline.split()[0] if cmdline else None, "cmdline": cmdline or None,
        "nprocs": int(job_md["nprocs"]), "start": start, "end": end,
        "runtime_s": float(job_md.get("run_time") or (end - start).total_seconds()),
        "log_version": str(job_md.get("log_ver")) if job_md.get("log_ver") else None,
        "lib_version": meta.get("lib_ver"), "hostname": meta.get("hostname"),
        "modules": list(report.modules),
        "partial": any(bool(m.get("partial_flag")) for m in report.modules.values()),
        "n_files": len({f["record_id"] for f in files}),
        "mounts": sorted({f["mount"] for f in files if f["mount"]}),
        "bytes_read": sum(f["bytes_read"] for f in bytes_mods),
        "bytes_written": sum(f["bytes_written"] for f in bytes_mods),
        "posix_opens": sum(f["opens"] for f in posix),
        "posix_reads": sum(f["reads"] for f in posix),
        "posix_writes": sum(f["writes"] for f in posix),
        "posix_stats": _posix_stats(report),
        "read_time_s": float(sum(f["read_time_s"] for f in bytes_mods)),
        "write_time_s": float(sum(f["write_time_s"] for f in bytes_mods)),
        "meta_time_s": float(sum(f["meta_time_s"] for f in bytes_mods)),
        "io_time_slowest_s": slowest, "agg_perf_mibs": perf,
    }
    return job, files


def _posix_stats(report) -> int:
    recs = report.records.get("POSIX")
    if recs is None or len(recs) == 0:
        return 0
    c = recs.to_df()["counters"]
    return int(c["POSIX_STATS"].clip(lower=0).sum()) if "POSIX_STATS" in c.columns else 0


def read_log(path: str | Path):
    """Library API: (job dict, pandas DataFrame of the file rows) of one log, in-process.

    Raises DarshanLogError (with the reason) for an unreadable log.
    """
    import pandas as pd

    job, files = parse_log(path)
    cols = [f.name for f in schema_of("darshan_file").fields if f.name != "date"]
    df = pd.DataFrame(files, columns=cols)
    for c in ("rank", "stripe_size", "stripe_count"):
        df[c] = df[c].astype("Int64")
    return job, df


# isolated parsing ---------------------------------------------------------------------------

def _safe_parse(path: str) -> tuple[str, Any]:
    """Worker side: ('ok', (job, files)) or ('bad', reason)."""
    try:
        return "ok", parse_log(path)
    except DarshanLogError as exc:
        return "bad", str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure is this log's, not the ingest's
        return "bad", f"unreadable Darshan log: {_one_line(exc)}"


def _serve() -> None:
    """Worker loop (`python -c 'from lassi.ingest.darshan import _serve; _serve()'`): a path per
    stdin line -> a length-prefixed pickle of `_safe_parse(path)` on the original stdout.

    It writes READY once PyDarshan is imported, so that a log's timeout counts the read of
    the log, not the interpreter's start. Whatever darshan-util prints goes to stderr, so
    it cannot break the protocol."""
    import os
    import pickle

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                  # from here on, whatever is printed goes to stderr
    import darshan  # noqa: F401 - loaded before READY: the first log's clock starts after it
    from darshan.backend import cffi_backend  # noqa: F401

    out.write(READY)
    out.flush()
    for line in sys.stdin:
        blob = pickle.dumps(_safe_parse(line.rstrip("\n")), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(len(blob).to_bytes(8, "little") + blob)
        out.flush()


_CLEAN_FAILURES = ("no such file", "empty file")   # refused before darshan-util opened it
TIMEOUT_S = 300.0     # one log; $LASSI_DARSHAN_TIMEOUT overrides (a hung read of a dead mount)
START_S = 120.0       # a new worker's start (Python + PyDarshan), on a loaded node
READY = b"LASSI-DARSHAN-READY\n"


def timeout_s() -> float:
    """Seconds one log may take in the worker: $LASSI_DARSHAN_TIMEOUT, else TIMEOUT_S."""
    import os

    raw = os.environ.get("LASSI_DARSHAN_TIMEOUT", "")
    try:
        value = float(raw) if raw else TIMEOUT_S
    except ValueError:
        raise IngestError(f"LASSI_DARSHAN_TIMEOUT must be seconds, got {raw!r}") from None
    return value if value > 0 else TIMEOUT_S


class _TimedOut(Exception):
    pass


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
    """n bytes from a pipe, or fewer at its end; _TimedOut past `deadline` (monotonic)."""
    import os
    import select
    import time

    out = bytearray()
    while len(out) < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise _TimedOut
        chunk = os.read(fd, n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _await_ready(fd: int, deadline: float) -> bool:
    """Read a new worker's output up to READY: True, or False when it ended first. Whatever
    the interpreter printed before `_serve` took over stdout (a site's sitecustomize, say)
    comes first and is skipped."""
    seen = b""
    while not seen.endswith(READY):
        byte = _read_exact(fd, 1, deadline)
        if not byte:
            return False
        seen = (seen + byte)[-len(READY):]
    return True


def _stop(proc) -> int:
    """Kill a worker at once, reap it and close its pipes; its exit status."""
    proc.kill()
    code = proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        try:
            pipe.close()
        except OSError:
            pass
    return code


class IsolatedReader:
    """Parse logs in one worker process, restarted after a log that kills it or that
    darshan-util failed to read (a corrupt log can damage the worker's heap: the next log
    gets a fresh process), or that it did not finish within `timeout_s` (a darshan-util
    call that hangs, e.g. on a dead file system mount: the worker is killed)."""

    def __init__(self, timeout_s: float = TIMEOUT_S) -> None:
        self._proc = None
        self.timeout_s = timeout_s

    def _worker(self):
        if self._proc is None or self._proc.poll() is not None:
            import subprocess
            import time

            proc = subprocess.Popen(
                [sys.executable, "-c", "from lassi.ingest.darshan import _serve; _serve()"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=False, bufsize=0)
            timed_out = False
            try:
                ready = _await_ready(proc.stdout.fileno(), time.monotonic() + START_S)
            except _TimedOut:
                ready, timed_out = False, True
            if not ready:
                code = _stop(proc)
                why = (f"it was not ready within {START_S:g} s" if timed_out
                       else f"it exited with code {code}")
                raise IngestError(f"the Darshan reader process ({sys.executable}) did not start:"
                                  f" {why}; check that PyDarshan imports there")
            self._proc = proc
        return self._proc

    def parse(self, path: str) -> tuple[str, Any]:
        """('ok', (job, files)) or ('bad', reason); never raises for a bad log."""
        import pickle
        import time

        proc = self._worker()
        deadline = time.monotonic() + self.timeout_s
        try:
            proc.stdin.write(path.encode() + b"\n")
            proc.stdin.flush()
            fd = proc.stdout.fileno()
            head = _read_exact(fd, 8, deadline)
            if len(head) < 8:
                raise EOFError
            size = int.from_bytes(head, "little")
            blob = _read_exact(fd, size, deadline)
            if len(blob) < size:
                raise EOFError
            status, out = pickle.loads(blob)
            if status == "bad" and not out.startswith(_CLEAN_FAILURES):
                self.close()   # darshan-util failed half-way: its heap may be damaged
            return status, out
        except _TimedOut:
            self.kill()
            return "bad", (f"darshan-util did not finish reading the log within "
                           f"{self.timeout_s:g} s (worker killed; raise "
                           "$LASSI_DARSHAN_TIMEOUT if the log is just big)")
        except (EOFError, OSError, pickle.UnpicklingError):
            self.close()
            return "bad", "corrupt Darshan log: darshan-util aborted while reading it"

    def kill(self) -> None:
        """Kill the worker at once (it hangs)."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            _stop(proc)

    def close(self) -> None:
        """Stop the worker."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except Exception:  # noqa: BLE001 - a dead or stuck worker: make sure it ends
                proc.kill()
                proc.wait()

    def __enter__(self) -> IsolatedReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parse_logs(paths: Iterable[str | Path], date: dt.date | None = None, isolate: bool = True,
               timeout: float | None = None
               ) -> tuple[list[dict], list[dict], list[Quarantined], ParseStats]:
    """Parse logs: (job rows, file rows, quarantined logs, stats); rows carry `date` (the
    job's UTC start day). With `date`, jobs that started on another day are read but not
    kept (`extra['other_day']`). Partial logs are kept and counted in `extra['partial']`;
    logs whose worker hung past `timeout` seconds (default `timeout_s()`) are quarantined
    and counted in `extra['timed_out']`."""
    import darshan  # noqa: F401 - a missing PyDarshan fails the run, it does not quarantine

    stats = ParseStats(SOURCE)
    jobs: list[dict] = []
    files: list[dict] = []
    qs: list[Quarantined] = []
    reader = IsolatedReader(timeout or timeout_s()) if isolate else None
    try:
        for path in paths:
            path = str(path)
            stats.files += 1
            stats.lines_read += 1
            status, out = reader.parse(path) if reader else _safe_parse(path)
            if status == "bad":
                qs.append(Quarantined(SOURCE, path, 0, "", out))
                stats.lines_quarantined += 1
                if out.startswith("darshan-util did not finish"):
                    stats.extra["timed_out"] = stats.extra.get("timed_out", 0) + 1
                continue
            stats.lines_used += 1
            job, frows = out
            day = job["start"].date()
            if job["partial"]:
                stats.extra["partial"] = stats.extra.get("partial", 0) + 1
            if date is not None and day != date:
                stats.extra["other_day"] = stats.extra.get("other_day", 0) + 1
                continue
            jobs.append({**job, "date": day})
            files += [{**f, "date": day} for f in frows]
    finally:
        if reader:
            reader.close()
    stats.rows = len(jobs) + len(files)
    return jobs, files, qs, stats


# the ingest contract ----------------------------------------------------------------------

def log_files(inputs: list[str]) -> list[str]:
    """The logs to read: files given by name (whatever they are called) and, under a
    directory, every `*.darshan` file (READMEs and other files beside them are not logs)."""
    from lassi.core.textio import iter_files

    out = []
    for raw in inputs:
        if Path(raw).is_dir():
            out += [str(p) for p in iter_files([raw]) if p.name.endswith(".darshan")]
        else:
            out += [str(p) for p in iter_files([raw])]
    return out


def _tuples(table: str, rows: list[dict]) -> list[tuple]:
    names = schema_of(table).fieldNames()
    return [tuple(r.get(c) for c in names) for r in rows]


def read_inputs(site, inputs: list[str], date: dt.date | None, tz: str | None
                ) -> list[IngestResult]:
    """`lassi ingest --source darshan`: Darshan logs (files or directories) as
    `darshan_job`/`darshan_file` rows on the jobs' UTC start days, replacing the rows of
    the same logs (by file name) and keeping the others.

    `site` and `tz` are unused: Darshan records epoch times. With `date`, only the logs of
    jobs that started that UTC day give rows. A partial log is said on stderr.
    """
    del site, tz
    try:
        paths = log_files(inputs)
    except FileNotFoundError as exc:
        raise IngestError(str(exc)) from None
    if not paths:
        raise IngestError(f"no Darshan logs (*.darshan) under {' '.join(inputs)}")
    jobs, files, qs, stats = parse_logs(paths, date)
    for j in jobs:
        if j["partial"]:
            print(f"darshan: {j['log_path']}: partial log (Darshan ran out of memory for a "
                  "module); loaded with partial=true", file=sys.stderr)
    dates = sorted({j["date"] for j in jobs})
    tables = []
    if dates:
        logs = LogRows(tuple(sorted({Path(j["log_path"]).name for j in jobs})))
        tables = [TableRows("darshan_job", _tuples("darshan_job", jobs), dates, logs),
                  TableRows("darshan_file", _tuples("darshan_file", files), dates, logs)]
    return [IngestResult(stats, tables, qs)]


def ingest_inputs(spark, wh, site, inputs: list[str], date: dt.date | None,
                  tz: str | None) -> ParseStats:
    """Compatibility entry point (the table registry and older callers name it):
    `read_inputs` written by `lassi.ingest.writer` (tables and this source's quarantine rows
    of `date`, today when None; no ingest_log row). Use
    `lassi.ingest.runner.ingest_source(..., "darshan", ...)`."""
    from lassi.ingest.writer import write_ingest

    del spark
    return write_ingest(wh, SOURCE, read_inputs(site, inputs, date, tz), date, log=False)
