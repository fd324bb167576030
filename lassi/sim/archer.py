"""Raw files of a Cray/Lustre site: export-stats captures, PBS accounting, ALPS apsys.

Captures follow FORMATS.md §1: one file per server per day,
`lustre/<server>/<YYYY-MM-DD>.txt`, holding every `window_s` seconds one capture of
`lctl get_param obdfilter.*.stats obdfilter.*.exports.*.stats mdt.*.md_stats
mdt.*.exports.*.stats`. Counters are cumulative. Like a delta-suppressing collector, a
capture lists every target's own stats but only the exports whose counters changed since
the previous capture; the first capture of each file lists every export with a non-zero
counter (so a reader knows every series' starting value). Lustre omits zero counters.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from lassi.core.config import Site
from lassi.core.hostlist_fmt import compress_ranges
from lassi.sim.counters import COUNTERS, DATA, IDX, LUSTRE_NAME, MDS, OSS_OTHER, N
from lassi.sim.rawfiles import DayFiles, day_of
from lassi.sim.workload import Run

OSS_COLS = DATA + OSS_OTHER
LUSTRE_STATS = ("exports", "jobstats", "both")   # what the simulated OSSes and MDSes print
BASE_JOB = 4567890               # PBS job id of run k: f"{BASE_JOB + k}.sdb"
JOB_CLEANUP_S = 600              # Lustre's job_cleanup_interval: idle entries are dropped
# job_stats prints these OST ops (no preprw/commitrw/disconnect; set_info, not _async)
JOB_OSS_OPS = {"get_info": "get_info", "set_info_async": "set_info", "destroy": "destroy",
               "punch": "punch", "ost_sync": "sync"}
_OSS_IDX = [IDX[c] for c in OSS_COLS]
_MDS_IDX = [IDX[c] for c in MDS]


def split_int(v: np.ndarray, k: int) -> np.ndarray:
    """Split an integer vector into k integer parts that sum back exactly (k × len(v))."""
    base, rem = np.divmod(v, k)
    return base[None, :] + (np.arange(k)[:, None] < rem[None, :])


class LustreCaptureWriter:
    """Engine sink: accumulate per-run window totals, distribute to exports, write captures."""

    def __init__(self, site: Site, out: Path, rng: np.random.Generator, gz: bool = False,
                 reset_at: float | None = None, dense: bool = False,
                 lustre_stats: str = "exports") -> None:
        if lustre_stats not in LUSTRE_STATS:
            raise ValueError(f"lustre_stats: one of {', '.join(LUSTRE_STATS)}")
        self.site = site
        self.write_exports = lustre_stats in ("exports", "both")
        self.write_jobs = lustre_stats in ("jobstats", "both")
        # job_stats entries: (target, job id) -> [counters, start_time, last I/O time,
        # [read, write] service µs]
        self.jobs: dict[tuple[str, str], list] = {}
        self.mult: np.ndarray | None = None   # capacity factors (faults) of the window flushed
        self.window = site.window_s
        self.files = DayFiles(Path(out) / "lustre", gz=gz)
        self.rng = rng
        self.state: dict[tuple[str, str], np.ndarray] = {}
        self.sizes: dict[tuple[str, str], dict[str, list[int]]] = {}
        self.changed: set[tuple[str, str]] = set()
        self.pending: dict[int, np.ndarray] = {}
        self.runs: dict[int, Run] = {}
        self.next_capture = 0.0
        self.last_day = ""
        self.reset_at = reset_at
        self.resets: list[dict] = []
        self.baseline: dict[tuple[str, str], np.ndarray] = {}
        self.started: dict[tuple[str, str], float] = {}   # when each export's stats began
        self.now = 0.0
        self.totals: dict[str, np.ndarray] = {}
        self.jitter = {s: float(rng.uniform(0.001, 0.9)) for f in site.filesystems
                       for s in f.osses + [f.mds]}
        # dense: a random stream of its own (seeded once from the shared one)
        self.md_rng = np.random.default_rng(int(rng.integers(2**62))) if dense else None
        self.engine = None
        self.waiting: list[Run] = []     # dense: runs not started yet (by submit time)
        self.live: list[Run] = []        # dense: runs started and not known to have ended

    # engine sink protocol -------------------------------------------------------------------
    def begin(self, engine, start: float) -> None:
        self.engine = engine
        self.waiting = sorted(engine.runs, key=lambda r: r.submit)
        self.next_capture = start
        self.now = start - 30 * 86400   # the baseline exports connected a month earlier
        self._seed_baseline()

    def step(self, t: float, runs: list[Run], counts: np.ndarray) -> None:
        while t >= self.next_capture:
            self._flush_window()
            self._capture(self.next_capture)
            self.next_capture += self.window
        for run, vec in zip(runs, counts, strict=True):
            if not vec.any():
                continue
            self.runs[run.run_no] = run
            acc = self.pending.get(run.run_no)
            if acc is None:
                self.pending[run.run_no] = vec.copy()
            else:
                acc += vec

    def end(self, t: float) -> None:
        while True:
            self._flush_window()
            self._capture(self.next_capture)
            self.next_capture += self.window
            if self.next_capture - self.window >= t:
                break
        self.files.close()

    # internals ------------------------------------------------------------------------------
    def _seed_baseline(self) -> None:
        """Counters already non-zero before the simulated period (a live system)."""
        nodes = self.site.compute_nodes
        for i in self.rng.choice(len(nodes), size=max(1, len(nodes) // 5), replace=False):
            fs = self.site.filesystems[int(self.rng.integers(0, len(self.site.filesystems)))]
            nid = self.site.node_nid(nodes[int(i)])
            for o in self.rng.choice(len(fs.osts), size=min(2, len(fs.osts)), replace=False):
                v = np.zeros(N, dtype=np.int64)
                ops = int(self.rng.integers(1000, 10**7))
                v[IDX["write_ops"]], v[IDX["write_bytes"]] = ops, ops * 1048576
                v[IDX["preprw"]] = v[IDX["commitrw"]] = ops
                self.state[(fs.osts[int(o)], nid)] = v
                self.started[(fs.osts[int(o)], nid)] = self.now
                self.sizes[(fs.osts[int(o)], nid)] = {"write": [1048576, 1048576]}
                self.baseline[(fs.osts[int(o)], nid)] = v.copy()
            v = np.zeros(N, dtype=np.int64)
            v[IDX["open"]] = v[IDX["close"]] = int(self.rng.integers(10, 10**6))
            self.state[(fs.mdts[0], nid)] = v
            self.started[(fs.mdts[0], nid)] = self.now
            self.baseline[(fs.mdts[0], nid)] = v.copy()

    def _flush_window(self) -> None:
        """Distribute every run's totals of the ended window over its nodes and targets."""
        if self.md_rng is not None:
            self._background_md(self.next_capture - self.window, self.next_capture)
        if self.write_jobs and self.pending:
            self.mult = self.engine.capacity(self.next_capture - self.window / 2)
        for run_no, vec in self.pending.items():
            run = self.runs[run_no]
            fs = self.site.fs(run.app.fs)
            nodes = run.io_nodes
            size = run.app.archetype.reqsize
            per_node = self._split_requests(vec, len(nodes), size)
            for node, nv in zip(nodes, per_node, strict=True):
                nid = self.site.node_nid(self.site.compute_nodes[node])
                osts = run.osts[node]
                oss_part = np.zeros(N, dtype=np.int64)
                oss_part[_OSS_IDX] = nv[_OSS_IDX]
                for o, ov in zip(osts, self._split_requests(oss_part, len(osts), size),
                                 strict=True):
                    if ov.any():
                        self._add((fs.osts[o], nid), ov, size, run)
                md = np.zeros(N, dtype=np.int64)
                md[_MDS_IDX] = nv[_MDS_IDX]
                if md.any():
                    self._add((fs.mdts[0], nid), md, size, run)
        self.pending.clear()

    def _background_md(self, w0: float, w1: float) -> None:
        """Dense mode: every node of every run live through all of [w0, w1) does a little
        metadata on its filesystem's MDT; the operations join the run's truth (hour of w0).

        Only runs covering the whole window take part, so a node handed from one job to
        the next within a window never mixes two jobs' background operations.
        """
        started = [r for r in self.waiting if r.start is not None]
        if started:
            self.waiting = [r for r in self.waiting if r.start is None]
            self.live.extend(started)
        self.live = [r for r in self.live if r.end is None or r.end > w0]
        hour = int(w0 // 3600) * 3600
        rng = self.md_rng
        for run in self.live:
            if run.start > w0 or (run.end is not None and run.end < w1):
                continue
            k = len(run.nodes)
            md = np.zeros((k, N), dtype=np.int64)
            md[:, IDX["getattr"]] = rng.integers(1, 41, k)
            md[:, IDX["open"]] = md[:, IDX["close"]] = rng.integers(0, 5, k)
            md[:, IDX["statfs"]] = rng.random(k) < 0.1
            mdt = self.site.fs(run.app.fs).mdts[0]
            for node, v in zip(run.nodes, md, strict=True):
                nid = self.site.node_nid(self.site.compute_nodes[node])
                self._add((mdt, nid), v, 0, run)
            tr = self.engine.truth[run.run_no]
            tot = md.sum(axis=0)
            tr.totals += tot
            if hour not in tr.hours:
                tr.hours[hour] = np.zeros(N, dtype=np.int64)
            tr.hours[hour] += tot

    @staticmethod
    def _split_requests(vec: np.ndarray, k: int, size: int) -> np.ndarray:
        """Split like `split_int`, keeping bytes = requests × size in every part."""
        parts = split_int(vec, k)
        for kind in ("read", "write"):
            parts[:, IDX[f"{kind}_bytes"]] = parts[:, IDX[f"{kind}_ops"]] * size
        return parts

    def _add(self, key: tuple[str, str], v: np.ndarray, size: int, run: Run) -> None:
        if self.write_jobs:
            self._add_job((key[0], job_id_of(run)), v, size)
        if key[0] in self.totals:
            self.totals[key[0]] += v
        cur = self.state.get(key)
        if cur is None:
            self.state[key] = v.copy()
            self.started[key] = self.now
        else:
            cur += v
        sz = self.sizes.setdefault(key, {})
        for kind in ("read", "write"):
            if v[IDX[f"{kind}_ops"]]:
                mm = sz.setdefault(kind, [size, size])
                mm[0], mm[1] = min(mm[0], size), max(mm[1], size)
        self.changed.add(key)

    def _add_job(self, key: tuple[str, str], v: np.ndarray, size: int) -> None:
        """A job's I/O on a target: its job_stats entry (a new one after a cleanup), with the
        OST's service time of its requests (`_service_us`)."""
        entry = self.jobs.get(key)
        if entry is None:
            entry = self.jobs[key] = [np.zeros_like(v), self.now, self.now, np.zeros(2)]
        entry[0] += v
        entry[2] = self.now
        if v[IDX["read_ops"]] or v[IDX["write_ops"]]:
            entry[3] += self._service_us(key[0], size) * np.array(
                [v[IDX["read_ops"]], v[IDX["write_ops"]]], dtype=float)

    def _service_us(self, target: str, size: int) -> float:
        """µs an OST spends on one request of `size` bytes in the window being flushed: the
        size at the OST's peak bandwidth, divided by its capacity factor (a slow OST's
        fault), as its job_stats `read`/`write` counters sum it."""
        res = self.engine.res
        i = res.index[target]
        return 1e6 * size / (res.bw[i] * float(self.mult[i]))

    def _job_stats(self, target: str, ts: float, mdt: bool) -> str:
        """`<family>.<target>.job_stats=` in the 2.14 YAML layout: the target's entries
        with I/O in the last job_cleanup_interval (older ones are cleaned up first)."""
        for key in [k for k, e in self.jobs.items()
                    if k[0] == target and ts - e[2] > JOB_CLEANUP_S]:
            del self.jobs[key]
        family = "mdt" if mdt else "obdfilter"
        lines = [f"{family}.{target}.job_stats=", "job_stats:"]
        for (_, job), (v, started, _last, us) in sorted(
                ((k, e) for k, e in self.jobs.items() if k[0] == target), key=lambda ke: ke[0]):
            lines += [f"- job_id:          {job}", f"  snapshot_time:   {ts:.9f} secs.nsecs",
                      f"  start_time:      {started:.9f} secs.nsecs",
                      f"  elapsed_time:    {ts - started:.9f} secs.nsecs"]
            if mdt:
                ops = [(LUSTRE_NAME[c], int(v[IDX[c]]), 0) for c in MDS]
            else:
                for kind in ("read", "write"):
                    n, b = int(v[IDX[f"{kind}_ops"]]), int(v[IDX[f"{kind}_bytes"]])
                    lines.append(f"  {kind}_bytes:{'':<{10 - len(kind)}}{{ samples: {n:>11}, "
                                 f"unit: bytes, min: 0, max: 0, sum: {b:>16}, sumsq: 0, "
                                 "hist: { } }")
                ops = [(kind, int(v[IDX[f"{kind}_ops"]]), int(round(t)))
                       for kind, t in zip(("read", "write"), us, strict=True)]
                ops += [(name, int(v[IDX[c]]), 0) for c, name in JOB_OSS_OPS.items()]
            lines += [f"  {name + ':':<17}{{ samples: {n:>11}, unit: usecs, min: 0, max: 0, "
                      f"sum: {t:>16}, sumsq: 0 }}" for name, n, t in ops]
        return "\n".join(lines) + "\n"

    def _capture(self, t: float) -> None:
        self.now = t
        day = day_of(t)
        full = day != self.last_day
        self.last_day = day
        by_target: dict[str, list[str]] = defaultdict(list)
        keys = self.state.keys() if full else self.changed
        for target, nid in keys:
            by_target[target].append(nid)
        for fs in self.site.filesystems:
            for oss in fs.osses:
                fh = self.files.get(oss, day)
                ts = t + self.jitter[oss]
                for ost in (o for o in fs.osts if fs.oss_of[o] == oss):
                    fh.write(self._block(f"obdfilter.{ost}.stats", ts, self._total(ost), OSS_COLS,
                                         {}))
                    if self.write_jobs:
                        fh.write(self._job_stats(ost, ts, mdt=False))
                    if not self.write_exports:
                        continue
                    for nid in sorted(by_target.get(ost, ())):
                        fh.write(self._block(f"obdfilter.{ost}.exports.{nid}.stats", ts,
                                             self.state[(ost, nid)], OSS_COLS,
                                             self.sizes.get((ost, nid), {}),
                                             self.started[(ost, nid)]))
            fh = self.files.get(fs.mds, day)
            ts = t + self.jitter[fs.mds]
            for mdt in fs.mdts:
                fh.write(self._block(f"mdt.{mdt}.md_stats", ts, self._total(mdt), MDS, {}))
                if self.write_jobs:
                    fh.write(self._job_stats(mdt, ts, mdt=True))
                if not self.write_exports:
                    continue
                for nid in sorted(by_target.get(mdt, ())):
                    fh.write(self._block(f"mdt.{mdt}.exports.{nid}.stats", ts,
                                         self.state[(mdt, nid)], MDS, {},
                                         self.started[(mdt, nid)]))
        self.changed.clear()
        if self.reset_at is not None and t >= self.reset_at:
            self._reset_one(t)
            self.reset_at = None

    def _total(self, target: str) -> np.ndarray:
        """Whole-target counters: the sum over its exports, kept up to date by `_add`."""
        tot = self.totals.get(target)
        if tot is None:
            tot = np.zeros(N, dtype=np.int64)
            for (tg, _nid), v in self.state.items():
                if tg == target:
                    tot += v
            self.totals[target] = tot
        return tot

    def _reset_one(self, t: float) -> None:
        """Clear one busy export right after a capture (a client reconnect)."""
        oss_keys = sorted(k for k in self.state if "-OST" in k[0] and k not in self.baseline)
        if not oss_keys:
            return
        key = oss_keys[int(self.rng.integers(0, len(oss_keys)))]
        self.state[key] = np.zeros(N, dtype=np.int64)
        self.started[key] = t + 0.5
        self.totals.pop(key[0], None)   # recomputed at the next capture
        self.resets.append({"target": key[0], "nid": key[1], "after_capture": t})

    @staticmethod
    def _block(param: str, ts: float, v: np.ndarray, cols: list[str],
               sizes: dict[str, list[int]], started: float | None = None) -> str:
        lines = [f"{param}=", f"snapshot_time             {ts:.6f} secs.usecs"]
        if started is not None:   # Lustre >= 2.12 prints when the counters (re)started
            lines.append(f"start_time                {started:.6f} secs.usecs")
            lines.append(f"elapsed_time              {ts - started:.6f} secs.usecs")
        seen = set()
        for c in cols:
            name = LUSTRE_NAME[c]
            if c.endswith("_bytes") or name in seen:
                continue
            seen.add(name)
            if c in ("read_ops", "write_ops"):
                kind = c[:-4]
                n = int(v[IDX[c]])
                if n:
                    lo, hi = sizes.get(kind, [0, 0])
                    lines.append(f"{kind}_bytes{'':<{26 - len(kind) - 6}}{n} samples [bytes] "
                                 f"{lo} {hi} {int(v[IDX[kind + '_bytes']])}")
                continue
            n = int(v[IDX[c]])
            if n:
                lines.append(f"{name:<26}{n} samples [reqs]")
        return "\n".join(lines) + "\n"


# --- scheduler records ----------------------------------------------------------------------


def _local(t: float, tz: str) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, ZoneInfo(tz))


def job_id_of(run: Run, base_job: int = BASE_JOB) -> str:
    """The PBS job id of a simulated run (the job_stats id with jobid_var=PBS_JOBID)."""
    return f"{base_job + run.run_no}.sdb"


def write_scheduler(site: Site, runs: list[Run], out: Path, base_job: int = BASE_JOB,
                    base_apid: int = 28374628) -> None:
    """PBS accounting (S and E records, local time) and ALPS apsys Starting/Finishing lines."""
    pbs_tz, alps_tz = site.tz("pbs"), site.tz("alps")
    pbs_lines: dict[str, list[tuple[float, str]]] = defaultdict(list)
    alps_lines: dict[str, list[tuple[float, str]]] = defaultdict(list)
    ppn = int(site.data["compute"]["procs_per_node"])
    first = int(site.data["compute"].get("first_nid", 0))
    for r in runs:
        r.job_id = job_id_of(r, base_job)
        r.app_id = str(base_apid + r.run_no)
        names = [site.compute_nodes[n] for n in r.nodes]
        jstart, jend = r.start - 7.0, r.end + 4.0
        exec_host = "+".join(f"{n}/0*{ppn}" for n in names)
        common = (f"user={r.app.user} group={r.app.project} project={r.app.project} "
                  f"jobname={r.app.archetype.exe.split('.')[0]}_{r.app.app_no:03d} "
                  f"queue=standard ctime={int(r.submit)} qtime={int(r.submit)} "
                  f"etime={int(r.submit)} start={int(jstart)} exec_host={exec_host} "
                  f"Resource_List.nodect={len(names)} Resource_List.ncpus={len(names) * ppn}")
        for t, kind, extra in ((jstart, "S", ""),
                               (jend, "E", f" end={int(jend)} Exit_status=0 "
                                f"resources_used.walltime={_hms(jend - jstart)}")):
            stamp = _local(t, pbs_tz).strftime("%m/%d/%Y %H:%M:%S")
            day = _local(t, pbs_tz).strftime("%Y%m%d")
            pbs_lines[day].append((t, f"{stamp};{kind};{r.job_id};{common}{extra}"))
        nidlist = compress_ranges([first + n for n in r.nodes])
        head = "c0-0c0s0n1 apsys 12345 - -"
        user_id = r.app.user[1:]
        for t, text in ((r.start, f"apid={r.app_id}, Starting, user={user_id}, "
                         f"batch_id={r.job_id}, cmd_line=\"{r.app.command}\", "
                         f"num_nodes={len(names)}, node_list={nidlist}, "
                         f"cwd=\"/home/{r.app.project}/{r.app.project}/{r.app.user}/run\""),
                        (r.end, f"apid={r.app_id}, Finishing, user={user_id}, "
                         f"batch_id={r.job_id}, exit_code=0, exitcode_array=0, "
                         f"exitsignal_array=0")):
            stamp = _local(t, alps_tz).isoformat(timespec="microseconds")
            alps_lines[day_of(t)].append((t, f"{stamp} {head} {text}"))
    for day, lines in pbs_lines.items():
        _write_sorted(Path(out) / "pbs" / day, lines)
    for day, lines in alps_lines.items():
        _write_sorted(Path(out) / "alps" / f"{day}.log", lines)


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _write_sorted(path: Path, lines: list[tuple[float, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for _, text in sorted(lines, key=lambda x: x[0]):
            fh.write(text + "\n")


__all__ = ["LustreCaptureWriter", "write_scheduler", "split_int", "COUNTERS"]
