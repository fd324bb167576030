"""What TOKIO's connectors read, for a simulated site: LMT SQLite day files, `lfs df`, `lctl dl`.

`LmtWriter` is an engine sink (like `archer.LustreCaptureWriter`). It writes

* `lmt/<fs>/<YYYY-MM-DD>.sqlite3`: one SQLite copy of an LMT database per filesystem and UTC
  day, with the 12 tables (and column names) of pytokio's LMT copies, schema version 1.1.
  TIMESTAMP_INFO.TIMESTAMP is the LMT server's local time (`site.tz("lmt")`), TS_ID counts
  `step_s` steps since 2000-01-01 UTC, so it increases across days and simulate runs. A
  day file holds the samples at 00:00 UTC through the next 00:00 UTC *inclusive*, plus the
  sample before 00:00 (the file of the day before ends with both, same TS_IDs), so the
  00:00-to-00:00 delta of a file is exactly the day's traffic, a reader of one day has the
  delta of its first interval, and concatenated files dedup on the primary keys. A day
  where the simulation ends early stops at its last sample.
* `lfs-df/<YYYY-MM-DD>.txt` and `lctl-dl/<YYYY-MM-DD>.txt`: snapshots every 6 h (00, 06,
  12, 18 UTC) of `lfs df` and `lctl dl -t` on a client mounting every filesystem, each
  preceded by `BEGIN <epoch>` as in NERSC's cron-collected osts.txt / ost-map.txt.

OST read/write bytes are split over OSTs exactly as the export-stats writer splits them
(per capture window, per I/O node, per OST), so each OST's LMT delta over a window equals
its obdfilter export-stats delta; within a window they follow the filesystem's per-slot
progress. One OSS per simulated period (`failovers`) fails over to its partner: during the
fault its OSTs show the partner's NID in `lctl dl -t` and the OSS has no OSS_DATA rows.
The writer draws from its own random generator, so the other raw files do not change.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from lassi.core.config import Filesystem, Site
from lassi.sim.counters import IDX
from lassi.sim.rawfiles import day_of
from lassi.sim.workload import Run

SCHEMA_VERSION = "1.1"
TS_EPOCH = 946684800            # 2000-01-01 UTC: TS_ID = (t - TS_EPOCH) / step_s
SNAPSHOT_HOURS = (0, 6, 12, 18)
OST_KB = 34_359_738_368          # 32 TiB per OST (1K blocks)
MDT_KB = 2_255_453_580
OST_INODES = 40_000_000
LFS_RESERVED = 0.01              # `lfs df` Available excludes ~1 % reserved blocks
OBJECT_BYTES = 64 * 1024**2      # one OST object (inode) per 64 MiB written

# LMT's operation names (OPERATION_INFO, ids 1..81), as in LMT 1.1 databases
OPERATIONS = (
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getxattr",
    "setxattr", "iocontrol", "get_info", "set_info_async", "attach", "detach", "setup",
    "precleanup", "cleanup", "process_config", "postrecov", "add_conn", "del_conn", "connect",
    "reconnect", "disconnect", "statfs", "statfs_async", "packmd", "unpackmd", "checkmd",
    "preallocate", "precreate", "create", "destroy", "setattr", "setattr_async", "getattr",
    "getattr_async", "brw", "brw_async", "prep_async_page", "reget_short_lock",
    "release_short_lock", "queue_async_io", "queue_group_io", "trigger_group_io",
    "set_async_flags", "teardown_async_page", "merge_lvb", "adjust_kms", "punch", "sync",
    "migrate", "copy", "iterate", "preprw", "commitrw", "enqueue", "match", "change_cbdata",
    "cancel", "cancel_unused", "join_lru", "init_export", "destroy_export", "extent_calc",
    "llog_init", "llog_finish", "pin", "unpin", "import_event", "notify", "health_check",
    "quotacheck", "quotactl", "quota_adjust_quint", "ping", "register_page_removal_cb",
    "unregister_page_removal_cb", "register_lock_cancel_cb", "unregister_lock_cancel_cb",
)
# the ops an MDS sample carries (real LMT rows exist only for ops the MDS reports)
MDS_OPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getxattr",
           "setxattr", "statfs", "setattr", "getattr", "sync")
# simulator counter -> LMT op (samedir/crossdir_rename are breakdowns of rename: not summed)
SIM_TO_LMT = {"open": "open", "close": "close", "mknod": "mknod", "link": "link",
              "unlink": "unlink", "mkdir": "mkdir", "rmdir": "rmdir", "rename": "rename",
              "getattr": "getattr", "setattr": "setattr", "getxattr": "getxattr",
              "setxattr": "setxattr", "statfs": "statfs", "mds_sync": "sync"}
_SIM_MD = list(SIM_TO_LMT)
_MD_COLS = np.array([IDX[c] for c in _SIM_MD])
_OPS_COLS = np.array([IDX["read_ops"], IDX["write_ops"]])
_OP_ID = {name: i + 1 for i, name in enumerate(OPERATIONS)}
_MD_ORDER = np.array([_SIM_MD.index(next(c for c in _SIM_MD if SIM_TO_LMT[c] == o))
                      for o in MDS_OPS])   # simulator md columns in MDS_OPS order

OST_VARIABLES = (("READ_BYTES", "Bytes Read", 0, None, None),
                 ("WRITE_BYTES", "Bytes Written", 0, None, None),
                 ("READ_RATE", "Read Rate", 0, None, None),
                 ("WRITE_RATE", "Write Rate", 0, None, None),
                 ("KBYTES_FREE", "KB Free", 0, None, None),
                 ("KBYTES_USED", "KB Used", 0, None, None),
                 ("INODES_FREE", "Inodes Free", 0, None, None),
                 ("INODES_USED", "Inodes Used", 0, None, None),
                 ("PCT_CPU", "%CPU", 3, 90.0, 101.0),
                 ("PCT_KBYTES", "%KB", 3, 95.0, 100.0),
                 ("PCT_INODES", "%Inodes", 3, 95.0, 100.0))
MDS_VARIABLES = OST_VARIABLES[4:8] + OST_VARIABLES[8:]

# (table, columns, primary key); types follow LMT's MySQL schema loosely
TABLES = (
    ("FILESYSTEM_INFO", "FILESYSTEM_ID INTEGER, FILESYSTEM_NAME TEXT, "
     "FILESYSTEM_MOUNT_NAME TEXT, SCHEMA_VERSION TEXT", "FILESYSTEM_ID"),
    ("OSS_INFO", "OSS_ID INTEGER, FILESYSTEM_ID INTEGER, HOSTNAME TEXT, FAILOVERHOST TEXT",
     "OSS_ID, HOSTNAME"),
    ("OST_INFO", "OST_ID INTEGER, OSS_ID INTEGER, OST_NAME TEXT, HOSTNAME TEXT, "
     "OFFLINE INTEGER, DEVICE_NAME TEXT", "OST_ID"),
    ("MDS_INFO", "MDS_ID INTEGER, FILESYSTEM_ID INTEGER, MDS_NAME TEXT, HOSTNAME TEXT, "
     "DEVICE_NAME TEXT", "MDS_ID"),
    ("OPERATION_INFO", "OPERATION_ID INTEGER, OPERATION_NAME TEXT, UNITS TEXT", "OPERATION_ID"),
    ("TIMESTAMP_INFO", "TS_ID INTEGER, TIMESTAMP TEXT", "TS_ID"),
    ("OST_DATA", "OST_ID INTEGER, TS_ID INTEGER, READ_BYTES INTEGER, WRITE_BYTES INTEGER, "
     "PCT_CPU REAL, KBYTES_FREE INTEGER, KBYTES_USED INTEGER, INODES_FREE INTEGER, "
     "INODES_USED INTEGER", "OST_ID, TS_ID"),
    ("OSS_DATA", "OSS_ID INTEGER, TS_ID INTEGER, PCT_CPU REAL, PCT_MEMORY REAL",
     "OSS_ID, TS_ID"),
    ("MDS_DATA", "MDS_ID INTEGER, TS_ID INTEGER, PCT_CPU REAL, KBYTES_FREE INTEGER, "
     "KBYTES_USED INTEGER, INODES_FREE INTEGER, INODES_USED INTEGER", "MDS_ID, TS_ID"),
    ("MDS_OPS_DATA", "MDS_ID INTEGER, TS_ID INTEGER, OPERATION_ID INTEGER, SAMPLES INTEGER, "
     "SUM INTEGER, SUMSQUARES INTEGER", "MDS_ID, TS_ID, OPERATION_ID"),
    ("OST_VARIABLE_INFO", "VARIABLE_ID INTEGER, VARIABLE_NAME TEXT, VARIABLE_LABEL TEXT, "
     "THRESH_TYPE INTEGER, THRESH_VAL1 REAL, THRESH_VAL2 REAL", "VARIABLE_ID"),
    ("MDS_VARIABLE_INFO", "VARIABLE_ID INTEGER, VARIABLE_NAME TEXT, VARIABLE_LABEL TEXT, "
     "THRESH_TYPE INTEGER, THRESH_VAL1 REAL, THRESH_VAL2 REAL", "VARIABLE_ID"),
)


def iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="seconds")


def use_pct(used: int, avail: int) -> int:
    """`lfs df` Use%: used / (used + available), rounded half up (as real outputs show)."""
    tot = used + avail
    return (200 * used + tot) // (2 * tot) if tot else 0


def mount_of(fs: str) -> str:
    return f"/mnt/{fs}"


@dataclass
class Failover:
    """An OSS whose OSTs its partner serves during [start, end)."""

    fs: str
    oss: str
    partner: str
    start: float
    end: float


class _Fs:
    """Static layout and initial state of one filesystem."""

    def __init__(self, fs: Filesystem, i: int, rng: np.random.Generator) -> None:
        self.fs = fs
        self.osses = fs.osses
        self.oss_no = {s: j for j, s in enumerate(self.osses)}
        self.ost_oss = np.array([self.oss_no[fs.oss_of[o]] for o in fs.osts])
        n = len(fs.osts)
        net = f"10.{100 + i}"
        self.oss_nid = {s: f"{net}.{(j + 10) // 256}.{(j + 10) % 256}@o2ib{i + 1}"
                        for j, s in enumerate(self.osses)}
        self.mds_nid = f"{net}.0.3@o2ib{i + 1}"
        self.mgs_nid = f"{net}.0.2@o2ib{i + 1}"
        self.inst = f"ffff88{int(rng.integers(0, 16**10)):010x}"     # client instance
        u = [int(x) for x in rng.integers(0, 2**31, 4)]
        self.uuid = f"{u[0]:08x}-{u[1] % 16**4:04x}-{u[2] % 16**4:04x}-{u[3] % 16**4:04x}-" \
            f"{u[0] ^ u[1]:012x}"
        self.read0 = rng.integers(10**12, 5 * 10**13, n)
        self.write0 = rng.integers(10**12, 5 * 10**13, n)
        fill = rng.uniform(0.55, 0.80, n)
        fill[int(rng.integers(0, n))] = 0.90          # one clearly fullest OST
        self.used0 = (fill * OST_KB).astype(np.int64)
        self.inodes0 = rng.integers(10**6, 2 * 10**7, n)
        self.ops0 = rng.integers(10**6, 10**9, len(MDS_OPS))
        self.mdt_inodes0 = int(rng.integers(10**8, 4 * 10**8))
        self.mdt_used0 = int(rng.integers(5 * 10**7, 2 * 10**8))

    def partner(self, oss: str) -> str:
        j = self.oss_no[oss]
        k = j ^ 1 if (j ^ 1) < len(self.osses) else j - 1
        return self.osses[k]


class LmtWriter:
    """Engine sink writing LMT SQLite day files, `lfs df` and `lctl dl -t` snapshots."""

    def __init__(self, site: Site, out: Path, seed: int, days: int, step_s: int = 60,
                 failovers: int = 1) -> None:
        self.site = site
        self.out = Path(out)
        self.days = days
        self.step_s = int(step_s)
        self.window = int(site.window_s)
        if self.step_s <= 0 or 86400 % self.step_s:
            raise ValueError(f"LMT step {step_s} s must divide a day")
        self.slot = math.gcd(self.step_s, self.window)
        self.per = self.window // self.slot           # slots per capture window
        self.batch = self.per * max(1, 3600 // self.window)   # slots handled at once
        self.rng = np.random.default_rng([int(seed), 0x70C10])
        self.fss = [_Fs(fs, i, self.rng) for i, fs in enumerate(site.filesystems)]
        self.fs_no = {f.fs.name: i for i, f in enumerate(self.fss)}
        self.n_failovers = failovers
        self.failovers: list[Failover] = []
        self.start = 0.0
        self.cur = 0                                  # index of the open slot
        self.steps: list[tuple[list[Run], np.ndarray]] = []
        self.window_slots: list[list[tuple[list[Run], np.ndarray]]] = []
        self.place: dict[int, tuple] = {}
        # OSTs of all filesystems on one axis; per slot: read/write bytes per OST, MDS ops
        self.ost_base = np.cumsum([0] + [len(f.fs.osts) for f in self.fss])
        self.ost_fs = np.repeat(np.arange(len(self.fss)), np.diff(self.ost_base))
        cap = (days + 1) * 86400 // self.slot
        self.d_read = np.zeros((cap, int(self.ost_base[-1])), dtype=np.int64)
        self.d_write = np.zeros_like(self.d_read)
        self.d_md = np.zeros((cap, len(self.fss), len(MDS_OPS)), dtype=np.int64)
        self.truth: dict = {}

    # engine sink protocol -------------------------------------------------------------------
    def begin(self, engine, start: float) -> None:
        self.start = start
        self._plan_failovers()

    def step(self, t: float, runs: list[Run], counts: np.ndarray) -> None:
        k = int((t - self.start) // self.slot)
        while self.cur < k:
            self._close_slot()
        if runs:
            self.steps.append((runs, counts))

    def end(self, t: float) -> None:
        while self.cur * self.slot < t - self.start or (self.cur * self.slot) % self.step_s:
            self._close_slot()
        if self.window_slots:
            self._close_windows()
        self._write()

    def truth_extra(self) -> dict:
        return {"tokio": self.truth}

    # accumulation ---------------------------------------------------------------------------
    def _plan_failovers(self) -> None:
        for i in range(self.n_failovers):
            d = i * self.days // max(1, self.n_failovers)
            f = self.fss[int(self.rng.integers(0, len(self.fss)))]
            if len(f.osses) < 2:
                continue
            oss = f.osses[int(self.rng.integers(0, len(f.osses)))]
            t0 = self.start + d * 86400 + float(self.rng.uniform(3.0, 5.5)) * 3600
            dur = float(self.rng.uniform(7.5, 9.0)) * 3600
            self.failovers.append(Failover(f.fs.name, oss, f.partner(oss), t0, t0 + dur))

    def _close_slot(self) -> None:
        self.window_slots.append(self.steps)
        self.steps = []
        self.cur += 1
        if self.cur % self.batch == 0:
            self._close_windows()

    def _placement(self, run: Run) -> tuple:
        """(fs index, (I/O nodes, OSTs per node), request size, touched OSTs on the global
        axis, 0/1 matrix summing (node, OST slot) parts onto the touched OSTs)."""
        p = self.place.get(run.run_no)
        if p is None:
            osts = np.array([run.osts[n] for n in run.io_nodes])
            touched, inv = np.unique(osts.ravel(), return_inverse=True)
            gather = np.zeros((len(touched), osts.size), dtype=np.int64)
            gather[inv, np.arange(osts.size)] = 1       # (node, OST slot) -> touched OST
            f = self.fs_no[run.app.fs]
            p = (f, osts.shape, int(run.app.archetype.reqsize), int(self.ost_base[f]) + touched,
                 gather)
            self.place[run.run_no] = p
        return p

    def _close_windows(self) -> None:
        """Split the closed windows' per-run ops over OSTs like the export-stats writer.

        Per run and capture window the ops split exactly as `LustreCaptureWriter` splits
        them; each OST's window bytes then spread over the window's slots following its
        filesystem's progress: floor(total x cumulative fraction) never decreases and ends
        exactly at the window total.
        """
        m = len(self.window_slots)
        s0 = self.cur - m                             # first slot of the batch
        while self.cur > len(self.d_read):            # the run went on longer: grow
            self.d_read = np.vstack([self.d_read, np.zeros_like(self.d_read)])
            self.d_write = np.vstack([self.d_write, np.zeros_like(self.d_write)])
            self.d_md = np.vstack([self.d_md, np.zeros_like(self.d_md)])
        rs: list[Run] = []
        cs, js, lens = [], [], []
        for j, steps in enumerate(self.window_slots):
            for runs, counts in steps:
                rs.extend(runs)
                cs.append(counts)
                js.append(j)
                lens.append(len(runs))
        self.window_slots = []
        if not rs:
            return
        c = np.concatenate(cs)
        rel = np.repeat(js, lens)
        nos = np.fromiter((r.run_no for r in rs), dtype=np.int64, count=len(rs))
        uniq, first, inv = np.unique(nos, return_index=True, return_inverse=True)
        fs_row = np.array([self.fs_no[rs[i].app.fs] for i in first])[inv]
        np.add.at(self.d_md, (rel + s0, fs_row), c[:, _MD_COLS][:, _MD_ORDER])
        per, nw = self.per, -(-m // self.per)
        ops = np.zeros((len(uniq), nw, per, 2), dtype=np.int64)
        np.add.at(ops, (inv, rel // per, rel % per), c[:, _OPS_COLS])
        tot = ops.sum(axis=2)                                           # (runs, windows, 2)
        win = np.zeros((nw, self.d_read.shape[1], 2), dtype=np.int64)   # bytes per OST
        profile = np.zeros((nw, per, len(self.fss), 2))                 # bytes per slot, fs
        for a, w in zip(*np.nonzero(tot.any(axis=2)), strict=True):
            f, shape, size, touched, gather = self._placement(rs[first[a]])
            win[w, touched] += self._split(tot[a, w], shape, gather) * size
            profile[w, :, f] += ops[a, w] * size
        frac = np.minimum(np.cumsum(profile, axis=1)
                          / np.maximum(profile.sum(axis=1, keepdims=True), 1.0), 1.0)
        frac[:, per - 1] = 1.0
        frac[nw - 1, (m - 1) % per:] = 1.0            # the last (maybe partial) window
        cum = np.floor(win[:, None] * frac[:, :, self.ost_fs]).astype(np.int64)
        cum[:, 1:] -= cum[:, :-1].copy()              # per-slot bytes within each window
        delta = cum.reshape(nw * per, -1, 2)[:m]
        self.d_read[s0:self.cur] += delta[:, :, 0]
        self.d_write[s0:self.cur] += delta[:, :, 1]

    @staticmethod
    def _split(total: np.ndarray, shape: tuple[int, int], gather: np.ndarray) -> np.ndarray:
        """Read/write ops per touched OST of one run's window total (touched OSTs x 2).

        The total splits over I/O nodes, then each node's part over its OSTs, with
        `archer.split_int`'s rule (the first parts take the remainder), so the per-OST
        window totals equal the export-stats writer's.
        """
        n, k = shape
        node = total // n + (np.arange(n)[:, None] < total % n)       # (n, 2)
        if k > 1:
            node = (node[:, None, :] // k
                    + (np.arange(k)[None, :, None] < (node % k)[:, None, :])).reshape(-1, 2)
        return gather @ node

    # output ---------------------------------------------------------------------------------
    def _write(self) -> None:
        per = self.step_s // self.slot
        n_slots = self.cur
        n_samples = n_slots // per + 1
        times = self.start + np.arange(n_samples) * self.step_s
        series = [self._series(i, per, n_samples) for i in range(len(self.fss))]
        for f, ser in zip(self.fss, series, strict=True):
            ser.update(self._cpu(f, ser, times))
        days = sorted({day_of(t) for t in times[1:] - 1})
        tz = ZoneInfo(self.site.tz("lmt"))
        lmt: dict = {}
        for i, f in enumerate(self.fss):
            lmt[f.fs.name] = {}
            for day in days:
                idx = self._day_index(day, times)
                # the file also holds the sample before 00:00, so a reader of the day alone
                # has the delta of its first interval
                rows = np.concatenate([idx[:1] - 1, idx]) if idx[0] > 0 else idx
                lmt[f.fs.name][day] = self._write_db(f, series[i], times, rows, day, tz)
        snaps = [t for day in days for h in SNAPSHOT_HOURS
                 if (t := self._day0(day) + h * 3600) <= times[-1]]
        fullest = self._write_snapshots(snaps, series, times)
        self.truth = {
            "lmt_step_s": self.step_s, "lmt_tz": self.site.tz("lmt"),
            "lmt": lmt,
            "failed_over": [self._failover_truth(fo, snaps) for fo in self.failovers],
            "fullest_ost": fullest,
            "snapshots": [iso(t) for t in snaps],
        }

    @staticmethod
    def _day0(day: str) -> float:
        d = dt.date.fromisoformat(day)
        return dt.datetime(d.year, d.month, d.day, tzinfo=dt.timezone.utc).timestamp()

    def _day_index(self, day: str, times: np.ndarray) -> np.ndarray:
        d0 = self._day0(day)
        return np.flatnonzero((times >= d0) & (times <= d0 + 86400))

    def _series(self, i: int, per: int, n_samples: int) -> dict[str, np.ndarray]:
        """Cumulative counters and gauges of one filesystem at every sample."""
        f = self.fss[i]

        n = self.cur

        def cum(d: np.ndarray) -> np.ndarray:
            c = np.vstack([np.zeros((1, d.shape[1]), dtype=np.int64), np.cumsum(d, axis=0)])
            return c[::per][:n_samples]

        cols = slice(int(self.ost_base[i]), int(self.ost_base[i + 1]))
        rd = cum(self.d_read[:n, cols])
        wr = cum(self.d_write[:n, cols])
        md = cum(self.d_md[:n, i])
        used = f.used0[None, :] + wr // 1024
        inodes = f.inodes0[None, :] + wr // OBJECT_BYTES
        ops = f.ops0[None, :] + md
        creates = md[:, MDS_OPS.index("mknod")] + md[:, MDS_OPS.index("mkdir")]
        removes = md[:, MDS_OPS.index("unlink")] + md[:, MDS_OPS.index("rmdir")]
        mdt_inodes = f.mdt_inodes0 + creates - removes
        return {"read": f.read0[None, :] + rd, "write": f.write0[None, :] + wr,
                "moved": rd + wr, "used": used, "inodes": inodes, "ops": ops, "md": md,
                "mdt_inodes": mdt_inodes, "mdt_used": f.mdt_used0 + 4 * (creates - removes)}

    def _cpu(self, f: _Fs, s: dict, times: np.ndarray) -> dict[str, np.ndarray]:
        """OSS (per OSS) and MDS CPU/memory %, from the load of the step before each sample."""
        moved = s["moved"]
        rate = np.diff(moved, axis=0, prepend=moved[:1]) / self.step_s       # B/s per OST
        load = np.zeros((len(times), len(f.osses)))
        np.add.at(load.T, f.ost_oss, rate.T / f.fs.ost_peak_bw)
        per_oss = np.bincount(f.ost_oss, minlength=len(f.osses))
        load /= per_oss[None, :]
        down = np.zeros(load.shape, dtype=bool)
        for fo in self.failovers:
            if fo.fs == f.fs.name:
                live = (times >= fo.start) & (times < fo.end)
                a, b = f.oss_no[fo.oss], f.oss_no[fo.partner]
                load[live, b] += load[live, a]
                down[live, a] = True
        cpu = np.clip(1.0 + 60.0 * load + self.rng.gamma(2.0, 0.3, load.shape), 0, 100)
        mem = np.clip(88.0 + 8.0 * np.minimum(load, 1.0) + self.rng.normal(0, 1, load.shape),
                      0, 99.9)
        md = s["md"].sum(axis=1)
        md_rate = np.diff(md, prepend=md[:1]) / self.step_s
        mds_cpu = np.clip(2.0 + 90.0 * md_rate / f.fs.mds_peak_ops
                          + self.rng.gamma(2.0, 0.5, len(times)), 0, 100)
        return {"cpu": cpu, "mem": mem, "down": down, "mds_cpu": mds_cpu}

    def _write_db(self, f: _Fs, s: dict, times: np.ndarray, idx: np.ndarray, day: str,
                  tz: ZoneInfo) -> dict:
        path = self.out / "lmt" / f.fs.name / f"{day}.sqlite3"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        ts_ids = ((times[idx] - TS_EPOCH) // self.step_s).astype(np.int64)
        stamps = [dt.datetime.fromtimestamp(t, tz).strftime("%Y-%m-%d %H:%M:%S")
                  for t in times[idx].tolist()]
        cpu, mem, down, mds_cpu = s["cpu"][idx], s["mem"][idx], s["down"][idx], s["mds_cpu"][idx]
        n_ost, n_oss = len(f.fs.osts), len(f.osses)
        db = sqlite3.connect(path)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            for name, cols, pk in TABLES:
                db.execute(f"CREATE TABLE {name} ({cols}, PRIMARY KEY({pk})) WITHOUT ROWID")
            self._write_info(db, f)
            db.executemany("INSERT INTO TIMESTAMP_INFO VALUES (?,?)",
                           zip(ts_ids.tolist(), stamps, strict=True))
            n = len(idx)

            def col(x: np.ndarray) -> list:   # samples x targets -> target-major list
                return x.T.ravel().tolist()

            used = s["used"][idx]
            inodes = s["inodes"][idx]
            db.executemany(f"INSERT INTO OST_DATA VALUES (?1,?2,?3,?4,0.0,{OST_KB}-?5,?5,"
                           f"{OST_INODES}-?6,?6)", zip(
                np.repeat(np.arange(1, n_ost + 1), n).tolist(), np.tile(ts_ids, n_ost).tolist(),
                col(s["read"][idx]), col(s["write"][idx]), col(used), col(inodes), strict=True))
            up = ~down.T.ravel()
            db.executemany("INSERT INTO OSS_DATA VALUES (?,?,?,?)", zip(
                np.repeat(np.arange(1, n_oss + 1), n)[up].tolist(),
                np.tile(ts_ids, n_oss)[up].tolist(), np.round(cpu.T.ravel()[up], 4).tolist(),
                np.round(mem.T.ravel()[up], 4).tolist(), strict=True))
            mdt_used = s["mdt_used"][idx]
            mdt_inodes = s["mdt_inodes"][idx]
            db.executemany("INSERT INTO MDS_DATA VALUES (1,?,?,?,?,?,?)", zip(
                ts_ids.tolist(), np.round(mds_cpu, 4).tolist(), (MDT_KB - mdt_used).tolist(),
                mdt_used.tolist(), (10**9 - mdt_inodes).tolist(), mdt_inodes.tolist(),
                strict=True))
            op_ids = np.array([_OP_ID[o] for o in MDS_OPS])
            order = np.argsort(op_ids)
            db.executemany("INSERT INTO MDS_OPS_DATA VALUES (1,?,?,?,0,0)", zip(
                np.repeat(ts_ids, len(MDS_OPS)).tolist(), np.tile(op_ids[order], n).tolist(),
                s["ops"][idx][:, order].ravel().tolist(), strict=True))
            db.commit()
        finally:
            db.close()
        a, b = (idx[1] if self._day0(day) > times[idx[0]] else idx[0]), idx[-1]
        rd = (s["read"][b] - s["read"][a]).tolist()
        wr = (s["write"][b] - s["write"][a]).tolist()
        ops = s["ops"][b] - s["ops"][a]
        return {"read_bytes": int(sum(rd)), "write_bytes": int(sum(wr)),
                "ost_read_bytes": dict(zip(f.fs.osts, rd, strict=True)),
                "ost_write_bytes": dict(zip(f.fs.osts, wr, strict=True)),
                "mds_ops": {o: int(v) for o, v in zip(MDS_OPS, ops, strict=True) if v},
                "samples": int(b - a + 1), "first": iso(times[a]), "last": iso(times[b]),
                "first_ts_id": int(ts_ids[a - idx[0]]), "last_ts_id": int(ts_ids[-1])}

    def _write_info(self, db: sqlite3.Connection, f: _Fs) -> None:
        fs = f.fs
        db.execute("INSERT INTO FILESYSTEM_INFO VALUES (1,?,?,?)",
                   (fs.name, mount_of(fs.name), SCHEMA_VERSION))
        db.executemany("INSERT INTO OSS_INFO VALUES (?,1,?,?)",
                       [(j + 1, s, f.partner(s)) for j, s in enumerate(f.osses)])
        db.executemany("INSERT INTO OST_INFO VALUES (?,?,?,?,0,?)",
                       [(i + 1, int(f.ost_oss[i]) + 1, o, fs.oss_of[o], f"/dev/md{i % 2}")
                        for i, o in enumerate(fs.osts)])
        db.executemany("INSERT INTO MDS_INFO VALUES (?,1,?,?,?)",
                       [(i + 1, m, fs.mds, f"/dev/md{66 + i}") for i, m in enumerate(fs.mdts)])
        db.executemany("INSERT INTO OPERATION_INFO VALUES (?,?,'reqs')",
                       [(i + 1, o) for i, o in enumerate(OPERATIONS)])
        db.executemany("INSERT INTO OST_VARIABLE_INFO VALUES (?,?,?,?,?,?)",
                       [(i + 1, *v) for i, v in enumerate(OST_VARIABLES)])
        db.executemany("INSERT INTO MDS_VARIABLE_INFO VALUES (?,?,?,?,?,?)",
                       [(i + 1, *v) for i, v in enumerate(MDS_VARIABLES)])

    # lfs df / lctl dl -------------------------------------------------------------------------
    def _write_snapshots(self, snaps: list[float], series: list[dict],
                         times: np.ndarray) -> dict:
        df: dict[str, list[str]] = {}
        dl: dict[str, list[str]] = {}
        fullest: dict = {f.fs.name: {} for f in self.fss}
        for t in snaps:
            k = int((t - self.start) // self.step_s)
            day = day_of(t)
            df.setdefault(day, []).append(f"BEGIN {int(t)}")
            dl.setdefault(day, []).append(f"BEGIN {int(t)}")
            dev = 0
            for f, s in zip(self.fss, series, strict=True):
                df[day] += self._lfs_df(f, s, k)
                lines, dev = self._lctl_dl(f, t, dev)
                dl[day] += lines
                if t == self._day0(day):
                    used = s["used"][k]
                    o = int(np.argmax(used))
                    avail = self._avail(used)
                    fullest[f.fs.name][day] = {"ost": f.fs.osts[o], "index": o,
                                               "use_pct": use_pct(int(used[o]), int(avail[o])),
                                               "at": iso(t)}
        for folder, files in (("lfs-df", df), ("lctl-dl", dl)):
            (self.out / folder).mkdir(parents=True, exist_ok=True)
            for day, lines in files.items():
                (self.out / folder / f"{day}.txt").write_text("\n".join(lines) + "\n")
        return fullest

    @staticmethod
    def _avail(used: np.ndarray) -> np.ndarray:
        return OST_KB - used - int(OST_KB * LFS_RESERVED)

    def _lfs_df(self, f: _Fs, s: dict, k: int) -> list[str]:
        mnt = mount_of(f.fs.name)
        out = [f"{'UUID':<20} {'1K-blocks':>11} {'Used':>11} {'Available':>11} {'Use%':>4} "
               "Mounted on"]

        def row(name: str, total: int, used: int, avail: int, where: str) -> str:
            pct = use_pct(used, avail)
            return f"{name:<20} {total:>11} {used:>11} {avail:>11} {pct:>3}% {where}"

        mdt_used = int(s["mdt_used"][k])
        mdt_avail = MDT_KB - mdt_used - int(MDT_KB * LFS_RESERVED)
        for i, m in enumerate(f.fs.mdts):
            out.append(row(f"{m}_UUID", MDT_KB, mdt_used, mdt_avail, f"{mnt}[MDT:{i}]"))
        used = s["used"][k].tolist()
        avail = self._avail(s["used"][k]).tolist()
        for i, o in enumerate(f.fs.osts):
            out.append(row(f"{o}_UUID", OST_KB, used[i], avail[i], f"{mnt}[OST:{i}]"))
        out.append("")
        out.append(row("filesystem summary:", OST_KB * len(used), sum(used), sum(avail), mnt))
        out.append("")
        return out

    def _lctl_dl(self, f: _Fs, t: float, dev: int) -> tuple[list[str], int]:
        """`lctl dl -t` devices of one mounted filesystem at time t (failovers applied)."""
        fs = f.fs
        inst, uuid = f.inst, f.uuid
        serving = {s: s for s in f.osses}
        for fo in self.failovers:
            if fo.fs == fs.name and fo.start <= t < fo.end:
                serving[fo.oss] = fo.partner
        lines = [f"{dev:3d} UP mgc MGC{f.mgs_nid} {uuid} 5",
                 f"{dev + 1:3d} UP lov {fs.name}-clilov-{inst} {uuid} 4",
                 f"{dev + 2:3d} UP lmv {fs.name}-clilmv-{inst} {uuid} 4"]
        dev += 3
        for m in fs.mdts:
            lines.append(f"{dev:3d} UP mdc {m}-mdc-{inst} {uuid} 5 {f.mds_nid}")
            dev += 1
        for o in fs.osts:
            nid = f.oss_nid[serving[fs.oss_of[o]]]
            lines.append(f"{dev:3d} UP osc {o}-osc-{inst} {uuid} 5 {nid}")
            dev += 1
        return lines, dev

    def _failover_truth(self, fo: Failover, snaps: list[float]) -> dict:
        f = self.fss[self.fs_no[fo.fs]]
        return {"fs": fo.fs, "oss": fo.oss, "partner": fo.partner,
                "osts": [o for o in f.fs.osts if f.fs.oss_of[o] == fo.oss],
                "oss_nid": f.oss_nid[fo.oss], "partner_nid": f.oss_nid[fo.partner],
                "start": iso(fo.start), "end": iso(fo.end),
                "snapshots": [iso(t) for t in snaps if fo.start <= t < fo.end]}
