"""Discrete-time engine: plays run plans against finite OSTs, forwarding nodes and MDSes.

Every step of `dt` seconds: the scheduler starts queued runs on free nodes; each run in
an I/O segment demands bandwidth and operations on its OSTs (and forwarding nodes, and
the MDS of its filesystem); a resource whose demand exceeds its capacity (reduced while
a fault is injected) serves every user the same fraction; a run progresses at the
smallest fraction among its resources. What each run moved in the step goes to the
sinks (raw writers) as integer counters, and to the run's ground truth, together with
who slowed it (neighbours sharing the binding resource, or a faulty component).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from lassi.config import Site
from lassi.sim.counters import IDX, MDS, N
from lassi.sim.workload import Run, place_io

EPILOGUE_S = 360.0   # nodes stay busy this long after a run (node health check)
MD_COLS = np.array([IDX[c] for c in MDS])


@dataclass
class Fault:
    """A component that is alive but slow: capacity × factor during [start, end)."""

    kind: str       # ost | fwd
    name: str
    factor: float
    start: float
    end: float


@dataclass
class RunTruth:
    """What really happened to one run (filled by the engine)."""

    totals: np.ndarray = field(default_factory=lambda: np.zeros(N, dtype=np.int64))
    hours: dict[int, np.ndarray] = field(default_factory=dict)
    phases: list[dict] = field(default_factory=list)
    peak_bps: float = 0.0
    io_seconds: float = 0.0
    moved_bytes: int = 0
    lost_s: float = 0.0
    by_component: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    by_neighbour: dict[int, float] = field(default_factory=lambda: defaultdict(float))


class Resources:
    """Capacities of every OST, forwarding node and MDS, indexed globally."""

    def __init__(self, site: Site) -> None:
        self.names: list[str] = []
        self.kind: list[str] = []
        bw, iops = [], []
        self.ost_base: dict[str, int] = {}
        self.mds_of: dict[str, int] = {}
        for fs in site.filesystems:
            self.ost_base[fs.name] = len(self.names)
            for o in fs.osts:
                self.names.append(o)
                self.kind.append("ost")
                bw.append(fs.ost_peak_bw)
                iops.append(fs.ost_peak_iops)
        for fs in site.filesystems:
            self.mds_of[fs.name] = len(self.names)
            self.names.append(fs.mds)
            self.kind.append("mds")
            bw.append(np.inf)
            iops.append(fs.mds_peak_ops)
        self.fwd_base = len(self.names)
        for f in site.fwd_nodes:
            self.names.append(f)
            self.kind.append("fwd")
            bw.append(site.fwd_peak_bw)
            iops.append(float(site.data["forwarding"]["peak_iops"]))
        self.bw = np.array(bw, dtype=float)
        self.iops = np.array(iops, dtype=float)
        self.index = {n: i for i, n in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)


class _Active:
    """Per-run state while it runs."""

    __slots__ = ("run", "seg", "done", "seg_start", "seg_bytes", "res", "w_data", "md_res",
                 "fwd_res", "fwd_w")

    def __init__(self, run: Run) -> None:
        self.run = run
        self.seg = 0
        self.done = 0.0
        self.seg_start = run.start
        self.seg_bytes = 0


class Engine:
    """Run the plans; call `sinks` with what every running run moved in each step."""

    def __init__(self, site: Site, runs: list[Run], faults: list[Fault], dt: float,
                 rng: np.random.Generator) -> None:
        self.site = site
        self.runs = runs
        self.faults = faults
        self.dt = float(dt)
        self.rng = rng
        self.res = Resources(site)
        self.truth: dict[int, RunTruth] = {r.run_no: RunTruth() for r in runs}
        self.node_fwd = None
        if site.has_forwarding:
            per = int(site.data["forwarding"]["nodes_per_fwd"])
            self.node_fwd = self.res.fwd_base + np.arange(len(site.compute_nodes)) // per

    # --- scheduling -------------------------------------------------------------------------
    def _start_runs(self, t: float, queue: list[Run], free_at: np.ndarray,
                    active: list[_Active]) -> None:
        still = []
        blocked = False
        free = np.flatnonzero(free_at <= t)
        for run in queue:
            if run.submit > t or blocked or len(free) == 0:
                still.append(run)
                continue
            if len(free) < run.app.n_nodes:
                still.append(run)
                blocked = blocked or (t - run.submit > 7200)   # reserve for long waiters
                continue
            nodes, free = free[: run.app.n_nodes], free[run.app.n_nodes:]
            free_at[nodes] = np.inf
            run.nodes = [int(n) for n in nodes]
            run.start = t + float(self.rng.uniform(0.0, 0.9))
            fs = self.site.fs(run.app.fs)
            place_io(self.rng, run, len(fs.osts))
            active.append(self._activate(run))
        queue[:] = still

    def _activate(self, run: Run) -> _Active:
        a = _Active(run)
        base = self.res.ost_base[run.app.fs]
        w: dict[int, float] = defaultdict(float)
        share = 1.0 / len(run.io_nodes)
        for n in run.io_nodes:
            osts = run.osts[n]
            for o in osts:
                w[base + o] += share / len(osts)
        a.res = np.array(list(w), dtype=np.int64)
        a.w_data = np.array(list(w.values()))
        a.md_res = self.res.mds_of[run.app.fs]
        if self.node_fwd is not None:
            fw: dict[int, float] = defaultdict(float)
            for n in run.io_nodes:
                fw[int(self.node_fwd[n])] += share
            a.fwd_res = np.array(list(fw), dtype=np.int64)
            a.fwd_w = np.array(list(fw.values()))
        else:
            a.fwd_res = np.zeros(0, dtype=np.int64)
            a.fwd_w = np.zeros(0)
        self._fit_solo(a)
        return a

    def _fit_solo(self, a: _Active, ceiling: float = 1.0) -> None:
        """Cap each I/O segment's rate so the run alone loads no resource beyond `ceiling`.

        The plan's durations then are the true solo times: any later slowdown is caused
        by neighbours or faults, never by the run's own demand.
        """
        for i, seg in enumerate(a.run.plan):
            if seg.kind == "compute":
                continue
            a.seg, saved = i, a.seg
            _pos, _res, load = self._demands([a])
            a.seg = saved
            util = float(np.bincount(_res, weights=load).max()) if len(load) else 0.0
            if util > ceiling:
                seg.rate *= ceiling / util
                seg.dur = seg.ops / seg.rate

    # --- one step ---------------------------------------------------------------------------
    def _capacity(self, t: float) -> np.ndarray:
        mult = np.ones(len(self.res))
        for f in self.faults:
            if f.start <= t < f.end:
                mult[self.res.index[f.name]] *= f.factor
        return mult

    def _demands(self, io: list[_Active]):
        """Concatenated (entry -> run position, resource, utilisation contribution)."""
        pos, res, load = [], [], []
        for i, a in enumerate(io):
            seg = a.run.plan[a.seg]
            md_rate = float(seg.extra[MD_COLS].sum()) / seg.dur if seg.extra is not None else 0
            if seg.kind == "meta":
                md_rate = seg.rate
            else:
                bps = seg.rate * seg.reqsize
                amp = a.run.app.archetype.read_amplification if seg.kind == "read" else 1.0
                per = (bps * amp / self.res.bw[a.res] + seg.rate / self.res.iops[a.res])
                pos.append(np.full(len(a.res), i))
                res.append(a.res)
                load.append(a.w_data * per)
                if len(a.fwd_res):
                    fper = bps * amp / self.res.bw[a.fwd_res] + seg.rate / self.res.iops[a.fwd_res]
                    pos.append(np.full(len(a.fwd_res), i))
                    res.append(a.fwd_res)
                    load.append(a.fwd_w * fper)
            if md_rate > 0:
                pos.append(np.array([i]))
                res.append(np.array([a.md_res]))
                load.append(np.array([md_rate / self.res.iops[a.md_res]]))
        if not pos:
            return np.zeros(0, int), np.zeros(0, int), np.zeros(0)
        return np.concatenate(pos), np.concatenate(res), np.concatenate(load)

    def _attribute(self, t: float, io: list[_Active], speed: np.ndarray, pos, res, load,
                   util, mult) -> None:
        """Charge the time each slowed run lost to faults and to neighbours' load."""
        factor = np.minimum(1.0, 1.0 / np.maximum(util, 1e-12))
        for i in np.flatnonzero(speed < 0.999):
            mine = pos == i
            r = int(res[mine][np.argmin(factor[res[mine]])])
            lost = self.dt * (1.0 - speed[i])
            tr = self.truth[io[i].run.run_no]
            tr.lost_s += lost
            # part of the loss due to reduced capacity (fault), part to shared load
            nominal = util[r] * mult[r]
            fault_part = 0.0
            if mult[r] < 1.0:
                slow_nominal = min(1.0, 1.0 / max(nominal, 1e-12))
                fault_part = max(0.0, slow_nominal - speed[i]) / max(1 - speed[i], 1e-12)
                tr.by_component[self.res.names[r]] += lost * fault_part
            others = (res == r) & (pos != i)
            tot = load[res == r].sum()
            if tot > 0 and others.any():
                for j, ld in zip(pos[others], load[others], strict=True):
                    tr.by_neighbour[io[int(j)].run.run_no] += lost * (1 - fault_part) * ld / tot

    def run(self, start: float, sinks: list) -> float:
        """Simulate from `start` until every run has ended; returns the end time."""
        queue = sorted(self.runs, key=lambda r: r.submit)
        free_at = np.zeros(len(self.site.compute_nodes))
        active: list[_Active] = []
        t = start
        for s in sinks:
            s.begin(self, start)
        while queue or active:
            if queue and (t - start) % 60 < self.dt:   # the scheduler cycles every minute
                self._start_runs(t, queue, free_at, active)
            io = [a for a in active if a.run.plan[a.seg].kind != "compute"]
            counts = np.zeros((len(io), N), dtype=np.int64)
            if io:
                pos, res, load = self._demands(io)
                mult = self._capacity(t)
                util = np.bincount(res, weights=load, minlength=len(self.res)) / mult
                factor = np.minimum(1.0, 1.0 / np.maximum(util, 1e-12))
                speed = np.ones(len(io))
                np.minimum.at(speed, pos, factor[res])
                if (speed < 0.999).any():
                    self._attribute(t, io, speed, pos, res, load, util, mult)
                for i, a in enumerate(io):
                    counts[i] = self._progress(a, speed[i], t)
            for s in sinks:
                s.step(t, [a.run for a in io], counts)
            t += self.dt
            active = self._advance(active, t, free_at)
        for s in sinks:
            s.end(t)
        return t

    def _progress(self, a: _Active, speed: float, t: float) -> np.ndarray:
        seg = a.run.plan[a.seg]
        old = a.done
        a.done = min(float(seg.ops), a.done + seg.rate * self.dt * speed)
        vec = np.zeros(N, dtype=np.int64)
        d_ops = int(a.done) - int(old)
        if a.done >= seg.ops:
            d_ops = seg.ops - int(old)
        if seg.kind in ("read", "write"):
            vec[IDX[f"{seg.kind}_ops"]] = d_ops
            vec[IDX[f"{seg.kind}_bytes"]] = d_ops * seg.reqsize
        frac_old, frac_new = old / seg.ops, a.done / seg.ops
        if seg.extra is not None:
            vec += (np.floor(seg.extra * frac_new + 1e-9).astype(np.int64)
                    - np.floor(seg.extra * frac_old + 1e-9).astype(np.int64))
        tr = self.truth[a.run.run_no]
        tr.totals += vec
        hour = int(t // 3600) * 3600
        if hour not in tr.hours:
            tr.hours[hour] = np.zeros(N, dtype=np.int64)
        tr.hours[hour] += vec
        moved = int(vec[IDX["read_bytes"]] + vec[IDX["write_bytes"]])
        a.seg_bytes += moved
        tr.moved_bytes += moved
        tr.peak_bps = max(tr.peak_bps, moved / self.dt)
        tr.io_seconds += self.dt
        return vec

    def _advance(self, active: list[_Active], t: float, free_at: np.ndarray) -> list[_Active]:
        """Move runs to their next segment; end runs whose plan is done."""
        keep = []
        for a in active:
            seg = a.run.plan[a.seg]
            if seg.kind == "compute":
                finished = t - a.seg_start >= seg.dur - 1e-9
            else:
                finished = a.done >= seg.ops
                if finished:
                    self.truth[a.run.run_no].phases.append({
                        "kind": seg.kind, "start": a.seg_start, "end": t,
                        "bytes": a.seg_bytes, "ops": seg.ops, "reqsize": seg.reqsize,
                        "solo_s": seg.dur})
            if finished:
                a.seg += 1
                a.seg_start = t
                a.done = 0.0
                a.seg_bytes = 0
            if a.seg >= len(a.run.plan):
                a.run.end = t - float(self.rng.uniform(0.0, 0.5))
                free_at[a.run.nodes] = t + EPILOGUE_S
            else:
                keep.append(a)
        return keep
