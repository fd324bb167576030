"""Discrete-time engine: plays run plans against finite OSTs, forwarding nodes and MDSes.

Every step of `dt` seconds: the scheduler starts queued runs on free nodes; each run in
an I/O segment demands bandwidth and operations on its OSTs (and forwarding nodes, and
the MDS of its filesystem); a resource whose demand exceeds its capacity (reduced while
a fault is injected) serves every user the same fraction; a run progresses at the
smallest fraction among its resources. What each run moved in the step goes to the
sinks (raw writers) as integer counters, and to the run's ground truth, together with
who slowed it (neighbours sharing the binding resource, or a faulty component).

Stragglers (sites with forwarding nodes, Beacon Figs. 14-15). A run's data is split over
(I/O node, OST) pairs (each node's share evenly over its OSTs). While no injected fault
touches a run, all pairs progress together at the run's speed (as above). Once a fault is
active on one of the run's OSTs or forwarding nodes during a data segment, every pair
progresses at its own pace until the segment ends: the pairs through a faulty component at
min(healthy speed, that component's factor), the others at the healthy speed (the
smallest factor among the run's fault-free resources); a finished pair stops loading its
resources, and the segment ends when the slowest pair is done. `pair_step` hands the
sinks each such run's per-pair progress of the step (requests, in the order of sorted
I/O nodes, then the node's OSTs). `stragglers[run_no]` lists the faulty components the
run met this way whose bandwidth for the run (its bytes through the component / the
seconds it moved them, counting while the run progresses per pair only its pairs whose
other end is not faulty) stayed >= STRAGGLER_TRUTH_MIN times under the median of the run's
components of that kind.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from lassi.core.config import Site
from lassi.sim.counters import IDX, MDS, N
from lassi.sim.workload import Run, place_io

EPILOGUE_S = 360.0   # nodes stay busy this long after a run (node health check)
STRAGGLER_TRUTH_MIN = 1.5   # truth lists a faulty component this many times slower
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
                 "fwd_res", "fwd_w", "pairs", "p_done", "even_bytes", "even_steps", "strag")

    def __init__(self, run: Run) -> None:
        self.run = run
        self.seg = 0
        self.done = 0.0
        self.seg_start = run.start
        self.seg_bytes = 0
        self.pairs: _Pairs | None = None
        self.p_done: np.ndarray | None = None   # per-pair requests done (per-pair progress)
        self.even_bytes = 0.0     # bytes moved while all pairs progressed together
        self.even_steps = 0
        self.strag: _StragAcc | None = None


class _Pairs:
    """A run's (I/O node, OST) pairs: share of the data, OST and forwarding-node positions."""

    __slots__ = ("w", "ost", "fwd", "ost_pos", "fwd_pos")

    def __init__(self, a: _Active, base: int, node_fwd: np.ndarray | None) -> None:
        run = a.run
        nodes = sorted(run.io_nodes)
        share = 1.0 / len(nodes)
        pn, po, pw = [], [], []
        for i, n in enumerate(nodes):
            for o in run.osts[n]:
                pn.append(i)
                po.append(base + o)
                pw.append(share / len(run.osts[n]))
        self.w = np.array(pw)
        self.ost = np.array(po, dtype=np.int64)
        where = {int(r): k for k, r in enumerate(a.res)}
        self.ost_pos = np.array([where[int(r)] for r in self.ost], dtype=np.int64)
        if node_fwd is not None and len(a.fwd_res):
            self.fwd = node_fwd[np.array(nodes, dtype=np.int64)][np.array(pn, dtype=np.int64)]
            fwhere = {int(r): k for k, r in enumerate(a.fwd_res)}
            self.fwd_pos = np.array([fwhere[int(r)] for r in self.fwd], dtype=np.int64)
        else:
            self.fwd = self.fwd_pos = None


class _StragAcc:
    """Per-component bytes and active steps of a run once it progressed per pair."""

    __slots__ = ("ost_b", "ost_s", "fwd_b", "fwd_s", "faulty")

    def __init__(self, a: _Active) -> None:
        self.ost_b = np.zeros(len(a.res))
        self.ost_s = np.zeros(len(a.res))
        self.fwd_b = np.zeros(len(a.fwd_res))
        self.fwd_s = np.zeros(len(a.fwd_res))
        self.faulty: set[int] = set()


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
        self.per_pair = bool(site.has_forwarding)     # stragglers: per-pair progress
        self.pair_step: dict[int, np.ndarray] = {}
        self.stragglers: dict[int, list[dict]] = {}
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
        if self.per_pair:
            a.pairs = _Pairs(a, base, self.node_fwd)
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
    def capacity(self, t: float) -> np.ndarray:
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
                w_data, fwd_w = a.w_data, a.fwd_w
                if a.p_done is not None:      # per-pair progress: finished pairs load nothing
                    w_data, fwd_w = self._live_weights(a, seg)
                pos.append(np.full(len(a.res), i))
                res.append(a.res)
                load.append(w_data * per)
                if len(a.fwd_res):
                    fper = bps * amp / self.res.bw[a.fwd_res] + seg.rate / self.res.iops[a.fwd_res]
                    pos.append(np.full(len(a.fwd_res), i))
                    res.append(a.fwd_res)
                    load.append(fwd_w * fper)
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
                mult = self.capacity(t)
                util = np.bincount(res, weights=load, minlength=len(self.res)) / mult
                factor = np.minimum(1.0, 1.0 / np.maximum(util, 1e-12))
                speed = np.ones(len(io))
                np.minimum.at(speed, pos, factor[res])
                if (speed < 0.999).any():
                    self._attribute(t, io, speed, pos, res, load, util, mult)
                self.pair_step = {}
                for i, a in enumerate(io):
                    sp = (self._pair_speeds(a, i, pos, res, load, factor, mult) if self.per_pair
                          else None)
                    counts[i] = self._progress(a, speed[i], t, sp)
            for s in sinks:
                s.step(t, [a.run for a in io], counts)
            t += self.dt
            active = self._advance(active, t, free_at)
        for s in sinks:
            s.end(t)
        return t

    def _progress(self, a: _Active, speed: float, t: float,
                  pair_speed: np.ndarray | None = None) -> np.ndarray:
        seg = a.run.plan[a.seg]
        old = a.done
        if pair_speed is None:
            a.done = min(float(seg.ops), a.done + seg.rate * self.dt * speed)
        else:
            self._pair_progress(a, seg, pair_speed)
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
        if pair_speed is None and moved:
            a.even_bytes += moved
            a.even_steps += 1
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
                a.p_done = None
            if a.seg >= len(a.run.plan):
                if a.strag is not None:
                    self._straggler_truth(a)
                a.run.end = t - float(self.rng.uniform(0.0, 0.5))
                free_at[a.run.nodes] = t + EPILOGUE_S
            else:
                keep.append(a)
        return keep

    # --- stragglers: per-pair progress ---------------------------------------------------------
    def _live_weights(self, a: _Active, seg) -> tuple[np.ndarray, np.ndarray]:
        """OST and forwarding-node weights of the pairs that still have data to move."""
        p = a.pairs
        live = p.w * (a.p_done < p.w * seg.ops)
        w_data = np.bincount(p.ost_pos, weights=live, minlength=len(a.res))
        fwd_w = (np.bincount(p.fwd_pos, weights=live, minlength=len(a.fwd_res))
                 if p.fwd_pos is not None else a.fwd_w)
        return w_data, fwd_w

    def _pair_speeds(self, a: _Active, i: int, pos, res, load, factor,
                     mult) -> np.ndarray | None:
        """Per-pair speeds while a fault touches the run's data segment, else None."""
        seg = a.run.plan[a.seg]
        p = a.pairs
        if seg.kind not in ("read", "write") or p is None:
            return None
        slow_o = mult[p.ost] < 1.0
        slow_f = mult[p.fwd] < 1.0 if p.fwd is not None else np.zeros(len(p.w), dtype=bool)
        if a.p_done is None:
            if not (slow_o.any() or slow_f.any()):
                return None
            a.p_done = p.w * a.done
            if a.strag is None:
                a.strag = _StragAcc(a)
        mine = res[(pos == i) & (load > 0)]     # the resources the run still loads
        ok = mult[mine] >= 1.0
        healthy = float(factor[mine[ok]].min()) if ok.any() else 1.0
        sp = np.full(len(p.w), healthy)
        sp = np.where(slow_o, np.minimum(sp, factor[p.ost]), sp)
        a.strag.faulty.update(int(r) for r in p.ost[slow_o])
        if p.fwd is not None:
            sp = np.where(slow_f, np.minimum(sp, factor[p.fwd]), sp)
            a.strag.faulty.update(int(r) for r in p.fwd[slow_f])
        return sp

    def _pair_progress(self, a: _Active, seg, sp: np.ndarray) -> None:
        """Advance every pair at its own speed; record the step's per-pair requests."""
        p = a.pairs
        cap = p.w * seg.ops
        new = np.minimum(cap, a.p_done + p.w * seg.rate * self.dt * sp)
        inc = new - a.p_done
        a.p_done = new
        old = a.done
        a.done = float(seg.ops) if (new >= cap).all() else max(old, min(float(seg.ops),
                                                                         float(new.sum())))
        self.pair_step[a.run.run_no] = inc
        moved = inc * seg.reqsize
        st = a.strag
        # a component's own pace: its pairs whose other end (OST / forwarding node) is fine
        # (a mask over the resources: np.isin costs more than the work at these sizes)
        faulty = None
        if st.faulty:
            faulty = np.zeros(len(self.res), dtype=bool)
            faulty[list(st.faulty)] = True
        # bytes of pairs whose forwarding node (for the OST's pace) / OST (for the node's)
        # is not faulty
        ost_w = moved if faulty is None or p.fwd is None else np.where(
            faulty[p.fwd], 0.0, moved)
        ob = np.bincount(p.ost_pos, weights=ost_w, minlength=len(a.res))
        st.ost_b += ob
        st.ost_s += ob > 0
        if p.fwd_pos is not None:
            fwd_w = moved if faulty is None else np.where(faulty[p.ost], 0.0, moved)
            fb = np.bincount(p.fwd_pos, weights=fwd_w, minlength=len(a.fwd_res))
            st.fwd_b += fb
            st.fwd_s += fb > 0

    def _straggler_truth(self, a: _Active) -> None:
        """The faulty components that made the run's I/O through them slower than its peers."""
        st = a.strag
        out = []
        for kind, res, w, b, s in (("ost", a.res, a.w_data, st.ost_b, st.ost_s),
                                   ("fwd", a.fwd_res, a.fwd_w, st.fwd_b, st.fwd_s)):
            steps = a.even_steps + s
            if len(res) < 2 or not (steps > 0).all():
                continue
            bw = (a.even_bytes * w + b) / (steps * self.dt)
            med = float(np.median(bw))
            for k, r in enumerate(res.tolist()):
                slow = med / bw[k] if bw[k] > 0 else np.inf
                if r in st.faulty and slow >= STRAGGLER_TRUTH_MIN:
                    out.append({"kind": kind, "component": self.res.names[r],
                                "slowdown": round(float(slow), 3), "peers": len(res) - 1})
        if out:
            self.stragglers[a.run.run_no] = out
