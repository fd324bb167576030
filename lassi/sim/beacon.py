"""Raw files of a forwarding-architecture site (Sunway TaihuLight after the Beacon paper).

`BeaconWriter` is the engine sink (1 s steps); it writes FORMATS.md §4 under
`<out>/beacon/<layer>/<host>/<YYYY-MM-DD>.log[.gz]`, one file per host per UTC day:

- `lwfs-client/<compute node>/`: the compute-node trace (node identity = its IP), only for
  the runs chosen by `traced_fraction` (drawn once per run, in run order, from the writer's
  own generator). First-pass compressed: per node, per second, per file one line
  `<ip> <UTC ms Z> READ|WRITE <fd> <offset> <size> <count>`; `size` is the segment's
  request size, `count × size` the bytes of the line, offsets contiguous per fd across
  lines. A data phase opens its files (`OPEN <fd> path=/User<n>/<hash>/<hash>`) at its
  first second and closes them (`CLOSE <fd>`) at the first second after its last I/O.
  A phase's file handle (fd) is the same on every node of the run (one program, one code
  path). File sharing follows the I/O mode: N:N and N:M each I/O node its own file; 1:1 one node,
  one file; N:1 all I/O nodes open the same path (each its own fd) and write disjoint
  regions of it (node i from offset i × ceil(phase requests / nodes) × size). Each phase
  uses new files. Metadata segments are written as one line per node, second and
  operation kind, `<ip> <ts> <OP> <fd> path=<dir> count=<n>` (OP: OPEN CLOSE STAT CREATE
  UNLINK MKDIR RMDIR SETATTR …, `count=` the operations of that kind in that second; the
  fd is the node's working-directory handle). The metadata operations that accompany a
  data phase (the engine's per-segment extras) are not traced, only its OPEN/CLOSE.
- `lwfs-server/<fwd>/`: every `sample_s` per forwarding node the seven real-format lines
  (`Meta|Read|Write exe|wait` cumulative 8-bucket latency histograms of the requests
  served, then `queue length: <n>`), bracketed local time in the `beacon_local` zone.
- `lustre-client/<fwd>/`: every `sample_s` one line per OST the forwarding node has ever
  touched: cumulative read/write RPCs, the interval's average pages per RPC and the
  client's cumulative wait for the OST's replies in µs (the optional 7th field: the OST's
  service time, longer on a faulty OST, plus queueing at its utilisation, ±20 % noise).
- `ost/<oss>/`: every `sample_s` one line per OST of the OSS: cumulative RPCs, pages per
  RPC of the interval, cumulative read/write bytes.
- `mds/<mds>/`: every `sample_s` one line per source seen so far (forwarding-node IPs,
  plus the steady background of `login01`, `login02` and `cluster2-gw`), cumulative
  `op=count` for every MDS operation in a fixed order.

How the engine's per-run counts become per-component traffic. Every run moves its data
on its I/O nodes; each counter is split over them exactly by round robin within the phase
(request q of a phase goes to I/O node q mod n, so node totals never differ by more than
one). A node's requests go through its forwarding node (`site.fwd_of`) to the run's OSTs
for that node, split over them request by request (remainders rotating each second). At
the forwarding node reads are amplified by the archetype's `read_amplification`
(read-ahead that is thrown away — Beacon's cache thrashing): round(requests ×
amplification) requests of the same size reach Lustre. An RPC carries at most 1 MiB (256
pages of 4 KiB): a request of s bytes is ceil(s / 1 MiB) RPCs of ceil(s / 4 KiB) pages in
all. While a fault makes the engine progress a run per (I/O node, OST) pair (stragglers,
lassi.sim.engine), its data requests follow the engine's per-pair progress of the step
instead (largest-remainder split of the step's requests; metadata stays round robin).
Lustre-client and OST layers hold exactly the same traffic (no other client moves
data), so the final OST bytes equal the compute bytes plus the amplification extra.

LWFS server latency model (per forwarding node, per second). A data request occupies one
of the `threads` server threads for `e = (threads / peak_iops + size × amplification ×
threads / peak_bw) / slow` (its exe time), `slow` being the capacity factor of an
injected fault; a request the forwarding node sends to a slow OST (capacity x factor) holds
its thread longer by the OST's service time (1/peak_iops + size/peak_bw) x (1/factor - 1)
per Lustre request, so a slow OST shows as longer execution times at the healthy
forwarding nodes that use it; a metadata request holds a thread a quarter of
`threads / peak_iops`, and
its exe time adds the MDS round trip, which grows with the MDS load of all sources. The
load ρ = demanded thread time / threads uses the demand of every run in an I/O segment
(its segment rate, not what it got), so an overloaded or faulty node shows ρ > 1. Waiting
time W = w0 + ē·g(ρ) with g(ρ) = ρ/(1−ρ) up to ρ = 0.95 and linear beyond, but the
system is closed (every process of a run's I/O nodes has one request outstanding), so W
is at most clients / throughput − ē; the queue length is min(λ·W, clients) (Little's law,
averaged over the sample interval). Exe and wait times are
log-normal around those means; the served requests of each interval are distributed over
the buckets by a multinomial draw, so exe and wait histograms of one class always hold
the same count.

Ground truth (`truth_extra()["beacon"]`): the sample interval, the traced run numbers, per
UTC day the read/write bytes of each layer (`compute` = all runs as the LWFS clients
asked, `compute_traced` = what the trace files hold, `forwarding` = what the forwarding
nodes moved to/from Lustre, amplified reads included, `ost` = what the OSTs served), per
forwarding node and per OST the bytes/s of every non-zero minute `[minute, read, write]`
(forwarding-to-Lustre side), and the MDS background per source (rate and op totals).
Counters start at zero when the simulation starts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import time
from collections import OrderedDict, defaultdict
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from lassi.core.config import Site
from lassi.core.hostlist_fmt import slurm_hostlist
from lassi.sim.counters import IDX, LUSTRE_NAME, MDS
from lassi.sim.rawfiles import DayFiles, day_of
from lassi.sim.workload import MiB, Run

SAMPLE_S = 10
PAGE = 4096
RPC_MAX = MiB
RPCS_IN_FLIGHT = 8     # osc max_rpcs_in_flight: a client's outstanding RPCs per OST

# node-level columns split over a run's I/O nodes: read_ops, write_ops, then the MDS ops
_COLS = np.array([IDX["read_ops"], IDX["write_ops"]] + [IDX[c] for c in MDS])
_MD = slice(2, None)
_RW = np.array([IDX["read_bytes"], IDX["write_bytes"]])
MDS_NAMES = [LUSTRE_NAME[c] for c in MDS]
TRACE_OP = {"open": "OPEN", "close": "CLOSE", "mknod": "CREATE", "link": "LINK",
            "unlink": "UNLINK", "mkdir": "MKDIR", "rmdir": "RMDIR", "rename": "RENAME",
            "getattr": "STAT", "setattr": "SETATTR", "getxattr": "GETXATTR",
            "setxattr": "SETXATTR", "statfs": "STATFS", "mds_sync": "FSYNC",
            "samedir_rename": "RENAME", "crossdir_rename": "RENAME"}
_TRACE_OPS = [TRACE_OP[c] for c in MDS]
SERVER_LINES = [("Meta", "exe"), ("Meta", "wait"), ("Read", "exe"), ("Read", "wait"),
                ("Write", "exe"), ("Write", "wait")]

# steady background metadata load at every MDS: source -> ops/s (mix below)
BACKGROUND = {
    "login01": 30.0,
    "login02": 18.0,
    "cluster2-gw": 90.0,
}
BACKGROUND_MIX = {"getattr": 0.45, "open": 0.18, "close": 0.18, "statfs": 0.05,
                  "setattr": 0.04, "unlink": 0.04, "mknod": 0.03, "mkdir": 0.02,
                  "rmdir": 0.01}

# latency model constants (seconds)
SIGMA_EXE, SIGMA_WAIT = 0.6, 1.0
WAIT0 = 5e-5          # an idle server still takes a few tens of µs to pick a request up
MD_BASE = 2e-4        # metadata round trip to an idle MDS (not holding a server thread)
MD_LIGHT = 4.0        # a metadata request costs a thread 1/4 of a small data request
# log-normal bucket probabilities are tabulated over ln(mean) (2 % steps, 0.1 µs .. 1 day)
_LN_LO, _LN_HI, _LN_STEP = math.log(1e-7), math.log(1e5), 0.02
_SIG_COL = np.array([0, 1, 0, 1, 0, 1])     # exe, wait per server line


# --- small helpers ----------------------------------------------------------------------------


def _iso_ms(ms: int) -> str:
    """Epoch milliseconds -> `2018-02-25T10:00:12.544Z`."""
    s, m = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def _hash64(text: str) -> int:
    """A signed 64-bit name hash, like the anonymised path components of Beacon's traces."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little",
                          signed=True)


def _ncdf(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF (Abramowitz–Stegun 7.1.26, |error| < 1.5e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                          + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


def _lognormal_buckets(mean: np.ndarray, sigma: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """P(bucket) of a log-normal with these means: shape mean.shape + (len(edges),).

    Bucket k is [edges[k], edges[k+1]), the last one open-ended; edges[0] is 0.
    """
    mu = np.log(np.maximum(mean, 1e-12)) - sigma ** 2 / 2
    cdf = _ncdf((np.log(edges[1:]) - mu[..., None]) / sigma[..., None])
    zeros = np.zeros(mean.shape + (1,))
    ones = np.ones(mean.shape + (1,))
    p = np.clip(np.diff(np.concatenate([zeros, cdf, ones], axis=-1), axis=-1), 0.0, None)
    return p / p.sum(axis=-1, keepdims=True)


def _wait_factor(rho: np.ndarray) -> np.ndarray:
    """g(ρ): ρ/(1−ρ) up to 0.95, then continuing linearly (an ever growing backlog)."""
    r = np.maximum(rho, 0.0)
    low = r / (1.0 - np.minimum(r, 0.95))
    return np.where(r <= 0.95, low, 19.0 + 400.0 * (r - 0.95))


def _wait_scalar(rho: float) -> float:
    r = max(rho, 0.0)
    return r / (1.0 - r) if r <= 0.95 else 19.0 + 400.0 * (r - 0.95)


def _max_open_files() -> int:
    """How many compute-node trace files to keep open: half the soft limit, 32 .. 4096."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        soft = 1024
    if soft < 0:            # RLIM_INFINITY
        soft = 8192
    return int(max(32, min(4096, soft // 2)))


def _user_no(user: str) -> int:
    digits = re.sub(r"\D", "", user)
    return int(digits) % 1000 if digits else abs(_hash64(user)) % 1000


def _name_parts(name_format: str) -> tuple[str, int] | None:
    m = re.fullmatch(r"([A-Za-z_-]*)\{:0(\d+)d\}", name_format)
    return (m.group(1), int(m.group(2))) if m else None


class _ClientFiles(DayFiles):
    """DayFiles that keep at most `cap` files open (least recently used closed first).

    A closed file is reopened in append mode (a new gzip member when compressed), so lines
    stay in time order; `release(rel)` closes a host's file at once.
    """

    def __init__(self, root: Path, suffix: str, gz: bool, cap: int) -> None:
        super().__init__(root, suffix=suffix, gz=gz)
        self.cap = cap
        self._lru: OrderedDict[tuple[str, str], None] = OrderedDict()

    def get(self, rel: str, day: str):
        key = (rel, day)
        if key in self._open:
            self._lru.move_to_end(key)
            return self._open[key]
        fh = super().get(rel, day)
        for k in [k for k in self._lru if k[0] == rel]:
            self._lru.pop(k)
        self._lru[key] = None
        while len(self._open) > self.cap:
            old, _ = self._lru.popitem(last=False)
            self._open.pop(old).close()
        return fh

    def release(self, rel: str) -> None:
        for k in [k for k in self._open if k[0] == rel]:
            self._open.pop(k).close()
            self._lru.pop(k, None)

    def close(self) -> None:
        super().close()
        self._lru.clear()


class _RunState:
    """Per-run mapping arrays and phase state, built when the run first does I/O."""

    __slots__ = ("run", "n", "ar", "lo", "m", "fwd_u", "fwd_share", "pair_node", "clients",
                 "pair_j", "pair_k", "key_f", "key_o", "key_inv", "fs_i", "amp", "io_segs",
                 "phase", "seg", "cum", "traced", "ips", "rels", "ms", "fds", "paths",
                 "cursor", "open_files")


# --- the writer -------------------------------------------------------------------------------


class BeaconWriter:
    """Engine sink writing Beacon's five monitored layers (see the module docstring)."""

    def __init__(self, site: Site, out: Path, rng: np.random.Generator, gz: bool = False,
                 traced_fraction: float = 1.0, sample_s: int = SAMPLE_S) -> None:
        if not site.has_forwarding:
            raise ValueError(f"site {site.name!r} has no forwarding layer")
        self.site = site
        self.root = Path(out) / "beacon"
        # one draw from the shared generator: the writer's randomness never shifts the
        # engine's own draws, whatever is traced or written
        self.rng = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
        self.salt = f"{int(self.rng.integers(0, 2**31))}"
        self.files = DayFiles(self.root, suffix=".log", gz=gz)
        self.cfiles = _ClientFiles(self.root, ".log", gz, _max_open_files())
        self.traced_fraction = float(traced_fraction)
        self.sample_s = int(sample_s)
        self.tz = ZoneInfo(site.tz("beacon_local"))
        fwd = site.data["forwarding"]
        self.threads = float(fwd["threads"])
        self.per_fwd = int(fwd["nodes_per_fwd"])
        self.ppn = int(site.data["compute"].get("procs_per_node", 1))
        self.fwd_bw = float(fwd["peak_bw"])
        self.fwd_iops = float(fwd["peak_iops"])
        self.edges = np.array(site.data.get("latency_buckets_s",
                                            [0, 1e-3, 1e-2, 0.1, 1, 10, 100, 1000]), float)
        self.edges[0] = 0.0
        grid = np.exp(_LN_LO + _LN_STEP * np.arange(int((_LN_HI - _LN_LO) / _LN_STEP) + 1))
        self.table = np.stack([_lognormal_buckets(grid, np.full(grid.shape, sig), self.edges)
                               for sig in (SIGMA_EXE, SIGMA_WAIT)])
        self.fwds = list(site.fwd_nodes)
        self.fwd_ips = [site.fwd_ip(f) for f in self.fwds]
        nf = len(self.fwds)
        # OSTs indexed globally over the filesystems (as the engine does)
        self.fs_names = [fs.name for fs in site.filesystems]
        self.ost_base: dict[str, int] = {}
        self.ost_names: list[str] = []
        for fs in site.filesystems:
            self.ost_base[fs.name] = len(self.ost_names)
            self.ost_names.extend(fs.osts)
        no = len(self.ost_names)
        self.oss_hosts: list[tuple[str, list[int]]] = []
        for fs in site.filesystems:
            base = self.ost_base[fs.name]
            for oss in fs.osses:
                self.oss_hosts.append(
                    (oss, [base + i for i, o in enumerate(fs.osts) if fs.oss_of[o] == oss]))
        self.mds_hosts = [fs.mds for fs in site.filesystems]
        self.mds_peak = np.array([fs.mds_peak_ops for fs in site.filesystems])
        # cumulative state
        # lustre traffic per (fwd, OST): read_rpcs, write_rpcs, pages, read_bytes, write_bytes,
        # and the client's cumulative wait for the OST's replies (µs, osc req_waittime)
        self.lc = np.zeros((nf, no, 6), dtype=np.int64)
        self.lc_prev = np.zeros_like(self.lc)
        self.touched = np.zeros((nf, no), dtype=bool)
        self.md = np.zeros((len(self.fs_names), nf, len(MDS)), dtype=np.int64)
        self.hist = np.zeros((nf, 6, 8), dtype=np.int64)
        self.mass = np.zeros((nf, 6, 8))
        self.served = np.zeros((nf, 6), dtype=np.int64)
        self.q_sum = np.zeros(nf)
        self.q_steps = 0
        self.samples = 0
        self.bg_rate = {s: r * float(self.rng.uniform(0.8, 1.2)) for s, r in BACKGROUND.items()}
        self.bg = {(m, s): np.zeros(len(MDS), dtype=np.int64)
                   for m in self.mds_hosts for s in BACKGROUND}
        mix = np.zeros(len(MDS))
        for op, f in BACKGROUND_MIX.items():
            mix[MDS.index(op)] = f
        self.bg_mix = mix / mix.sum()
        self.bg_total_rate = sum(self.bg_rate.values())
        self.jitter = {}
        for layer, hosts in (("lwfs-server", self.fwds), ("lustre-client", self.fwds),
                             ("ost", [h for h, _ in self.oss_hosts]), ("mds", self.mds_hosts)):
            for h in hosts:
                self.jitter[(layer, h)] = int(self.rng.integers(1, 1000))   # ms
        # per-run state, truth
        self.states: dict[int, _RunState] = {}
        self.traced: set[int] = set()
        self.engine = None
        self.next_sample = 0.0
        self.minute = None
        self.lc_min = self.lc.copy()
        self.bw_fwd: dict[str, list] = defaultdict(list)
        self.bw_ost: dict[str, list] = defaultdict(list)
        self.daily: dict[str, dict[str, np.ndarray]] = {}
        self.faults: list[tuple[int, float, float, float]] = []
        self.ost_faults: list[tuple[int, float, float, float]] = []
        self.ost_bw = np.array([fs.ost_peak_bw for fs in site.filesystems for _ in fs.osts])
        self.ost_iops = np.array([fs.ost_peak_iops for fs in site.filesystems for _ in fs.osts])
        self.ost_mult = np.ones(no)        # the step's capacity factor of every OST (faults)
        self._day_cache: tuple[int, str] = (-1, "")

    # engine sink protocol ----------------------------------------------------------------
    def begin(self, engine, start: float) -> None:
        self.engine = engine
        self.next_sample = float(start)
        runs = sorted(engine.runs, key=lambda r: r.run_no)
        draws = self.rng.random(len(runs))
        self.traced = {r.run_no for r, x in zip(runs, draws, strict=True)
                       if x < self.traced_fraction}
        self.faults = [(self.fwds.index(f.name), f.factor, f.start, f.end)
                       for f in engine.faults if f.kind == "fwd" and f.name in self.fwds]
        self.ost_faults = [(self.ost_names.index(f.name), f.factor, f.start, f.end)
                           for f in engine.faults if f.kind == "ost" and f.name in self.ost_names]

    def step(self, t: float, runs: list[Run], counts: np.ndarray) -> None:
        while t >= self.next_sample:
            self._sample(self.next_sample)
            self.next_sample += self.sample_s
        minute = int(t // 60) * 60
        if minute != self.minute:
            self._flush_minute()
            self.minute = minute
        self._close_ended(t, {r.run_no for r in runs})
        self.q_steps += 1
        if not runs:
            return
        day = self._day(t)
        tot = self._daily(day)
        rw = counts[:, _RW]
        tot["compute"] += rw.sum(axis=0)
        md_run = counts[:, _COLS[_MD]].sum(axis=1)
        acc = _StepAcc(len(self.fwds), len(self.ost_names))
        self._ost_factors(t)
        md_fs = np.zeros(len(self.fs_names))
        for i, run in enumerate(runs):
            st = self._state(run)
            phase = len(self.engine.truth[run.run_no].phases)
            if phase != st.phase:
                self._new_phase(st, phase, t)
            self._demand(st, acc)
            vec = counts[i]
            if not vec.any():
                continue
            if st.traced:
                tot["compute_traced"] += rw[i]
            md_fs[st.fs_i] += md_run[i]
            self._run_step(st, vec, t, day, acc, self.engine.pair_step.get(run.run_no))
        self._latency(t, acc, md_fs)
        self._rpc_wait(acc)

    def end(self, t: float) -> None:
        self._close_ended(t, set())
        while True:
            self._sample(self.next_sample)
            self.next_sample += self.sample_s
            if self.next_sample - self.sample_s >= t:
                break
        self._flush_minute()
        self.files.close()
        self.cfiles.close()

    # per run -----------------------------------------------------------------------------
    def _state(self, run: Run) -> _RunState:
        st = self.states.get(run.run_no)
        if st is not None:
            return st
        site = self.site
        st = _RunState()
        st.run = run
        nodes = sorted(run.io_nodes)       # sorted: each forwarding node's group is contiguous
        n = st.n = len(nodes)
        st.ar = np.arange(n, dtype=np.int64)
        fwd_of = np.array(nodes, dtype=np.int64) // self.per_fwd
        st.fwd_u, first, cnt = np.unique(fwd_of, return_index=True, return_counts=True)
        st.lo = first.astype(np.int64)[:, None]
        st.m = cnt.astype(np.int64)[:, None]
        st.fwd_share = cnt / n
        st.clients = cnt * self.ppn
        base = self.ost_base[run.app.fs]
        pn, pj, pk, po = [], [], [], []
        for i, node in enumerate(nodes):
            osts = run.osts[node]
            for j, o in enumerate(osts):
                pn.append(i)
                pj.append(j)
                pk.append(len(osts))
                po.append(base + o)
        st.pair_node = np.array(pn, dtype=np.int64)
        st.pair_j = np.array(pj, dtype=np.int64)
        st.pair_k = np.array(pk, dtype=np.int64)
        keys = fwd_of[st.pair_node] * len(self.ost_names) + np.array(po, dtype=np.int64)
        uk, kinv = np.unique(keys, return_inverse=True)
        st.key_f, st.key_o = np.divmod(uk, len(self.ost_names))
        st.key_inv = kinv
        st.fs_i = self.fs_names.index(run.app.fs)
        st.amp = float(run.app.archetype.read_amplification)
        st.io_segs = [s for s in run.plan if s.kind != "compute"]
        st.phase = -1
        st.seg = None
        st.cum = np.zeros(len(_COLS), dtype=np.int64)
        st.traced = run.run_no in self.traced
        st.open_files = False
        if st.traced:
            names = [site.compute_nodes[x] for x in nodes]
            st.ips = [site.node_ip(x) for x in names]
            st.rels = [f"lwfs-client/{x}" for x in names]
            st.ms = [int(v) for v in self.rng.integers(0, 980, size=n)]
        self.states[run.run_no] = st
        return st

    def _new_phase(self, st: _RunState, phase: int, t: float) -> None:
        if st.open_files:
            self._close_files(st, t)
        st.phase = phase
        st.seg = st.io_segs[min(phase, len(st.io_segs) - 1)]
        st.cum[:] = 0
        if not st.traced:
            return
        run = st.run
        mode = run.app.archetype.mode
        job = f"{self.salt}/{run.run_no}"
        top = f"/User{_user_no(run.app.user)}/{_hash64(job)}"
        st.paths, st.fds = [], []
        for i in range(st.n):
            if st.seg.kind == "meta":
                st.paths.append(f"{top}/{_hash64(f'{job}/dir{phase}/{i}')}")
            elif mode == "N:1":
                st.paths.append(f"{top}/{_hash64(f'{job}/shared{phase}')}")
            else:
                st.paths.append(f"{top}/{_hash64(f'{job}/file{phase}/{i}')}")
            # the same program on every node: the handle of a phase's file is the same on
            # each node (what lets Beacon's second pass merge identical vectors)
            h = _hash64(f"{job}/fd{phase}") & 0xFFFFF
            st.fds.append(f"{0x120000000 + (h << 4):#x}")
        size = max(1, int(st.seg.reqsize))
        if mode == "N:1":
            region = -(-int(st.seg.ops) // st.n) * size
            st.cursor = np.arange(st.n, dtype=np.int64) * region
        else:
            st.cursor = np.zeros(st.n, dtype=np.int64)
        if st.seg.kind == "meta":
            return
        st.open_files = True
        base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))
        day = self._day(t)
        for i in range(st.n):
            self.cfiles.get(st.rels[i], day).write(
                f"{st.ips[i]} {base}.{st.ms[i] + 1:03d}Z OPEN {st.fds[i]} path={st.paths[i]}\n")

    def _close_files(self, st: _RunState, t: float) -> None:
        base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))
        day = self._day(t)
        for i in range(st.n):
            self.cfiles.get(st.rels[i], day).write(
                f"{st.ips[i]} {base}.{st.ms[i]:03d}Z CLOSE {st.fds[i]}\n")
            self.cfiles.release(st.rels[i])
        st.open_files = False

    def _close_ended(self, t: float, active: set[int]) -> None:
        """Close the files of traced phases that did no I/O step at t; forget ended runs."""
        for run_no in [k for k in self.states if k not in active]:
            st = self.states[run_no]
            if st.open_files:
                self._close_files(st, t)
            if st.traced and st.seg is not None and st.seg.kind == "meta":
                for rel in st.rels:
                    self.cfiles.release(rel)
            st.seg = None
            st.phase = -1 if st.run.end is None else st.phase
            if st.run.end is not None:
                del self.states[run_no]

    def _demand(self, st: _RunState, acc: _StepAcc) -> None:
        seg = st.seg
        share = seg.rate * st.fwd_share
        acc.clients[st.fwd_u] += st.clients
        if seg.kind == "meta":
            acc.dem_meta[st.fwd_u] += share
            return
        amp = st.amp if seg.kind == "read" else 1.0
        e1 = self.threads / self.fwd_iops + seg.reqsize * amp * self.threads / self.fwd_bw
        acc.dem_n[st.fwd_u] += share
        acc.dem_w[st.fwd_u] += share * e1

    def _run_step(self, st: _RunState, vec: np.ndarray, t: float, day: str,
                  acc: _StepAcc, pair_inc: np.ndarray | None = None) -> None:
        seg = st.seg
        size = int(seg.reqsize)
        n = st.n
        old = st.cum.copy()
        st.cum += vec[_COLS]
        new = st.cum
        qo, ro = np.divmod(old, n)
        qn, rn = np.divmod(new, n)
        lo, m = st.lo, st.m
        # per forwarding node: request q of a phase goes to node q mod n (round robin)
        # np.minimum/np.maximum: np.clip's dispatch costs more than the work at these sizes
        per_fwd = (m * (qn - qo)[None, :] + np.minimum(np.maximum(rn[None, :] - lo, 0), m)
                   - np.minimum(np.maximum(ro[None, :] - lo, 0), m))
        f = st.fwd_u
        md = per_fwd[:, _MD]
        if md.any():
            md_n = md.sum(axis=1)
            self.md[st.fs_i, f] += md
            acc.srv[f, 0] += md_n
            if seg.kind != "meta":
                acc.dem_meta[f] += md_n
        data = []
        pair_ops: dict[int, np.ndarray] = {}
        for c in (0, 1):
            if new[c] != old[c]:
                split = _split(int(new[c] - old[c]), pair_inc) if pair_inc is not None else None
                if split is not None:       # per-pair progress (a fault slows some pairs)
                    pair_ops[c] = split
                    node_ops = np.bincount(st.pair_node, weights=split,
                                           minlength=n).astype(np.int64)
                    per_fwd[:, c] = np.add.reduceat(node_ops, st.lo[:, 0])
                    data.append((c, node_ops))
                    continue
                i = st.ar
                data.append((c, (qn[c] - qo[c]) + (i < rn[c]).astype(np.int64)
                             - (i < ro[c]).astype(np.int64)))
        if data:
            e1 = self.threads / self.fwd_iops + size * self.threads / self.fwd_bw
            acc.srv[f, 1:] += per_fwd[:, :2]
            acc.srv_w[f, 0] += per_fwd[:, 0] * (e1 + size * (st.amp - 1) * self.threads
                                                / self.fwd_bw)
            acc.srv_w[f, 1] += per_fwd[:, 1] * e1
            out = self._lustre(st, data, size, t, pair_ops)
            self._ost_service(st, out, size, acc)
        if st.traced:
            if seg.kind == "meta":
                i = st.ar[:, None]
                d = ((qn - qo)[None, _MD] + (i < rn[None, _MD]).astype(np.int64)
                     - (i < ro[None, _MD]).astype(np.int64))
                self._trace_meta(st, d, t, day)
            else:
                self._trace_data(st, data, size, t, day)

    def _lustre(self, st: _RunState, data: list, size: int, t: float,
                pair_ops: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """Split each node's requests over its OSTs; add the (fwd, OST) traffic. Returns the
        Lustre read/write requests per (fwd, OST) key of the run (read-ahead included)."""
        k = st.pair_k
        shift = int(t)
        nk = len(st.key_f)
        out = np.zeros((nk, 2), dtype=np.int64)
        for c, node_ops in data:
            if pair_ops and c in pair_ops:
                po = pair_ops[c]
            else:
                q, r = np.divmod(node_ops[st.pair_node], k)
                po = q + (((st.pair_j + shift) % k) < r)
            out[:, c] = np.bincount(st.key_inv, weights=po, minlength=nk).astype(np.int64)
        if st.amp != 1.0 and out[:, 0].any():
            out[:, 0] = np.rint(out[:, 0] * st.amp).astype(np.int64)
        rpc_per = -(-size // RPC_MAX)
        pages_per = -(-size // PAGE)
        upd = np.empty((nk, 5), dtype=np.int64)
        upd[:, :2] = out * rpc_per
        upd[:, 2] = (out[:, 0] + out[:, 1]) * pages_per
        upd[:, 3:] = out * size
        self.lc[st.key_f, st.key_o, :5] += upd
        self.touched[st.key_f, st.key_o] = True
        return out

    def _ost_factors(self, t: float) -> None:
        """The step's capacity factor of every OST (1, or a fault's factor while it lasts)."""
        self.ost_mult[:] = 1.0
        for oi, factor, a, b in self.ost_faults:
            if a <= t < b:
                self.ost_mult[oi] *= factor

    def _ost_service(self, st: _RunState, out: np.ndarray, size: int, acc: _StepAcc) -> None:
        """The OSTs' service time of the run's Lustre requests this step: a request takes
        (1/peak_iops + size/peak_bw) / factor at its OST (`acc.ost_busy`, what the client
        waits for before queueing). A faulty OST (factor < 1) also holds the LWFS thread
        that executes the request longer: its exe time grows by the OST's extra service time
        (1/factor - 1) x the healthy one per Lustre request."""
        o = st.key_o
        base = 1.0 / self.ost_iops[o] + size / self.ost_bw[o]
        mult = self.ost_mult[o]
        np.add.at(acc.ost_busy, (st.key_f, o), out.sum(axis=1) * base / mult)
        slow = mult < 1.0
        if not slow.any():
            return
        extra = base[slow] * (1.0 / mult[slow] - 1.0)
        for c in (0, 1):
            np.add.at(acc.srv_w[:, c], st.key_f[slow], out[slow, c] * extra)

    def _rpc_wait(self, acc: _StepAcc) -> None:
        """The Lustre clients' wait for their OSTs' replies this step (osc req_waittime):
        service time x (1 + queueing at the OST's utilisation) x log-normal noise (20 %).
        Each client keeps at most RPCS_IN_FLIGHT RPCs outstanding per OST, so an RPC waits
        at most RPCS_IN_FLIGHT x (clients sending to the OST) service times (a closed
        queue)."""
        busy = acc.ost_busy
        f, o = np.nonzero(busy)
        if not len(f):
            return
        rho = busy.sum(axis=0) / self.engine.dt
        cap = RPCS_IN_FLIGHT * (busy > 0).sum(axis=0)
        noise = self.rng.lognormal(-0.02, 0.2, len(f))
        wait = busy[f, o] * np.minimum(1.0 + _wait_factor(rho[o]), cap[o]) * noise
        self.lc[f, o, 5] += np.rint(wait * 1e6).astype(np.int64)

    def _trace_data(self, st: _RunState, data: list, size: int, t: float, day: str) -> None:
        base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))
        for c, ops in data:
            op = ("READ", "WRITE")[c]
            offs = st.cursor.copy()
            st.cursor += ops * size
            for i in np.flatnonzero(ops).tolist():
                self.cfiles.get(st.rels[i], day).write(
                    f"{st.ips[i]} {base}.{st.ms[i] + 2 + c:03d}Z {op} {st.fds[i]} "
                    f"{int(offs[i])} {size} {int(ops[i])}\n")

    def _trace_meta(self, st: _RunState, md: np.ndarray, t: float, day: str) -> None:
        base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))
        for i in np.flatnonzero(md.any(axis=1)).tolist():
            ip, fd, path, ms = st.ips[i], st.fds[i], st.paths[i], st.ms[i]
            lines = [f"{ip} {base}.{ms + 2 + j:03d}Z {_TRACE_OPS[j]} {fd} path={path} "
                     f"count={c}\n" for j, c in enumerate(md[i].tolist()) if c]
            self.cfiles.get(st.rels[i], day).write("".join(lines))

    # forwarding-node latency ---------------------------------------------------------------
    def _latency(self, t: float, acc: _StepAcc, md_fs: np.ndarray) -> None:
        slow = np.ones(len(self.fwds))
        for fi, factor, a, b in self.faults:
            if a <= t < b:
                slow[fi] *= factor
        mds_rho = float(np.max((md_fs + self.bg_total_rate) / self.mds_peak))
        e_mt = self.threads / (MD_LIGHT * self.fwd_iops)   # thread time of a metadata request
        e_md = e_mt + MD_BASE * (1.0 + _wait_scalar(min(mds_rho, 2.0)))
        work = (acc.dem_w + acc.dem_meta * e_mt) / slow
        lam = acc.dem_n + acc.dem_meta
        e_bar = work / np.maximum(lam, 1e-12)
        w_open = WAIT0 + e_bar * _wait_factor(work / self.threads)
        # a closed system: each client process has one request outstanding, so the queue
        # holds at most `clients` and the response time is clients / throughput
        x = acc.srv.sum(axis=1)
        w_closed = np.maximum(acc.clients / np.maximum(x, 1) - e_bar, WAIT0)
        wait = np.minimum(w_open, w_closed)
        self.q_sum += np.minimum(lam * wait, acc.clients)
        if not acc.srv.any():
            return
        e_rw = acc.srv_w / np.maximum(acc.srv[:, 1:], 1) / slow[:, None]
        means = np.stack([e_md / slow, wait, e_rw[:, 0], wait, e_rw[:, 1], wait], axis=1)
        p = self._buckets(means)
        n = np.repeat(acc.srv, 2, axis=1)
        self.mass += p * n[..., None]
        self.served += n

    def _buckets(self, means: np.ndarray) -> np.ndarray:
        """Bucket probabilities (F, 6, 8) of exe/wait log-normals with these means (F, 6)."""
        idx = np.rint((np.log(np.maximum(means, 1e-300)) - _LN_LO) / _LN_STEP).astype(np.int64)
        np.minimum(np.maximum(idx, 0, out=idx), self.table.shape[1] - 1, out=idx)
        return self.table[_SIG_COL[None, :], idx]

    # samples -------------------------------------------------------------------------------
    def _sample(self, g: float) -> None:
        self._sample_server(g)
        self._sample_lustre(g)
        self._sample_mds(g)
        self.samples += 1

    def _stamp(self, layer: str, host: str, g: float) -> tuple[int, str, str]:
        ms = int(round(g * 1000)) + self.jitter[(layer, host)]
        return ms, _iso_ms(ms), day_of(ms / 1000)

    def _sample_server(self, g: float) -> None:
        m = self.mass
        tot = m.sum(axis=-1, keepdims=True)
        p = np.where(tot > 0, m / np.where(tot > 0, tot, 1), 1.0 / m.shape[-1])
        self.hist += self.rng.multinomial(self.served, p)
        queue = np.rint(self.q_sum / max(self.q_steps, 1)).astype(np.int64)
        self.mass[:] = 0
        self.served[:] = 0
        self.q_sum[:] = 0
        self.q_steps = 0
        for fi, (fwd, ip) in enumerate(zip(self.fwds, self.fwd_ips, strict=True)):
            ms, iso, day = self._stamp("lwfs-server", fwd, g)
            local = dt.datetime.fromtimestamp(ms // 1000, self.tz).strftime("%Y-%m-%d %H:%M:%S")
            head = f"{ip} [{local}]  [Trace]: "
            lines = [f"{head}{cls} {kind}: {' '.join(map(str, self.hist[fi, k].tolist()))} {iso}"
                     for k, (cls, kind) in enumerate(SERVER_LINES)]
            lines.append(f"{head}queue length: {int(queue[fi])} {iso}")
            self.files.get(f"lwfs-server/{fwd}", day).write("\n".join(lines) + "\n")

    def _sample_lustre(self, g: float) -> None:
        lc, prev = self.lc, self.lc_prev
        d_rpc = (lc[..., 0] + lc[..., 1]) - (prev[..., 0] + prev[..., 1])
        d_pages = lc[..., 2] - prev[..., 2]
        ppr = np.where(d_rpc > 0, np.rint(d_pages / np.maximum(d_rpc, 1)), 0).astype(np.int64)
        for fi, (fwd, ip) in enumerate(zip(self.fwds, self.fwd_ips, strict=True)):
            osts = np.flatnonzero(self.touched[fi])
            if not len(osts):
                continue
            _, iso, day = self._stamp("lustre-client", fwd, g)
            rows = lc[fi, osts].tolist()
            pp = ppr[fi, osts].tolist()
            lines = [f"{ip} {iso} {self.ost_names[o]} {r[0]} {r[1]} {p} {r[5]}"
                     for o, r, p in zip(osts.tolist(), rows, pp, strict=True)]
            self.files.get(f"lustre-client/{fwd}", day).write("\n".join(lines) + "\n")
        ost = lc.sum(axis=0)
        ost_prev = prev.sum(axis=0)
        d_rpc = (ost[:, 0] + ost[:, 1]) - (ost_prev[:, 0] + ost_prev[:, 1])
        ppr = np.where(d_rpc > 0, np.rint((ost[:, 2] - ost_prev[:, 2]) / np.maximum(d_rpc, 1)),
                       0).astype(np.int64)
        for oss, idx in self.oss_hosts:
            _, iso, day = self._stamp("ost", oss, g)
            lines = [f"{oss} {iso} {self.ost_names[o]} {int(ost[o, 0])} {int(ost[o, 1])} "
                     f"{int(ppr[o])} {int(ost[o, 3])} {int(ost[o, 4])}" for o in idx]
            self.files.get(f"ost/{oss}", day).write("\n".join(lines) + "\n")
        self.lc_prev = lc.copy()

    def _sample_mds(self, g: float) -> None:
        for si, mds in enumerate(self.mds_hosts):
            _, iso, day = self._stamp("mds", mds, g)
            lines = []
            for fi, ip in enumerate(self.fwd_ips):
                v = self.md[si, fi]
                if v.any():
                    lines.append(f"{ip} {iso} " + " ".join(
                        f"{n}={c}" for n, c in zip(MDS_NAMES, v.tolist(), strict=True)))
            for src, rate in self.bg_rate.items():
                v = self.bg[(mds, src)]
                if self.samples:        # the background of the interval before this sample
                    v += self.rng.poisson(rate * self.sample_s * self.bg_mix)
                lines.append(f"{src} {iso} " + " ".join(
                    f"{n}={c}" for n, c in zip(MDS_NAMES, v.tolist(), strict=True)))
            self.files.get(f"mds/{mds}", day).write("\n".join(lines) + "\n")

    # truth ---------------------------------------------------------------------------------
    def _day(self, t: float) -> str:
        k = int(t // 86400)
        if self._day_cache[0] != k:
            self._day_cache = (k, day_of(k * 86400))
        return self._day_cache[1]

    def _daily(self, day: str) -> dict[str, np.ndarray]:
        d = self.daily.get(day)
        if d is None:
            d = self.daily[day] = {k: np.zeros(2, dtype=np.int64) for k in
                                   ("compute", "compute_traced", "forwarding", "ost")}
        return d

    def _flush_minute(self) -> None:
        """Per-minute bandwidth of every forwarding node and OST, and the daily totals."""
        if self.minute is None:
            self.lc_min = self.lc.copy()
            return
        d = (self.lc - self.lc_min)[..., 3:5]
        self.lc_min = self.lc.copy()
        if not d.any():
            return
        stamp = dt.datetime.fromtimestamp(self.minute, dt.timezone.utc).isoformat()
        by_fwd, by_ost = d.sum(axis=1), d.sum(axis=0)
        tot = self._daily(self._day(self.minute))
        tot["forwarding"] += by_fwd.sum(axis=0)
        tot["ost"] += by_ost.sum(axis=0)
        for arr, names, out in ((by_fwd, self.fwds, self.bw_fwd),
                                (by_ost, self.ost_names, self.bw_ost)):
            for i in np.flatnonzero(arr.any(axis=1)).tolist():
                out[names[i]].append([stamp, round(arr[i, 0] / 60, 1), round(arr[i, 1] / 60, 1)])

    def truth_extra(self) -> dict:
        """Ground truth of the Beacon layers, merged into truth.json."""
        layers: dict[str, dict] = defaultdict(dict)
        for day, d in sorted(self.daily.items()):
            for k, v in d.items():
                layers[k][day] = {"read_bytes": int(v[0]), "write_bytes": int(v[1])}
        strag = []
        if self.engine is not None:
            by_no = {r.run_no: r for r in self.engine.runs}
            for run_no, items in sorted(self.engine.stragglers.items()):
                r = by_no[run_no]
                strag.extend({"run_no": run_no, "job_id": r.job_id, "n_nodes": len(r.nodes),
                              **it} for it in items)
        return {"stragglers": strag,
                "straggler_large_job_nodes": self.site.settings.thresholds.large_job_nodes,
                "beacon": {
            "sample_s": self.sample_s,
            "traced_fraction": self.traced_fraction,
            "traced_runs": sorted(self.traced),
            "layers": dict(layers),
            "bandwidth_basis": "forwarding-to-Lustre bytes per second (reads amplified)",
            "fwd_bandwidth": dict(self.bw_fwd),
            "ost_bandwidth": dict(self.bw_ost),
            "mds_background": {
                mds: {src: {"rate_ops_s": round(self.bg_rate[src], 3),
                            "ops": {n: int(c) for n, c in
                                    zip(MDS_NAMES, self.bg[(mds, src)].tolist(), strict=True)
                                    if c}}
                      for src in self.bg_rate}
                for mds in self.mds_hosts},
        }}


class _StepAcc:
    """One step's per-forwarding-node load: demand and what was served."""

    __slots__ = ("dem_n", "dem_w", "dem_meta", "srv", "srv_w", "clients", "ost_busy")

    def __init__(self, nf: int, no: int) -> None:
        self.dem_n = np.zeros(nf)        # demanded data requests/s
        self.dem_w = np.zeros(nf)        # their thread time (no fault)
        self.dem_meta = np.zeros(nf)     # demanded metadata requests/s
        self.srv = np.zeros((nf, 3), dtype=np.int64)   # served meta, read, write requests
        self.srv_w = np.zeros((nf, 2))   # thread time of served reads, writes (no fault)
        self.clients = np.zeros(nf)      # processes doing I/O through the node
        self.ost_busy = np.zeros((nf, no))   # OST service seconds of its Lustre requests


def _split(total: int, weights: np.ndarray) -> np.ndarray | None:
    """`total` requests over the pairs in proportion to `weights` (largest remainder)."""
    w = np.clip(weights, 0.0, None)
    s = float(w.sum())
    if total <= 0 or s <= 0:
        return None
    x = total * w / s
    out = np.floor(x).astype(np.int64)
    rest = total - int(out.sum())
    if rest > 0:
        out[np.argsort(-(x - out), kind="stable")[:rest]] += 1
    return out


# --- job log ----------------------------------------------------------------------------------


def _iso_s(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_job_log(site: Site, runs: list[Run], out: Path) -> None:
    """Beacon's job log: `<out>/beacon/jobs/<YYYY-MM-DD>.log` by start day (FORMATS.md §3).

    One line per run, `job_id<TAB>nodelist<TAB>job_name<TAB>start<TAB>end`, times ISO-8601
    UTC to the second (start floored, end rounded up, so the job encloses its run), node
    list in Slurm host-list syntax. Sets `run.job_id` and `run.app_id` (1000000 + run_no).
    """
    parts = _name_parts(site.data["compute"]["name_format"])
    by_day: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for r in runs:
        r.job_id = str(1000000 + r.run_no)
        r.app_id = r.job_id
        if r.start is None:
            continue
        names = [site.compute_nodes[n] for n in r.nodes]
        nodelist = slurm_hostlist(names, *parts) if parts else ",".join(names)
        name = f"{r.app.archetype.exe.split('.')[0]}_{r.app.app_no:03d}"
        start = math.floor(r.start)
        end = _iso_s(math.ceil(r.end)) if r.end is not None else "-"
        by_day[day_of(start)].append((r.start, f"{r.job_id}\t{nodelist}\t{name}\t"
                                               f"{_iso_s(start)}\t{end}"))
    folder = Path(out) / "beacon" / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    for day, lines in by_day.items():
        with (folder / f"{day}.log").open("w") as fh:
            for _, text in sorted(lines):
                fh.write(text + "\n")


__all__ = ["BeaconWriter", "write_job_log", "SAMPLE_S"]
