"""The workload model: applications with distinct I/O behaviour and their repeated runs.

An *application* is a fixed launch command (LASSi groups runs by it) with an archetype,
a node count, a user and a filesystem. A *run* is one launch: a plan of segments, each
either computing for a while or doing I/O (data or metadata) at a demanded rate. The
engine (`engine.py`) plays the plans against finite resources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from lassi.core.config import Site
from lassi.sim.counters import IDX, N

KiB, MiB, GiB = 1024, 1024**2, 1024**3


@dataclass(frozen=True)
class Archetype:
    """How one class of application does I/O."""

    name: str
    exe: str
    mode: str                 # N:N, N:1, 1:1, N:M
    nodes: tuple[int, int]    # node count range at a 4,096-node site (scaled to the site)
    cycles: tuple[int, int]   # compute+I/O cycles per run
    compute_s: tuple[int, int]
    rw: str                   # write | read | meta | mixed
    bytes_per_node: tuple[float, float]
    reqsize: int
    node_rate: float          # bytes/s one I/O node can push at full speed
    md_per_node_s: float = 0.0   # metadata ops/s per node during metadata segments
    md_mix: dict = field(default_factory=dict)
    osts_per_node: int = 2
    stripe: int = 1
    read_amplification: float = 1.0   # forwarding read-ahead waste (cache thrashing)
    weight: float = 1.0       # share of the catalogue
    run_share: float = 1.0    # relative chance that a submitted run is of such an app
    aggressor: str = ""


ARCHETYPES: dict[str, Archetype] = {a.name: a for a in [
    Archetype("ckpt_nn", "cfd_solver.exe", "N:N", (16, 256), (3, 6), (600, 1500), "write",
              (1 * GiB, 4 * GiB), 1 * MiB, 400e6, osts_per_node=2, weight=3),
    Archetype("shared_n1", "wrf.exe", "N:1", (16, 128), (2, 4), (900, 1800), "write",
              (256 * MiB, 1 * GiB), 256 * KiB, 120e6, stripe=8, weight=2),
    Archetype("serial_11", "post_proc.x", "1:1", (1, 8), (2, 5), (300, 900), "write",
              (512 * MiB, 2 * GiB), 64 * KiB, 150e6, stripe=1, weight=2),
    Archetype("agg_nm", "climate_model.exe", "N:M", (32, 512), (2, 4), (900, 1800), "write",
              (2 * GiB, 8 * GiB), 4 * MiB, 800e6, stripe=4, weight=2),
    Archetype("mdfarm", "taskfarm_worker.py", "N:N", (4, 32), (1, 1), (60, 120), "meta",
              (4 * MiB, 16 * MiB), 4 * KiB, 50e6, md_per_node_s=2500.0,
              md_mix={"open": 0.25, "close": 0.25, "getattr": 0.2, "mknod": 0.1,
                      "unlink": 0.08, "mkdir": 0.06, "rmdir": 0.04, "setattr": 0.02},
              run_share=0.25, aggressor="mds"),
    Archetype("tracer", "tracer.x", "N:N", (8, 32), (1, 1), (1800, 5400), "write",
              (64 * MiB, 128 * MiB), 2 * KiB, 1e6, osts_per_node=1,
              run_share=0.2, aggressor="oss"),
    Archetype("reader", "analysis.py", "N:N", (4, 64), (2, 4), (300, 900), "read",
              (1 * GiB, 4 * GiB), 1 * MiB, 500e6, weight=2),
    Archetype("seq_reader", "seq_reader.exe", "N:N", (16, 128), (2, 3), (300, 600), "read",
              (512 * MiB, 2 * GiB), 128 * KiB, 200e6, read_amplification=3.0, weight=1),
]}


@dataclass
class Segment:
    """Compute for `dur` seconds, or move `ops` requests of `reqsize` (plus md/other ops)."""

    kind: str                      # compute | read | write | meta
    dur: float = 0.0               # compute time, or solo I/O time
    ops: int = 0                   # data requests (meta: metadata operations)
    reqsize: int = 0
    rate: float = 0.0              # demanded ops/s at full speed (whole run)
    extra: np.ndarray | None = None  # md + other counters moved over the segment


@dataclass
class App:
    """One application: a fixed launch command."""

    app_no: int
    archetype: Archetype
    n_nodes: int
    user: str
    project: str
    fs: str
    command: str
    scale: float                   # per-app multiplier of bytes per node
    plan_seed: int = 0             # the same command runs the same input: same plan shape


@dataclass
class Run:
    """One launch of an application, with its plan and (after the engine) its outcome."""

    run_no: int
    app: App
    submit: float
    plan: list[Segment]
    job_id: str = ""
    app_id: str = ""
    nodes: list[int] = field(default_factory=list)   # compute-node indexes
    io_nodes: list[int] = field(default_factory=list)
    osts: dict[int, list[int]] = field(default_factory=dict)  # io node -> OST indexes (fs-local)
    start: float | None = None
    end: float | None = None

    @property
    def solo_runtime(self) -> float:
        return float(sum(s.dur for s in self.plan))


# Archetype sizes grow with the site up to this many nodes; a bigger site runs more jobs,
# not bigger ones (ARCHER's 4,920 nodes ran about 4,000 launches a day).
APP_SIZE_SITE_NODES = 512
# A mode is what the trace shows at node level, so a run is never too small for its mode:
# N:N and N:1 need 2 nodes doing I/O, N:M at least 2 of at least 3 nodes (1 < M < N).
MIN_NODES = {"N:N": 2, "N:1": 2, "N:M": 3, "1:1": 1}


def _scaled_nodes(rng: np.random.Generator, arch: Archetype, site_nodes: int) -> int:
    lo, hi = arch.nodes
    site_nodes = min(site_nodes, APP_SIZE_SITE_NODES)
    f = site_nodes / 4096
    lo = max(MIN_NODES[arch.mode], round(lo * f)) if arch.mode != "1:1" else lo
    hi = max(lo, min(round(hi * f), site_nodes // 4))
    return int(rng.integers(lo, hi + 1))


def make_catalogue(rng: np.random.Generator, site: Site, n_apps: int) -> list[App]:
    """Applications of the site: archetypes drawn by weight, each with a fixed command."""
    names = list(ARCHETYPES)
    # every archetype appears once; aggressors only once (they are rare at a real site)
    w = np.array([0.0 if ARCHETYPES[n].aggressor else ARCHETYPES[n].weight for n in names])
    fss = [f.name for f in site.filesystems]
    ppn = int(site.data["compute"]["procs_per_node"])
    apps = []
    picks = names + list(rng.choice(names, size=max(0, n_apps - len(names)), p=w / w.sum()))
    for i, name in enumerate(picks):
        arch = ARCHETYPES[name]
        n = _scaled_nodes(rng, arch, len(site.compute_nodes))
        user = f"u{int(rng.integers(1000, 1100))}"
        project = f"p{int(rng.integers(1, 40)):02d}"
        fs = fss[int(rng.integers(0, len(fss)))]
        launcher = "aprun" if "alps" in site.schedulers else "srun"
        args = f"-n {n * ppn} -N {ppn}" if launcher == "aprun" else f"-N {n} -n {n * ppn}"
        command = f"{launcher} {args} ./{arch.exe} input_{i:03d}.nml"
        apps.append(App(i, arch, n, user, project, fs, command, float(rng.uniform(0.6, 1.4)),
                        int(rng.integers(0, 2**31))))
    return apps


def _io_node_count(arch: Archetype, n: int) -> int:
    if arch.mode == "1:1":
        return 1
    if arch.mode == "N:M":
        return min(n - 1, max(2, n // 16))
    return n


def make_plan(run_rng: np.random.Generator, app: App) -> list[Segment]:
    """Segments of one run: compute, then I/O, repeated (meta farms: one long meta phase).

    The shape (cycles, compute and I/O sizes) is the app's own — the same command runs the
    same input — and each run varies it by a few per cent (`run_rng`), so the runtime spread
    of a command's runs comes from contention, as LASSi's slowdown analysis assumes.
    """
    a = app.archetype
    rng = np.random.default_rng(app.plan_seed)
    n_io = _io_node_count(a, app.n_nodes)
    plan: list[Segment] = []
    for _ in range(int(rng.integers(a.cycles[0], a.cycles[1] + 1))):
        jitter = float(run_rng.uniform(0.97, 1.03))
        plan.append(Segment("compute", dur=float(rng.integers(*a.compute_s)) * jitter))
        per_node = rng.uniform(*a.bytes_per_node) * app.scale * jitter
        ops = max(1, int(per_node * n_io / a.reqsize))
        rate = a.node_rate * n_io / a.reqsize
        extra = np.zeros(N, dtype=np.int64)
        files = n_io if a.mode != "N:1" else 1
        if a.rw == "meta":
            dur = float(rng.integers(1200, 3600)) * jitter
            md = int(a.md_per_node_s * app.n_nodes * dur)
            for op, frac in a.md_mix.items():
                extra[IDX[op]] = int(md * frac)
            plan.append(Segment("meta", dur=dur, ops=md, rate=md / dur, reqsize=a.reqsize,
                                extra=extra))
            continue
        kind = "read" if a.rw == "read" else "write"
        extra[IDX["open"]] = extra[IDX["close"]] = files * 24 if a.mode == "N:N" else app.n_nodes
        extra[IDX["getattr"]] = files
        if kind == "write":
            extra[IDX["mknod"]] = files if a.mode != "N:1" else 1
            extra[IDX["punch"]] = files
            extra[IDX["ost_sync"]] = files
        extra[IDX["get_info"]] = files
        rpcs = max(1, ops * a.reqsize // MiB)
        extra[IDX["preprw"]] = extra[IDX["commitrw"]] = rpcs
        plan.append(Segment(kind, dur=ops / rate, ops=ops, reqsize=a.reqsize, rate=rate,
                            extra=extra))
    if a.name == "tracer":   # a tracer writes a few KiB every second for its whole run
        total = sum(s.dur for s in plan)
        ops = int(total * a.node_rate * app.n_nodes / a.reqsize)
        extra = np.zeros(N, dtype=np.int64)
        extra[IDX["ost_sync"]] = ops // 4
        extra[IDX["preprw"]] = extra[IDX["commitrw"]] = ops
        rate = ops / total
        plan = [Segment("write", dur=total, ops=ops, reqsize=a.reqsize, rate=rate, extra=extra)]
    return plan


def make_runs(rng: np.random.Generator, site: Site, start: float, days: int,
              utilisation: float = 0.5) -> list[Run]:
    """Runs submitted over `days` days, filling about `utilisation` of the node-hours."""
    n_nodes = len(site.compute_nodes)
    budget = utilisation * n_nodes * 86400 * days
    n_apps = max(12, int(8 * math.sqrt(n_nodes / 16)))
    apps = make_catalogue(rng, site, n_apps)
    runs: list[Run] = []
    used = 0.0
    k = 0
    share = np.array([a.archetype.run_share for a in apps], dtype=float)
    share /= share.sum()
    while used < budget:
        app = apps[k % len(apps)] if k < len(apps) else apps[int(rng.choice(len(apps), p=share))]
        plan = make_plan(rng, app)
        submit = start + float(rng.uniform(0, 86400 * days - 3600))
        run = Run(len(runs), app, submit, plan)
        runs.append(run)
        used += run.solo_runtime * app.n_nodes
        k += 1
    runs.sort(key=lambda r: r.submit)
    for i, r in enumerate(runs):
        r.run_no = i
    return runs


def place_io(rng: np.random.Generator, run: Run, n_osts: int) -> None:
    """Choose the run's I/O nodes and the OSTs each of them writes to."""
    a = run.app.archetype
    n_io = _io_node_count(a, len(run.nodes))
    step = max(1, len(run.nodes) // n_io)
    run.io_nodes = run.nodes[::step][:n_io]
    if a.mode == "N:1":
        first = int(rng.integers(0, n_osts))
        shared = [(first + j) % n_osts for j in range(min(a.stripe, n_osts))]
        run.osts = {n: shared for n in run.io_nodes}
        return
    k = a.stripe if a.mode in ("N:M", "1:1") else a.osts_per_node
    run.osts = {}
    for n in run.io_nodes:
        first = int(rng.integers(0, n_osts))
        run.osts[n] = [(first + j) % n_osts for j in range(min(k, n_osts))]
