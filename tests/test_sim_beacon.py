"""The Beacon site writer (lassi.sim.beacon): formats of every layer, conservation across
layers against the engine's ground truth, the job log, day files, determinism. No Spark.

A small scenario is built by hand (one run per archetype, short plans) on the taihulight
site scaled to 1,024 nodes (2 forwarding nodes, 12 OSTs) and played by the Engine from
23:59 UTC, so files of two days are written.
"""

from __future__ import annotations

import datetime as dt
import gzip
import math
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from lassi.ingest.beacon_job import parse_lines

from lassi.core.config import load_site
from lassi.sim.beacon import TRACE_OP, BeaconWriter, write_job_log
from lassi.sim.counters import IDX, MDS, N
from lassi.sim.engine import Engine, Fault
from lassi.sim.workload import ARCHETYPES, App, KiB, MiB, Run, Segment, make_plan

DAY1, DAY2 = "2018-02-24", "2018-02-25"
START = dt.datetime(2018, 2, 25, tzinfo=dt.timezone.utc).timestamp() - 60

IP = r"(\d+\.\d+\.\d+\.\d+)"
TS = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"
OST = r"(\S+-OST[0-9a-f]{4})"
RE_DATA = re.compile(rf"^{IP} {TS} (READ|WRITE) (0x[0-9a-f]+) (\d+) (\d+) (\d+)$")
RE_OPEN = re.compile(rf"^{IP} {TS} OPEN (0x[0-9a-f]+) path=(/User\d+/-?\d+/-?\d+)$")
RE_CLOSE = re.compile(rf"^{IP} {TS} CLOSE (0x[0-9a-f]+)$")
RE_META = re.compile(rf"^{IP} {TS} ([A-Z]+) (0x[0-9a-f]+) path=(/User\d+/-?\d+/-?\d+) "
                     r"count=(\d+)$")
RE_SERVER = re.compile(rf"^{IP} \[(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)\]  \[Trace\]: "
                       rf"(Meta|Read|Write) (exe|wait): (\d+(?: \d+){{7}}) {TS}$")
RE_QUEUE = re.compile(rf"^{IP} \[(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)\]  \[Trace\]: "
                      rf"queue length: (\d+) {TS}$")
RE_LCLIENT = re.compile(rf"^{IP} {TS} {OST} (\d+) (\d+) (\d+) (\d+)$")
RE_OST = re.compile(rf"^(\S+) {TS} {OST} (\d+) (\d+) (\d+) (\d+) (\d+)$")
RE_MDS = re.compile(rf"^(\S+) {TS}((?: [a-z_]+=\d+)+)$")

# archetype, nodes, overrides (small volumes so that the scenario runs in seconds)
SPECS = [
    ("ckpt_nn", 600, {"bytes_per_node": (16 * MiB, 32 * MiB)}),        # spans both fwds
    ("shared_n1", 40, {"bytes_per_node": (64 * MiB, 96 * MiB)}),
    ("serial_11", 2, {"bytes_per_node": (16 * MiB, 32 * MiB)}),
    ("agg_nm", 64, {"bytes_per_node": (1024 * MiB, 2048 * MiB)}),
    ("seq_reader", 8, {"bytes_per_node": (64 * MiB, 128 * MiB)}),      # read amplification 3
    ("tracer", 4, {}),
    ("mdfarm", 3, {}),
]


def _ts(text: str) -> float:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=dt.timezone.utc).timestamp()


def build_runs(site, rng: np.random.Generator) -> list[Run]:
    fs = site.filesystems[0].name
    runs = []
    for i, (name, n, over) in enumerate(SPECS):
        arch = replace(ARCHETYPES[name], cycles=(2, 2), compute_s=(20, 40), **over)
        app = App(i, arch, n, f"u{1000 + i}", "p01", fs, f"srun -N {n} ./{arch.exe}", 1.0)
        if arch.rw == "meta":
            dur = 40.0
            md = int(300 * n * dur)
            extra = np.zeros(N, dtype=np.int64)
            for op, frac in arch.md_mix.items():
                extra[IDX[op]] = int(md * frac)
            plan = [Segment("compute", dur=10.0),
                    Segment("meta", dur=dur, ops=md, rate=md / dur, reqsize=4 * KiB, extra=extra)]
        else:
            plan = make_plan(rng, app)
        submit = START + (200 if name == "serial_11" else 0)    # starts on the second day
        runs.append(Run(i, app, submit, plan))
    return runs


class Scenario:
    def __init__(self, out: Path, seed: int = 7, gz: bool = False, traced: float = 1.0,
                 faults: list[Fault] | None = None) -> None:
        self.site = load_site("taihulight", nodes=1024)
        rng = np.random.default_rng(seed)
        self.runs = build_runs(self.site, rng)
        self.writer = BeaconWriter(self.site, out, rng, gz=gz, traced_fraction=traced)
        self.engine = Engine(self.site, self.runs, faults or [], 1.0, rng)
        self.end = self.engine.run(START, [self.writer])
        write_job_log(self.site, self.runs, out)
        self.out = out
        self.root = out / "beacon"
        self.truth = self.writer.truth_extra()["beacon"]

    def totals(self, run: Run) -> np.ndarray:
        return self.engine.truth[run.run_no].totals

    def files(self, layer: str) -> list[Path]:
        return sorted(p for p in (self.root / layer).rglob("*") if p.is_file())

    def lines(self, layer: str):
        """(host, day, line_no, line) over a layer's files, in file order."""
        for p in self.files(layer):
            opener = gzip.open if p.suffix == ".gz" else open
            with opener(p, "rt") as fh:
                for k, line in enumerate(fh):
                    yield p.parent.name, p.name.split(".")[0], k, line.rstrip("\n")

    def last(self, layer: str, rx: re.Pattern, key) -> dict:
        """The last (cumulative) match per key over the layer's lines."""
        out = {}
        for _host, _day, _k, line in self.lines(layer):
            m = rx.match(line)
            if m:
                out[key(m)] = m
        return out


@pytest.fixture(scope="module")
def sc(tmp_path_factory) -> Scenario:
    return Scenario(tmp_path_factory.mktemp("beacon"))


def by_name(sc: Scenario) -> dict[str, Run]:
    return {r.app.archetype.name: r for r in sc.runs}


# --------------------------------------------------------------------------------- formats


def test_every_line_matches_its_format(sc):
    patterns = {
        "lwfs-client": [RE_DATA, RE_OPEN, RE_CLOSE, RE_META],
        "lwfs-server": [RE_SERVER, RE_QUEUE],
        "lustre-client": [RE_LCLIENT],
        "ost": [RE_OST],
        "mds": [RE_MDS],
    }
    for layer, rxs in patterns.items():
        n = 0
        for host, day, _k, line in sc.lines(layer):
            n += 1
            assert any(rx.match(line) for rx in rxs), (layer, host, day, line)
        assert n > 0, layer
    # host folders: compute nodes, forwarding nodes, OSS hosts, the MDS
    fs = sc.site.filesystems[0]
    assert {p.parent.name for p in sc.files("lwfs-server")} == set(sc.site.fwd_nodes)
    assert {p.parent.name for p in sc.files("ost")} == set(fs.osses)
    assert {p.parent.name for p in sc.files("mds")} == {fs.mds}
    assert {p.parent.name for p in sc.files("lwfs-client")} <= set(sc.site.compute_nodes)
    assert all(p.name.endswith(".log") for layer in patterns for p in sc.files(layer))


def test_server_regex_matches_the_real_sample(realdata):
    lines = (realdata / "beacon" / "data_example.txt").read_text().splitlines()
    hits = [ln for ln in lines if RE_SERVER.match(ln) or RE_QUEUE.match(ln)]
    assert len(hits) == len([ln for ln in lines if "[Trace]" in ln]) > 0
    assert not RE_SERVER.match(lines[0]) and not RE_QUEUE.match(lines[4])


def test_server_lines_layout_and_local_time(sc):
    ips = {sc.site.fwd_ip(f): f for f in sc.site.fwd_nodes}
    blocks: dict[tuple[str, str], list[str]] = defaultdict(list)
    for host, _day, _k, line in sc.lines("lwfs-server"):
        m = RE_SERVER.match(line) or RE_QUEUE.match(line)
        assert ips[m.group(1)] == host
        utc = dt.datetime.fromtimestamp(math.floor(_ts(m.groups()[-1])), dt.timezone.utc)
        local = utc.astimezone(dt.timezone(dt.timedelta(hours=8))).strftime("%Y-%m-%d %H:%M:%S")
        assert m.group(2) == local
        blocks[(host, m.groups()[-1])].append(line.split("[Trace]: ")[1].split(":")[0])
    kinds = ["Meta exe", "Meta wait", "Read exe", "Read wait", "Write exe", "Write wait",
             "queue length"]
    assert all(v == kinds for v in blocks.values())
    # one block every 10 s per forwarding node, covering the whole simulation
    per_host = defaultdict(list)
    for host, stamp in blocks:
        per_host[host].append(_ts(stamp))
    for stamps in per_host.values():
        assert np.allclose(np.diff(sorted(stamps)), 10.0)
        assert min(stamps) < START + 1 and max(stamps) >= sc.end
    assert sc.truth["sample_s"] == 10


def test_files_land_in_their_utc_day_and_are_time_ordered(sc):
    days = set()
    for layer in ("lwfs-client", "lwfs-server", "lustre-client", "ost", "mds"):
        prev: dict[str, float] = {}
        for host, day, _k, line in sc.lines(layer):
            stamp = re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line).group(0)
            assert stamp[:10] == day, (layer, host, line)
            t = _ts(stamp)
            assert t >= prev.get(host, 0.0), (layer, host, line)
            prev[host] = t
            days.add(day)
    assert days == {DAY1, DAY2}


# ---------------------------------------------------------------------------- client trace


def client_records(sc: Scenario):
    """Per compute node: its ordered trace records (kind, match)."""
    per_node: dict[str, list[tuple[str, re.Match]]] = defaultdict(list)
    for host, _day, _k, line in sc.lines("lwfs-client"):
        for kind, rx in (("data", RE_DATA), ("open", RE_OPEN), ("close", RE_CLOSE),
                         ("meta", RE_META)):
            m = rx.match(line)
            if m:
                per_node[host].append((kind, m))
                break
    return per_node


def test_client_trace_conserves_each_runs_bytes_and_metadata(sc):
    per_node = client_records(sc)
    node_run = {sc.site.compute_nodes[n]: r for r in sc.runs for n in r.nodes}
    moved = defaultdict(lambda: np.zeros(2, dtype=np.int64))
    md = defaultdict(lambda: defaultdict(int))
    for node, recs in per_node.items():
        run = node_run[node]
        assert node in {sc.site.compute_nodes[n] for n in run.io_nodes}
        ip = sc.site.node_ip(node)
        for kind, m in recs:
            assert m.group(1) == ip
            if kind == "data":
                size, count = int(m.group(6)), int(m.group(7))
                assert size == run.app.archetype.reqsize and count >= 1
                moved[run.run_no][0 if m.group(3) == "READ" else 1] += size * count
            elif kind == "meta":
                md[run.run_no][m.group(3)] += int(m.group(6))
    for run in sc.runs:
        tot = sc.totals(run)
        assert moved[run.run_no].tolist() == [tot[IDX["read_bytes"]], tot[IDX["write_bytes"]]]
    farm = by_name(sc)["mdfarm"]
    want = defaultdict(int)
    for c in MDS:
        if sc.totals(farm)[IDX[c]]:
            want[TRACE_OP[c]] += int(sc.totals(farm)[IDX[c]])
    assert dict(md[farm.run_no]) == dict(want) and sum(want.values()) > 0
    assert set(md) == {farm.run_no}
    assert sc.truth["traced_runs"] == [r.run_no for r in sc.runs]
    traced = sum(r.sum() for r in moved.values())
    days = sc.truth["layers"]["compute_traced"]
    assert traced == sum(v["read_bytes"] + v["write_bytes"] for v in days.values())


def test_client_offsets_contiguous_and_open_close_bracket_io(sc):
    per_node = client_records(sc)
    for node, recs in per_node.items():
        state: dict[str, dict] = {}
        for kind, m in recs:
            if kind == "open":
                fd = m.group(3)
                assert fd not in state or state[fd]["closed"], (node, fd)
                state[fd] = {"next": None, "closed": False, "io": 0}
            elif kind == "data":
                fd, off = m.group(4), int(m.group(5))
                st = state[fd]                            # opened before its first I/O
                assert not st["closed"]
                if st["next"] is not None:
                    assert off == st["next"], (node, fd)
                st["next"] = off + int(m.group(6)) * int(m.group(7))
                st["io"] += 1
            elif kind == "close":
                st = state[m.group(3)]
                assert not st["closed"] and st["io"] > 0
                st["closed"] = True
        assert all(s["closed"] for s in state.values()), node   # closed after the last I/O


def test_file_sharing_follows_the_io_mode(sc):
    per_node = client_records(sc)
    runs = by_name(sc)
    paths: dict[int, list[str]] = defaultdict(list)      # run -> OPEN paths
    regions: dict[str, list[tuple[int, int]]] = defaultdict(list)
    node_run = {sc.site.compute_nodes[n]: r for r in sc.runs for n in r.nodes}
    for node, recs in per_node.items():
        fd_path, span = {}, {}
        for kind, m in recs:
            if kind == "open":
                fd_path[m.group(3)] = m.group(4)
                paths[node_run[node].run_no].append(m.group(4))
            elif kind == "data":
                fd, off = m.group(4), int(m.group(5))
                end = off + int(m.group(6)) * int(m.group(7))
                lo, hi = span.get(fd, (off, end))
                span[fd] = (min(lo, off), max(hi, end))
        for fd, sp in span.items():
            regions[fd_path[fd]].append(sp)
    phases = 2
    nn = runs["ckpt_nn"]
    assert len(set(paths[nn.run_no])) == len(paths[nn.run_no]) == phases * len(nn.io_nodes)
    n1 = runs["shared_n1"]
    assert len(set(paths[n1.run_no])) == phases
    assert len(paths[n1.run_no]) == phases * len(n1.io_nodes)
    for p in set(paths[n1.run_no]):           # one shared file, disjoint regions
        spans = sorted(regions[p])
        assert len(spans) == len(n1.io_nodes)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    one = runs["serial_11"]
    assert len(one.io_nodes) == 1 and len(paths[one.run_no]) == phases
    nm = runs["agg_nm"]
    assert 1 < len(nm.io_nodes) < len(nm.nodes)
    assert len(set(paths[nm.run_no])) == phases * len(nm.io_nodes)
    nodes_with_lines = {n for n in per_node if node_run[n] is nm}
    assert nodes_with_lines == {sc.site.compute_nodes[n] for n in nm.io_nodes}


def test_partial_tracing_writes_only_traced_runs(tmp_path, sc):
    part = Scenario(tmp_path, seed=11, traced=0.5)
    traced = set(part.truth["traced_runs"])
    assert 0 < len(traced) < len(part.runs)
    ips = {part.site.node_ip(part.site.compute_nodes[n]): r.run_no
           for r in part.runs for n in r.nodes}
    seen = {ips[line.split(" ", 1)[0]] for _h, _d, _k, line in part.lines("lwfs-client")}
    assert seen == traced
    layers = part.truth["layers"]
    traced_bytes = sum(int(part.totals(r)[IDX["read_bytes"]] + part.totals(r)[IDX["write_bytes"]])
                       for r in part.runs if r.run_no in traced)
    assert traced_bytes == sum(v["read_bytes"] + v["write_bytes"]
                               for v in layers["compute_traced"].values())
    # a different seed gives different output
    a = sorted(p.relative_to(part.root) for p in part.root.rglob("*.log"))
    b = sorted(p.relative_to(sc.root) for p in sc.root.rglob("*.log"))
    assert a != b or any((part.root / p).read_bytes() != (sc.root / p).read_bytes() for p in a)


# --------------------------------------------------------------------- forwarding, OST, MDS


def expected_lustre(sc: Scenario) -> dict[str, int]:
    exp = defaultdict(int)
    for r in sc.runs:
        t = sc.totals(r)
        a = r.app.archetype
        rpc = -(-a.reqsize // MiB)
        exp["read_bytes"] += int(round(t[IDX["read_bytes"]] * a.read_amplification))
        exp["write_bytes"] += int(t[IDX["write_bytes"]])
        exp["read_rpcs"] += int(round(t[IDX["read_ops"]] * a.read_amplification)) * rpc
        exp["write_rpcs"] += int(t[IDX["write_ops"]]) * rpc
    return exp


def test_ost_final_bytes_are_compute_bytes_plus_amplification(sc):
    last = sc.last("ost", RE_OST, key=lambda m: m.group(3))
    fs = sc.site.filesystems[0]
    assert set(last) == set(fs.osts)
    for ost, m in last.items():
        assert m.group(1) == fs.oss_of[ost]
    rb = sum(int(m.group(7)) for m in last.values())
    wb = sum(int(m.group(8)) for m in last.values())
    exp = expected_lustre(sc)
    compute_read = sum(int(sc.totals(r)[IDX["read_bytes"]]) for r in sc.runs)
    reader = by_name(sc)["seq_reader"]
    extra = 2 * int(sc.totals(reader)[IDX["read_bytes"]])          # amplification 3.0
    assert extra > 0
    assert rb == compute_read + extra == exp["read_bytes"]
    assert wb == exp["write_bytes"] == sum(int(sc.totals(r)[IDX["write_bytes"]]) for r in sc.runs)
    assert sum(int(m.group(4)) for m in last.values()) == exp["read_rpcs"]
    assert sum(int(m.group(5)) for m in last.values()) == exp["write_rpcs"]
    layers = sc.truth["layers"]
    for layer in ("ost", "forwarding"):
        assert sum(v["read_bytes"] for v in layers[layer].values()) == rb
        assert sum(v["write_bytes"] for v in layers[layer].values()) == wb
    assert sum(v["read_bytes"] for v in layers["compute"].values()) == compute_read
    # per-minute bandwidth truth adds up to the same volume
    for name in ("ost_bandwidth", "fwd_bandwidth"):
        rows = [x for v in sc.truth[name].values() for x in v]
        assert abs(sum(x[1] for x in rows) * 60 - rb) <= 3 * len(rows) + 1
        assert abs(sum(x[2] for x in rows) * 60 - wb) <= 3 * len(rows) + 1


def test_lustre_client_rpcs_match_the_ost_layer(sc):
    lc = sc.last("lustre-client", RE_LCLIENT, key=lambda m: (m.group(1), m.group(3)))
    ost = sc.last("ost", RE_OST, key=lambda m: m.group(3))
    per_ost = defaultdict(lambda: [0, 0])
    for (_ip, name), m in lc.items():
        per_ost[name][0] += int(m.group(4))
        per_ost[name][1] += int(m.group(5))
    for name, m in ost.items():
        assert per_ost.get(name, [0, 0]) == [int(m.group(4)), int(m.group(5))], name
    assert {ip for ip, _ in lc} == {sc.site.fwd_ip(f) for f in sc.site.fwd_nodes}
    # pages per RPC: 2 KiB tracer requests → 1 page; 1 MiB → 256; never above 256
    pages = {int(m.group(6)) for _h, _d, _k, line in sc.lines("lustre-client")
             if (m := RE_LCLIENT.match(line))}
    assert pages <= set(range(0, 257)) and 256 in pages and 1 in pages


def test_cumulative_counters_never_go_down(sc):
    for layer, rx, key, cols in (
        ("lustre-client", RE_LCLIENT, lambda m: (m.group(1), m.group(3)), (4, 5, 7)),
        ("ost", RE_OST, lambda m: m.group(3), (4, 5, 7, 8)),
        ("lwfs-server", RE_SERVER, lambda m: (m.group(1), m.group(3), m.group(4)), (5,)),
    ):
        prev: dict = {}
        for _h, _d, _k, line in sc.lines(layer):
            m = rx.match(line)
            if not m:
                continue
            vals = [int(x) for c in cols for x in m.group(c).split()]
            old = prev.get(key(m))
            assert old is None or all(a <= b for a, b in zip(old, vals, strict=True)), line
            prev[key(m)] = vals


def test_mds_sources_and_counts(sc):
    last = sc.last("mds", RE_MDS, key=lambda m: m.group(1))
    fwd_ips = {sc.site.fwd_ip(f) for f in sc.site.fwd_nodes}
    background = {"login01", "login02", "cluster2-gw"}
    assert set(last) == fwd_ips | background
    counts = {src: dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in m.group(3).split())
              for src, m in last.items()}
    names = next(iter(counts.values())).keys()
    assert "open" in names and "sync" in names and "samedir_rename" in names
    from_fwd = defaultdict(int)
    for ip in fwd_ips:
        for op, c in counts[ip].items():
            from_fwd[op] += c
    want = defaultdict(int)
    for r in sc.runs:
        for c in MDS:
            want["sync" if c == "mds_sync" else c] += int(sc.totals(r)[IDX[c]])
    assert dict(from_fwd) == dict(want)
    bg = sc.truth["mds_background"][sc.site.filesystems[0].mds]
    first = {}
    for _h, _d, _k, line in sc.lines("mds"):
        m = RE_MDS.match(line)
        first.setdefault(m.group(1), m)
    for src in background:            # counters start at zero with the simulation
        assert _ts(first[src].group(2)) < START + 1
        assert all(kv.endswith("=0") for kv in first[src].group(3).split())
    for src in background:
        assert {k: v for k, v in counts[src].items() if v} == bg[src]["ops"]
        assert bg[src]["rate_ops_s"] > 0
        total = sum(counts[src].values())
        assert 0.5 < total / (bg[src]["rate_ops_s"] * (sc.end - START)) < 1.5


def test_server_histograms_count_the_requests_served(sc):
    last = sc.last("lwfs-server", RE_SERVER, key=lambda m: (m.group(1), m.group(3), m.group(4)))
    tot = defaultdict(int)
    for (ip, cls, kind), m in last.items():
        n = sum(int(x) for x in m.group(5).split())
        tot[(cls, kind)] += n
        other = last.get((ip, cls, "wait" if kind == "exe" else "exe"))
        assert n == sum(int(x) for x in other.group(5).split())
    reads = sum(int(sc.totals(r)[IDX["read_ops"]]) for r in sc.runs)
    writes = sum(int(sc.totals(r)[IDX["write_ops"]]) for r in sc.runs)
    meta = sum(int(sc.totals(r)[IDX[c]]) for r in sc.runs for c in MDS)
    assert tot[("Read", "exe")] == tot[("Read", "wait")] == reads
    assert tot[("Write", "exe")] == tot[("Write", "wait")] == writes
    assert tot[("Meta", "exe")] == tot[("Meta", "wait")] == meta


def mean_bucket(s: Scenario, fwd: str, cls: str, kind: str) -> float:
    """Mean bucket index of a final latency histogram of one forwarding node."""
    ip = s.site.fwd_ip(fwd)
    m = s.last("lwfs-server", RE_SERVER, key=lambda m: (m.group(1), m.group(3), m.group(4)))
    h = np.array([int(x) for x in m[(ip, cls, kind)].group(5).split()])
    return float((h * np.arange(8)).sum() / h.sum()) if h.sum() else float("nan")


def peak_queue(s: Scenario, fwd: str) -> int:
    ip = s.site.fwd_ip(fwd)
    return max(int(RE_QUEUE.match(line).group(3)) for _h, _d, _k, line in s.lines("lwfs-server")
               if line.startswith(ip + " ") and "queue length" in line)


def test_a_slow_forwarding_node_waits_and_queues_longer(tmp_path, sc):
    slow = Scenario(tmp_path, faults=[Fault("fwd", "fwd000", 0.1, START, START + 86400)])
    base_wait = mean_bucket(sc, "fwd000", "Write", "wait")
    slow_wait = mean_bucket(slow, "fwd000", "Write", "wait")
    assert slow_wait > base_wait + 0.5
    assert peak_queue(slow, "fwd000") > peak_queue(sc, "fwd000") > 0
    # overloaded, requests wait far longer than they take to process
    assert slow_wait > mean_bucket(slow, "fwd000", "Write", "exe") + 1.0
    # the other forwarding node is not affected
    assert mean_bucket(slow, "fwd001", "Write", "wait") < slow_wait


# ---------------------------------------------------------------------- job log, truth, gz


def test_job_log_parses_and_matches_the_runs(sc):
    files = sorted((sc.out / "beacon" / "jobs").glob("*.log"))
    assert [p.stem for p in files] == [DAY1, DAY2]
    rows = []
    for p in files:
        got, quarantine, stats = parse_lines(p.read_text().splitlines(), str(p))
        assert not quarantine and stats.lines_read == stats.rows
        for row in got:
            assert row["start"].date().isoformat() == p.stem
        rows += got
    assert len(rows) == len(sc.runs)
    runs = {r.job_id: r for r in sc.runs}
    for row in rows:
        r = runs[row["job_id"]]
        assert r.app_id == r.job_id == str(1000000 + r.run_no)
        assert row["nodes"] == [sc.site.compute_nodes[n] for n in r.nodes]
        start = row["start"].replace(tzinfo=dt.timezone.utc).timestamp()
        end = row["end"].replace(tzinfo=dt.timezone.utc).timestamp()
        assert start <= r.start < start + 1 and end - 1 < r.end <= end
    line = files[0].read_text().splitlines()[0].split("\t")
    assert re.fullmatch(r"cn\[\d{5}(-\d{5})?(,\d{5}(-\d{5})?)*\]", line[1])


def test_gzip_output_is_the_same_and_runs_are_deterministic(tmp_path, sc):
    again = Scenario(tmp_path, gz=True)
    plain = sorted(p.relative_to(sc.root) for p in sc.root.rglob("*.log")
                   if p.parent.name != "jobs")
    packed = sorted(p.relative_to(again.root) for p in again.root.rglob("*.log.gz"))
    assert [str(p) + ".gz" for p in plain] == [str(p) for p in packed]
    for p in plain:
        with gzip.open(again.root / (str(p) + ".gz"), "rt") as fh:
            assert fh.read() == (sc.root / p).read_text(), p
    assert again.truth == sc.truth
    assert (again.root / "jobs" / f"{DAY1}.log").read_text() == \
        (sc.root / "jobs" / f"{DAY1}.log").read_text()


def test_a_slow_ost_lengthens_execution_at_healthy_forwarding_nodes(tmp_path, sc):
    """A request to a slow OST holds the LWFS server thread until the OST answers: the
    forwarding nodes' execution times grow, though the nodes themselves are healthy."""
    slow = Scenario(tmp_path, faults=[Fault("ost", o, 0.2, START, START + 86400)
                                      for o in sc.site.filesystems[0].osts])
    checked = 0
    for fwd in sc.site.fwd_nodes:
        for cls in ("Read", "Write"):
            base = mean_bucket(sc, fwd, cls, "exe")
            if np.isnan(base):              # no request of that class went through it
                continue
            got = mean_bucket(slow, fwd, cls, "exe")
            print(fwd, cls, round(base, 2), round(got, 2))
            assert got > base + 0.15, (fwd, cls, base, got)   # measured +0.24 to +0.48
            checked += 1
    assert checked >= 2
    # and the forwarding nodes' Lustre clients wait >= 1/0.2 x as long per RPC (the OSTs'
    # service time; queueing at most 8 RPCs in flight), the evidence that names the OSTs
    for name in sc.site.filesystems[0].osts:
        ratio = []
        for scen in (sc, slow):
            last = scen.last("lustre-client", RE_LCLIENT, key=lambda m: (m.group(1), m.group(3)))
            rows = [m for (_ip, o), m in last.items() if o == name]
            rpcs = sum(int(m.group(4)) + int(m.group(5)) for m in rows)
            ratio.append(sum(int(m.group(7)) for m in rows) / max(rpcs, 1))
        if ratio[0] > 0:
            print(name, [round(r * 1e3, 3) for r in ratio], "ms per RPC")
            assert ratio[1] >= 4.5 * ratio[0], name
