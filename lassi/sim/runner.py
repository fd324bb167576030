"""`lassi simulate`: one or more site-days of raw files plus `truth.json`."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import numpy as np

from lassi.core.config import Site
from lassi.sim.counters import COUNTERS, to_lassi
from lassi.sim.engine import Engine, Fault, RunTruth
from lassi.sim.workload import MIN_NODES, Run, make_runs

MIN_SIM_NODES = max(MIN_NODES.values())   # the largest run mode's minimum (N:M: 3)

# node-hours asked for by the submitted runs in dense mode, as a share of the machine's
DENSE_UTILISATION = 1.0


def epoch(d: dt.date) -> float:
    return dt.datetime(d.year, d.month, d.day, tzinfo=dt.timezone.utc).timestamp()


def iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="microseconds")


def default_faults(site: Site, start: float, days: int) -> list[Fault]:
    """One slow OST per day (and one slow forwarding node where there are any)."""
    out = []
    for d in range(days):
        t0 = start + d * 86400
        fs = site.filesystems[d % len(site.filesystems)]
        ost = fs.osts[(7 * d + 3) % len(fs.osts)]
        out.append(Fault("ost", ost, 0.15, t0 + 10 * 3600, t0 + 13 * 3600))
        if site.fwd_nodes:
            fwd = site.fwd_nodes[(d + 1) % len(site.fwd_nodes)]
            out.append(Fault("fwd", fwd, 0.2, t0 + 3 * 3600, t0 + 5 * 3600 + 1800))
    return out


def parse_fault(text: str, day0: float) -> Fault:
    """`ost:fs2-OST0003:0.2:10:00-13:00`: times in UTC hours from the first day's midnight
    (`33:00-36:00` is 09:00-12:00 of the second day)."""
    try:
        kind, name, factor, span = text.split(":", 3)
        a, b = span.split("-")

        def at(hm: str) -> float:
            h, m = hm.split(":")
            return day0 + int(h) * 3600 + int(m) * 60

        return Fault(kind, name, float(factor), at(a), at(b))
    except ValueError:
        raise ValueError(f"bad --fault {text!r}; expected KIND:NAME:FACTOR:HH:MM-HH:MM") from None


def run_truth(site: Site, run: Run, tr: RunTruth) -> dict:
    """One run's ground truth as JSON-ready data."""
    runtime = run.end - run.start
    solo = run.solo_runtime
    neighbours = sorted(tr.by_neighbour.items(), key=lambda kv: -kv[1])
    comps = sorted(tr.by_component.items(), key=lambda kv: -kv[1])
    io_s = max(tr.io_seconds, 1e-9)
    # Fig. 12 ground truth (lassi.evaluate.scores.truth_cause): what the run alone demands of one
    # forwarding node it shares (its own bytes/s, the same with read-ahead waste, requests/s)
    # and of the MDS (metadata ops/s), and the interference-prone features that makes it
    # have: N:1 mode, MDOPS above thresholds.high_mdops (Beacon's 300/s), own bandwidth at
    # least half a forwarding node's peak, IOPS at least a quarter of its peak (or being an
    # MDS / OSS aggressor).
    from collections import Counter

    from lassi.sim.engine import MD_COLS

    fwd = site.data.get("forwarding") or {}
    per = int(fwd.get("nodes_per_fwd", 0))
    share = (max(Counter(n // per for n in run.io_nodes).values()) / len(run.io_nodes)
             if per and run.io_nodes else 1.0)
    amp = run.app.archetype.read_amplification
    data = [s for s in run.plan if s.kind in ("read", "write")]
    demand = {"Bps": share * max((s.rate * s.reqsize for s in data), default=0.0),
              "fwd_Bps": share * max((s.rate * s.reqsize * (amp if s.kind == "read" else 1.0)
                                      for s in data), default=0.0),
              "fwd_iops": share * max((s.rate for s in data), default=0.0),
              "mdops": max([s.rate for s in run.plan if s.kind == "meta"]
                           + [float(s.extra[MD_COLS].sum()) / s.dur for s in data
                              if s.extra is not None and s.dur > 0], default=0.0)}
    features = [k for k, on in [
        ("N:1", run.app.archetype.mode == "N:1"),
        ("high MDOPS", run.app.archetype.aggressor == "mds"
         or demand["mdops"] > site.settings.thresholds.high_mdops),
        ("high bandwidth", bool(fwd) and demand["Bps"] >= 0.5 * float(fwd["peak_bw"])),
        ("high IOPS", run.app.archetype.aggressor == "oss"
         or (bool(fwd) and demand["fwd_iops"] >= 0.25 * float(fwd["peak_iops"])))] if on]
    return {
        "demand": demand, "features": features,
        "neighbours_lost_s": float(sum(tr.by_neighbour.values())),
        "run_no": run.run_no, "app_id": run.app_id, "job_id": run.job_id,
        "app_no": run.app.app_no, "command": run.app.command, "exe": run.app.archetype.exe,
        "archetype": run.app.archetype.name, "aggressor": run.app.archetype.aggressor,
        "mode": run.app.archetype.mode, "user": run.app.user, "project": run.app.project,
        "fs": run.app.fs, "nodes": [site.compute_nodes[n] for n in run.nodes],
        "io_nodes": [site.compute_nodes[n] for n in run.io_nodes],
        "submit": iso(run.submit), "start": iso(run.start), "end": iso(run.end),
        "runtime_s": runtime, "solo_runtime_s": solo,
        "slowdown": runtime / solo if solo else 1.0,
        "slowed": bool(tr.lost_s > 0.2 * solo),
        "lost_s": tr.lost_s,
        "neighbours": [{"run_no": k, "lost_s": v} for k, v in neighbours[:5] if v > 1.0],
        "components": [{"name": k, "lost_s": v} for k, v in comps if v > 1.0],
        "totals": {c: int(v) for c, v in zip(COUNTERS, tr.totals, strict=True)},
        "lassi_hours": {iso(h): to_lassi(v) for h, v in sorted(tr.hours.items())},
        "bandwidth": {"mean_Bps": tr.moved_bytes / io_s, "peak_Bps": tr.peak_bps,
                      "bytes": tr.moved_bytes},
        "phases": [{**p, "start": iso(p["start"]), "end": iso(p["end"])} for p in tr.phases],
    }


def _prepare_out(out: Path, overwrite: bool) -> None:
    """Make `out` an empty folder (see simulate)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "truth.json").is_file():
            raise ValueError(f"--out {out} is not empty and holds no earlier simulation; "
                             "give an empty or new folder")
        if not overwrite:
            raise ValueError(f"--out {out} already holds a simulation (truth.json); "
                             "pass --overwrite to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def simulate(site: Site, date: dt.date, days: int, seed: int, out: Path,
             faults: list[str] | None = None, gz: bool = False, traced_fraction: float = 0.1,
             tokio: bool = True, lmt_step_s: int = 60, overwrite: bool = False,
             dense: bool = False, lustre_stats: str = "exports") -> dict:
    """Simulate `days` days from `date` at `site`, write raw files and truth; return a summary.

    The writers append day by day, so `out` must be empty: a folder holding an earlier
    simulation (its truth.json) is emptied first when `overwrite`, else ValueError; any
    other non-empty folder is a ValueError.

    `dense` (Lustre-capture sites only) asks for the machine's every node-hour, so about
    90 % of the nodes are busy once the queue fills, and has every node of every running
    job touch the MDS in every capture window (sim/archer.py). `lustre_stats` (Lustre-capture
    sites): the servers print per-client export statistics (`exports`), per-job job_stats
    (`jobstats`, job ids the PBS job ids) or `both`.
    """
    if dense and site.has_forwarding:
        raise ValueError("--dense is for Lustre-capture sites (e.g. archer); Beacon sites "
                         "already trace every node")
    if len(site.compute_nodes) < MIN_SIM_NODES:
        raise ValueError(f"--nodes {len(site.compute_nodes)}: a simulated site needs at least "
                         f"{MIN_SIM_NODES} compute nodes (its N:M runs use {MIN_SIM_NODES})")
    out = Path(out)
    _prepare_out(out, overwrite)
    rng = np.random.default_rng(seed)
    start = epoch(date)
    runs = make_runs(rng, site, start, days, utilisation=DENSE_UTILISATION if dense else 0.5)
    if faults is None:
        fault_list = default_faults(site, start, days)
    else:
        fault_list = [parse_fault(f, start) for f in faults if f != "none"]
    for f in fault_list:
        if f.name not in (set(site.fwd_nodes) | {o for fs in site.filesystems for o in fs.osts}):
            raise ValueError(f"fault names unknown component {f.name!r}")
    if site.has_forwarding:
        from lassi.sim.beacon import BeaconWriter, write_job_log

        dt_s = 1.0
        writer = BeaconWriter(site, out, rng, gz=gz, traced_fraction=traced_fraction)
    else:
        from lassi.sim.archer import LustreCaptureWriter, write_scheduler

        dt_s = 5.0
        writer = LustreCaptureWriter(site, out, rng, gz=gz, reset_at=start + 6 * 3600 + 1,
                                     dense=dense, lustre_stats=lustre_stats)
    engine = Engine(site, runs, fault_list, dt_s, rng)
    sinks = [writer]
    if tokio:   # LMT sqlite, lfs df, lctl dl (own random stream: other outputs unchanged)
        from lassi.sim.tokio import LmtWriter

        sinks.append(LmtWriter(site, out, seed, days, step_s=lmt_step_s))
    end = engine.run(start, sinks)
    if site.has_forwarding:
        write_job_log(site, runs, out)
    else:
        write_scheduler(site, runs, out)
    truth = {
        "site": site.name, "nodes": len(site.compute_nodes), "seed": seed, "dense": dense,
        "start": iso(start), "days": days, "end": iso(end), "window_s": site.window_s,
        "lustre_stats": None if site.has_forwarding else lustre_stats,
        "step_s": dt_s,
        "faults": [{"kind": f.kind, "name": f.name, "factor": f.factor, "start": iso(f.start),
                    "end": iso(f.end)} for f in fault_list],
        "counter_resets": getattr(writer, "resets", []),
        "baseline": {f"{k[0]}|{k[1]}": {c: int(x) for c, x in zip(COUNTERS, v, strict=True) if x}
                     for k, v in getattr(writer, "baseline", {}).items()},
        "runs": [run_truth(site, r, engine.truth[r.run_no]) for r in runs],
    }
    for s in sinks:
        truth.update(getattr(s, "truth_extra", dict)())
    with (out / "truth.json").open("w") as fh:
        json.dump(truth, fh, indent=1)
    return {"runs": len(runs), "end": iso(end), "out": str(out),
            "slowed": sum(r["slowed"] for r in truth["runs"])}
