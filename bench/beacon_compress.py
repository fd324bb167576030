"""Beacon's two-pass trace compression, measured on traces shaped like the paper's eight
applications (Beacon, ACM TOS 2023, Table 1; NSDI'19 Appendix A, Table 8).

Usage: .venv/bin/python bench/beacon_compress.py [--nodes 32] [--scale-nodes 128] [--quick]

Never a test: prints a table and writes bench/beacon_results.json.

The paper publishes only the ratios, not the traces, so each application is a synthetic
job (`Shape`): its I/O phases (I/O mode, op, request size, contiguous run length), open files
per I/O node, metadata operations per node and second, and how many lockstep groups its nodes
form (nodes of one group issue identical vectors in the same second; groups are a second
apart). The modes, ops and sizes follow what the papers say of each application (see NOTES);
the run lengths and lockstep groups are NOT known from the paper: they are set so that the
N:N shapes land near its ratios. What the benchmark measures is therefore (1) that the
implementation compresses each shape exactly as its model predicts, losslessly (the first
pass's output equals the model's entries at second granularity; the second pass's check),
(2) where modes the paper names (N:1, 1:1, N:M) land without tuning, (3) first-pass
throughput on one core, (4) how the Spark second pass scales with a job's node count.

Phases: (a) generate each application's raw trace (count 1 per request, per node in time
order, fds and metadata interleaved), (b) first pass through `compress_lines` on one core,
timed (CPU seconds), plus the `lassi compress-trace` CLI end to end on all of it, (c) the
eight jobs' first-pass output into one warehouse day, `build_trace_merged` (Spark
local[2]), per-job ratios and lossless flags, (d) one job shape at 1x, 2x, 4x the node
count (entries from the model, which (b) showed equal to the first pass's output): merge
time and lossless-check time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from lassi.beacon.trace_compress import (  # noqa: E402
    CompressStats,
    at_second,
    compress_lines,
    request_multiset,
)

DAY = dt.date(2018, 9, 10)
T0 = int(dt.datetime(2018, 9, 10, 6, tzinfo=dt.timezone.utc).timestamp())
FD0 = 0x1200BD3F0
CWD_FD = "0x1200bd000"        # the working-directory handle metadata lines use
N_INPUT_FILES = 97            # STATs cycle over this many shared input files
KIB = 1024


@dataclass(frozen=True)
class Phase:
    """One I/O phase: every I/O node issues, per open file and second, `runs` runs of `run`
    contiguous requests of `size` bytes, one request-sized hole between runs."""

    mode: str                 # N:N (own file) | N:1 (shared file, disjoint regions) |
    #                           1:1 (node 0 only) | N:M (every `every`-th node, own file)
    op: str                   # READ | WRITE
    size: int
    run: int
    every: int = 4            # N:M: one aggregator per `every` nodes


@dataclass(frozen=True)
class Shape:
    name: str
    paper: tuple[float, float]   # Table 1: first pass, second pass (lossless)
    phases: tuple[Phase, ...]
    groups: int               # lockstep groups (set, not known: see the module docstring)
    md: int                   # metadata STATs per node and second of a phase
    files: int = 2            # files open at once per I/O node
    seconds: int = 20         # seconds per phase
    note: str = ""
    runs: int = field(default=0)  # runs per file-second; 0: about 64 requests per second

    def runs_of(self, p: Phase) -> int:
        return self.runs or max(1, round(64 / p.run))


W, R = "WRITE", "READ"
SHAPES = [
    Shape("APT", (5.4, 2.1), (Phase("N:N", W, 4 * KIB, 6),) * 3, groups=16, md=4,
          note="particle dynamics, HDF5 output: many small requests (paper §4.4.3), short "
               "contiguous runs broken by HDF5 metadata; file per process assumed"),
    Shape("WRF", (14.2, 3.8), (Phase("1:1", W, 512 * KIB, 16),) * 3, groups=8, md=1,
          note="weather, 1:1 mode (paper §3.3.1): node 0 writes history files sequentially "
               "(512 KiB, the common write size); every node STATs shared inputs"),
    Shape("DNDC", (10.1, 3.4), (Phase("N:N", R, 16 * KIB, 14),) * 3, groups=10, md=8,
          note="agro-ecosystem, high MDOPS (paper §4.3): small reads of per-node files and "
               "many metadata operations"),
    Shape("XCFD", (12.2, 3.8), (Phase("N:N", W, 512 * KIB, 14),) * 3, groups=8, md=1,
          note="closed-source CFD, 4,000 processes (Table 7): N:N checkpoints, 512 KiB writes"),
    Shape("GKUA", (34.6, 3.6), (Phase("N:N", W, 512 * KIB, 48),) * 3, groups=9, md=1,
          note="closed-source CFD, 16-32 K processes: long sequential 512 KiB writes"),
    Shape("CAM", (9.2, 4.4), (Phase("N:M", W, 512 * KIB, 10),) * 3, groups=7, md=1,
          note="climate: N:M output through aggregators (one I/O node in 4)"),
    Shape("AWP", (15.1, 3.2), (Phase("N:1", R, 128 * KIB, 18), Phase("N:N", W, 512 * KIB, 18),
                               Phase("N:N", W, 512 * KIB, 18)), groups=10, md=1,
          note="earthquake: N:1 read of the shared input (paper §4.4.2), then N:N output"),
    Shape("Shentu", (22.2, 2.6), (Phase("N:N", R, 128 * KIB, 32),) * 3, groups=12, md=1,
          note="each I/O process reads its own 1 GB file sequentially (N:N, paper §4.2), "
               "128 KiB reads"),
]


# --- the model: first-pass entries of a shape -------------------------------------------------


def node_name(i: int) -> str:
    return f"cn{i:05d}"


def node_ip(i: int) -> str:
    return f"20.{i // 65536}.{i // 256 % 256}.{i % 256}"


def fd_of(f: int) -> str:
    return hex(FD0 + 0x40 * f)


# Below, `r` is a node's rank in its job (0 .. n-1), `i` its site-wide number.


def is_io(p: Phase, r: int) -> bool:
    """Does rank r do data I/O in phase p?"""
    return p.mode in ("N:N", "N:1") or (p.mode == "1:1" and r == 0) or \
        (p.mode == "N:M" and r % p.every == 0)


def phase_start(shape: Shape, k: int, r: int) -> int:
    """Epoch second phase k starts on rank r (lockstep group r mod groups, 1 s apart)."""
    return T0 + k * (shape.seconds + shape.groups + 2) + r % shape.groups


def out_path(shape: Shape, p: Phase, k: int, r: int, f: int) -> str:
    own = "shared" if p.mode == "N:1" else f"r{r}"
    return f"/User7/{shape.name}/p{k}/{own}.{f}"


def region(shape: Shape, p: Phase, r: int) -> int:
    """Byte offset where rank r's part of a file starts (N:1: disjoint regions)."""
    if p.mode != "N:1":
        return 0
    return r * shape.seconds * shape.runs_of(p) * (p.run + 1) * p.size


def model_entries(shape: Shape, n_nodes: int, first: int = 0) -> pd.DataFrame:
    """The first-pass entries (one row each, second granularity) of a job on nodes
    first .. first + n_nodes - 1, vectorised per node and phase."""
    parts = []
    for k, p in enumerate(shape.phases):
        e, t = shape.runs_of(p), np.arange(shape.seconds)
        for r in range(n_nodes):
            i, s0 = first + r, phase_start(shape, k, r)
            base = {"node": node_name(i), "ip": node_ip(i)}
            if shape.md:
                m = np.arange(shape.md)
                tt, mm = np.meshgrid(t, m, indexing="ij")
                parts.append(pd.DataFrame({**base, "sec": (s0 + tt).ravel(), "op": "STAT",
                                           "fd": CWD_FD, "offset": None, "size": None,
                                           "count": 1, "path": [
                    f"/User7/{shape.name}/in/f{x}"
                    for x in ((tt * shape.md + mm) % N_INPUT_FILES).ravel()]}))
            if not is_io(p, r):
                continue
            ff = np.arange(shape.files)
            parts.append(pd.DataFrame({**base, "sec": s0, "op": "OPEN",
                                       "fd": [fd_of(f) for f in ff], "offset": None,
                                       "size": None, "count": 1,
                                       "path": [out_path(shape, p, k, r, f) for f in ff]}))
            tt, fv, jj = np.meshgrid(t, ff, np.arange(e), indexing="ij")
            parts.append(pd.DataFrame({
                **base, "sec": (s0 + tt).ravel(), "op": p.op,
                "fd": [fd_of(f) for f in fv.ravel()],
                "offset": (region(shape, p, r) + (tt * e + jj).ravel() * (p.run + 1) * p.size),
                "size": p.size, "count": p.run, "path": None}))
            parts.append(pd.DataFrame({**base, "sec": s0 + shape.seconds - 1, "op": "CLOSE",
                                       "fd": [fd_of(f) for f in ff], "offset": None,
                                       "size": None, "count": 1, "path": None}))
    df = pd.concat(parts, ignore_index=True)
    df["offset"] = df["offset"].astype("Int64")
    df["size"] = df["size"].astype("Int64")
    df["count"] = df["count"].astype("int64")
    return df


# --- the raw trace (what a node's LWFS client logs, before the first pass) ---------------------


def _sec_str(sec: int, cache: dict) -> str:
    s = cache.get(sec)
    if s is None:
        s = cache[sec] = dt.datetime.fromtimestamp(sec, dt.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S")
    return s


def _node_second(shape: Shape, p: Phase, k: int, r: int, t: int) -> list[str]:
    """The body of rank r's raw lines in second t of phase k (without ip and time):
    OPENs, then requests of the files round robin with the STATs spread in, then CLOSEs."""
    io = is_io(p, r)
    head = [f"OPEN {fd_of(f)} path={out_path(shape, p, k, r, f)}"
            for f in range(shape.files)] if io and t == 0 else []
    tail = [f"CLOSE {fd_of(f)}" for f in range(shape.files)] \
        if io and t == shape.seconds - 1 else []
    streams = []
    if io:
        e, step = shape.runs_of(p), (p.run + 1) * p.size
        for f in range(shape.files):
            fd, off0 = fd_of(f), region(shape, p, r)
            streams.append([f"{p.op} {fd} {off0 + (t * e + j) * step + q * p.size} {p.size} 1"
                            for j in range(e) for q in range(p.run)])
    data = [x for tup in itertools.zip_longest(*streams) for x in tup if x is not None]
    md = [f"STAT {CWD_FD} path=/User7/{shape.name}/in/f{(t * shape.md + m) % N_INPUT_FILES}"
          for m in range(shape.md)]
    every = max(1, len(data) // (len(md) + 1))
    body = []
    for j, x in enumerate(data):
        if md and j % every == every - 1:
            body.append(md.pop())
        body.append(x)
    return head + body + md + tail


def raw_trace(shape: Shape, n_nodes: int, first: int = 0) -> Iterator[str]:
    """Every node's raw trace, node after node (like `cat` of the per-node files), each in
    time order with milliseconds spread over the second."""
    cache: dict = {}
    for r in range(n_nodes):
        ip = node_ip(first + r)
        for k, p in enumerate(shape.phases):
            s0 = phase_start(shape, k, r)
            for t in range(shape.seconds):
                body = _node_second(shape, p, k, r, t)
                sec, n = _sec_str(s0 + t, cache), len(body)
                for j, x in enumerate(body):
                    yield f"{ip} {sec}.{j * 1000 // n:03d}Z {x}"


def model_lines(df: pd.DataFrame) -> Counter:
    """The model's entries as first-pass lines at second granularity (a multiset)."""
    cache: dict = {}
    out: Counter = Counter()
    for r in df.itertuples(index=False):
        sec = _sec_str(int(r.sec), cache)
        if r.op in ("READ", "WRITE"):
            out[f"{r.ip} {sec} {r.op} {r.fd} {r.offset} {r.size} {r.count}"] += 1
        elif not isinstance(r.path, str):
            out[f"{r.ip} {sec} {r.op} {r.fd}"] += 1
        else:
            out[f"{r.ip} {sec} {r.op} {r.fd} path={r.path}"] += 1
    return out


# --- phases -------------------------------------------------------------------------------


def first_pass(shape: Shape, n_nodes: int, first: int) -> tuple[dict, list[str], list[str]]:
    """Generate, compress (timed on this process's CPU), check; returns figures, raw, out."""
    raw = list(raw_trace(shape, n_nodes, first))
    st = CompressStats()
    c0, w0 = time.process_time(), time.perf_counter()
    out = list(compress_lines(raw, stats=st))
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    model = model_entries(shape, n_nodes, first)
    figures = {
        "raw_lines": len(raw), "first_pass_lines": len(out), "cpu_s": cpu, "wall_s": wall,
        "lines_per_s": len(raw) / cpu if cpu else None,
        "first_pass_ratio": st.ratio,      # raw input: one request (or metadata op) a line
        "max_pending": st.max_pending,
        "equals_model": Counter(at_second(x) for x in out) == model_lines(model),
        "lossless": request_multiset(out) == request_multiset(raw),
    }
    return figures, raw, out


def rows_of(lines: list[str], node_of_ip: dict[str, str]) -> pd.DataFrame:
    """raw_lwfs_trace rows of first-pass lines (a minimal stand-in for the ingest parser)."""
    recs = []
    for x in lines:
        f = x.split()
        ip, ts, op, fd = f[:4]
        if op in ("READ", "WRITE"):
            recs.append((ip, ts, op, fd, int(f[4]), int(f[5]), int(f[6]), None))
        else:
            path = next((y[5:] for y in f[4:] if y.startswith("path=")), None)
            recs.append((ip, ts, op, fd, None, None, 1, path))
    df = pd.DataFrame(recs, columns=["ip", "ts", "op", "fd", "offset", "size", "count", "path"])
    df["ts"] = pd.to_datetime(df["ts"], format="%Y-%m-%dT%H:%M:%S.%fZ")
    df[["offset", "size"]] = df[["offset", "size"]].astype("Int64")
    df["path"] = df["path"].astype(object)
    df["node"] = df["ip"].map(node_of_ip)
    return df


def to_raw_table(df: pd.DataFrame) -> pd.DataFrame:
    """Columns and types of raw_lwfs_trace (ts from `sec` when the rows come from the model)."""
    out = df.copy()
    if "ts" not in out:
        out["ts"] = pd.to_datetime(out["sec"], unit="s")
    for c in ("offset", "size"):
        out[c] = out[c].astype("Int64")
    out["file"] = "bench"
    out["date"] = DAY
    return out[["node", "ip", "ts", "op", "fd", "offset", "size", "count", "path", "file",
                "date"]]


def job_row(job_id: str, name: str, nodes: range) -> dict:
    """The app_run row of a Beacon job on `nodes` (05:59 to 08:00)."""
    from lassi.core.schemas import schema_of

    row = {"app_id": job_id, "job_id": job_id, "job_name": name,
           "nodes": [node_name(i) for i in nodes], "n_nodes": len(nodes),
           "start": dt.datetime(2018, 9, 10, 5, 59), "end": dt.datetime(2018, 9, 10, 8, 0),
           "source": "beacon-job", "date": DAY}
    return {f: row.get(f) for f in schema_of("app_run").fieldNames()}


def load_day(wh, trace: pd.DataFrame, jobs: list[dict]) -> None:
    """Write raw_lwfs_trace and app_run of DAY (untimed)."""
    from lassi.core.schemas import schema_of

    spark = wh.spark
    wh.write(spark.createDataFrame(trace, schema_of("raw_lwfs_trace")), "raw_lwfs_trace", [DAY])
    wh.write(spark.createDataFrame(pd.DataFrame(jobs), schema_of("app_run")), "app_run", [DAY])


def second_pass(spark, root: Path, apps: dict[str, list[str]], n_nodes: int) -> dict:
    """All applications as jobs of one day (application a on nodes a*n .. a*n + n - 1):
    build_trace_merged, timed; per-job figures."""
    from lassi.beacon.trace_merge import build_trace_merged
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(root / "apps"))
    everyone = {node_ip(i): node_name(i) for i in range(len(apps) * n_nodes)}
    frames = [rows_of(lines, everyone) for lines in apps.values()]
    jobs = [job_row(f"job-{name}", name, range(a * n_nodes, (a + 1) * n_nodes))
            for a, name in enumerate(apps)]
    load_day(wh, to_raw_table(pd.concat(frames, ignore_index=True)), jobs)
    t0 = time.perf_counter()
    summary = build_trace_merged(wh, None, DAY)
    elapsed = time.perf_counter() - t0
    comp = wh.read("trace_compression", [DAY]).toPandas().set_index("app")
    return {"summary": summary, "stage_s": elapsed,
            "jobs": {name: comp.loc[name].to_dict() for name in apps}}


def scaling(spark, root: Path, shape: Shape, base_nodes: int, factors=(1, 2, 4)) -> list[dict]:
    """Merge and check times of one job shape at base_nodes x factor nodes."""
    from lassi.beacon.trace_merge import write_trace_compression, write_trace_merged
    from lassi.core.warehouse import Warehouse

    res = []
    for f in (factors[0], *factors):            # the first, untimed, warms the session up
        n = base_nodes * f
        wh = Warehouse(spark, str(root / f"scale-{n}-{len(res)}"))
        load_day(wh, to_raw_table(model_entries(shape, n)),
                 [job_row("job-scale", shape.name, range(n))])
        t0 = time.perf_counter()
        write_trace_merged(wh, DAY)
        t1 = time.perf_counter()
        comp = write_trace_compression(wh, DAY).toPandas()
        t2 = time.perf_counter()
        r = comp.iloc[0]
        res.append({"factor": f, "nodes": n, "first_pass_entries": int(r.first_pass_entries),
                    "merged_entries": int(r.merged_entries), "lossless": bool(r.lossless),
                    "merge_s": t1 - t0, "check_s": t2 - t1})
        shutil.rmtree(root / f"scale-{n}-{len(res) - 1}", ignore_errors=True)
    return res[1:]


def cli_throughput(raw_all: list[str]) -> dict:
    """`lassi compress-trace --stats` on every application's raw trace, wall time."""
    data = ("\n".join(raw_all) + "\n").encode()
    lassi = str(Path(sys.executable).parent / "lassi")
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    res = subprocess.run([lassi, "compress-trace", "--stats"], input=data,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"lines": len(raw_all), "wall_s": wall, "cpu_s": cpu,
            "lines_per_s": len(raw_all) / wall, "lines_per_cpu_s": len(raw_all) / cpu,
            "rc": res.returncode, "stats": res.stderr.decode().strip()}


# --- report --------------------------------------------------------------------------------


def print_tables(per_app: dict, sp: dict, cli: dict, scale: list[dict]) -> None:
    print("\nFirst pass (one core, compress_lines) and second pass (Spark), per application")
    hdr = (f"{'app':7} {'modes':14} {'raw lines':>10} {'1st paper':>9} {'1st ours':>8} "
           f"{'2nd paper':>9} {'2nd ours':>8} {'total':>6} {'lines/s':>9} {'model':>5} "
           f"{'lossless':>8}")
    print(hdr)
    print("-" * len(hdr))
    for s in SHAPES:
        a, j = per_app[s.name], sp["jobs"][s.name]
        modes = "/".join(dict.fromkeys(p.mode for p in s.phases))
        lossless = a["lossless"] and bool(j["lossless"])
        print(f"{s.name:7} {modes:14} {a['raw_lines']:>10,} {s.paper[0]:>9.1f} "
              f"{a['first_pass_ratio']:>8.1f} {s.paper[1]:>9.1f} {j['second_pass_ratio']:>8.1f} "
              f"{j['total_ratio']:>6.1f} {a['lines_per_s']:>9,.0f} "
              f"{'yes' if a['equals_model'] else 'NO':>5} {'yes' if lossless else 'NO':>8}")
    tot_lines = sum(a["raw_lines"] for a in per_app.values())
    tot_cpu = sum(a["cpu_s"] for a in per_app.values())
    print(f"\nfirst pass: {tot_lines:,} raw lines in {tot_cpu:.2f} CPU s = "
          f"{tot_lines / tot_cpu:,.0f} lines/s on one core (compress_lines, in memory)")
    print(f"CLI `lassi compress-trace`: {cli['lines']:,} lines, {cli['cpu_s']:.2f} CPU s = "
          f"{cli['lines_per_cpu_s']:,.0f} lines/CPU s ({cli['wall_s']:.2f} s wall) end to end "
          f"(start-up, decoding, pipes)")
    print(f"second pass, {len(SHAPES)} jobs in one day: {sp['stage_s']:.1f} s wall "
          f"(merge + lossless check, warm session); {sp['summary']}")
    print("\nSecond pass scaling (one job, XCFD shape, Spark local[2]):")
    print(f"{'x':>3} {'nodes':>6} {'entries':>10} {'merged':>9} {'merge s':>8} {'check s':>8} "
          f"{'merge ratio':>11} {'check ratio':>11} {'lossless':>8}")
    b = scale[0]
    for r in scale:
        print(f"{r['factor']:>3} {r['nodes']:>6} {r['first_pass_entries']:>10,} "
              f"{r['merged_entries']:>9,} {r['merge_s']:>8.2f} {r['check_s']:>8.2f} "
              f"{r['merge_s'] / b['merge_s']:>11.2f} {r['check_s'] / b['check_s']:>11.2f} "
              f"{'yes' if r['lossless'] else 'NO':>8}")
    print("(linear would be ratios 1, 2, 4)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=32, help="nodes per application job")
    ap.add_argument("--scale-nodes", type=int, default=128, help="1x of the scaling job")
    ap.add_argument("--scale-seconds", type=int, default=60,
                    help="seconds per phase of the scaling job")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.nodes, args.scale_nodes, args.scale_seconds = 8, 16, 20
    t_start, load0 = time.perf_counter(), os.getloadavg()
    per_app, outs, raw_all = {}, {}, []
    for a, s in enumerate(SHAPES):
        figures, raw, out = first_pass(s, args.nodes, a * args.nodes)
        per_app[s.name], outs[s.name] = figures, out
        raw_all.extend(raw)
        print(f"  first pass {s.name}: {figures['raw_lines']:,} -> "
              f"{figures['first_pass_lines']:,} lines, {figures['lines_per_s']:,.0f} lines/s",
              flush=True)
    cli = cli_throughput(raw_all)
    del raw_all

    from lassi.core.spark import get_spark

    spark = get_spark("bench beacon_compress", master="local[2]",
                      extra={"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
    root = Path(tempfile.mkdtemp(prefix="beacon-bench-"))
    try:
        xcfd = next(s for s in SHAPES if s.name == "XCFD")
        scale = scaling(spark, root, replace(xcfd, seconds=args.scale_seconds),
                        args.scale_nodes)
        print(f"  scaling: {[round(r['merge_s'], 1) for r in scale]} s merge", flush=True)
        sp = second_pass(spark, root, outs, args.nodes)
        print(f"  second pass: {sp['summary']}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_tables(per_app, sp, cli, scale)
    total = time.perf_counter() - t_start
    load = os.getloadavg()
    print(f"\nbenchmark wall time {total:.0f} s; load average {load0[0]:.1f} at the start, "
          f"{load[0]:.1f} at the end ({os.cpu_count()} CPUs): wall times grow with it")
    result = {
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform(), "load_start": load0[0],
                    "load_end": load[0]},
        "args": vars(args), "wall_s": total,
        "shapes": [{**asdict(s), "phases": [asdict(p) for p in s.phases]} for s in SHAPES],
        "first_pass": per_app, "cli": cli,
        "second_pass": {"summary": sp["summary"], "stage_s": sp["stage_s"],
                        "jobs": {k: {c: (v.item() if hasattr(v, "item") else v)
                                     for c, v in d.items() if c != "date"}
                                 for k, d in sp["jobs"].items()}},
        "scaling": scale,
    }
    (BENCH / "beacon_results.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"figures in {BENCH / 'beacon_results.json'}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
