"""`make bench` (part 4): a TaihuLight day with full Beacon traces, raw -> report, timed.

Never a test: prints figures and PASS/FAIL and writes `taihulight_day` in bench/results.json.

Sizes 1,024, 2,048 and 4,096 nodes (8 forwarding nodes at 4,096: 512 compute nodes per
forwarding node), every job traced (`lassi simulate --traced-fraction 1`). Each size is
cached like bench/run.py's days (bench/cache/taihulight-<nodes>/). Phases, each its own
process under bench/measure.py (wall, CPU, peak RSS per role and per stage):

  simulate  `lassi simulate --site taihulight` (not part of "the day")
  ingest    `lassi ingest --raw`
  daily     `jobs/daily.py`: every stage, one process
  report    `lassi report daily`

Targets (issue #15): the 4,096-node day raw -> report <= 900 s on this 2-core machine;
the second-pass merge (`trace_merged`), the profiles (`job_profile`) and the phases
(`io_phase`) grow linearly from 1,024 to 4,096 nodes (time factor <= 1.1x the node
factor); the Python driver stays <= 2 GB.

Usage: python bench/taihulight_day.py [--sizes 1024,2048,4096] [--fresh]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import run  # noqa: E402  (bench/ sibling module)

DAY_LIMIT_S = 900.0
LINEAR = ("trace_merged", "job_profile", "io_phase")   # must scale linearly with nodes
RAW_TABLES = ("raw_lwfs_trace", "raw_lwfs_server", "raw_ost", "raw_lustre_client",
              "raw_mds")


class BeaconDay(run.Day):
    """A TaihuLight day: ingest, every daily stage in one process, the report."""

    SITE, DATE = "taihulight", dt.date(2018, 2, 25)
    PHASES = ["simulate", "ingest", "daily", "report"]
    DAY = ["ingest", "daily", "report"]
    LABEL = {"simulate": "simulate (not in the day)", "ingest": "ingest",
             "daily": "every daily stage", "report": "report"}
    INGESTED = ("app_run", "ingest_log")

    def command(self, phase: str) -> list[str]:
        if phase == "daily":
            return [sys.executable, str(run.REPO / "jobs" / "daily.py"), *self.wh_args()]
        cmd = super().command(phase)
        return [*cmd, "--traced-fraction", "1"] if phase == "simulate" else cmd

    def annotate(self) -> None:
        raw_rows = [self.rows(t) for t in RAW_TABLES]
        self.inputs = {
            "raw_mib": round(sum(f.stat().st_size for f in self.raw.rglob("*") if f.is_file())
                             / 2**20, 1),
            "raw_trace_rows": sum(r or 0 for r in raw_rows),
            "trace_merged_rows": self.rows("trace_merged"),
            "job_summary_rows": self.rows("job_summary"), "io_phase_rows": self.rows("io_phase"),
            "app_run_rows": self.rows("app_run"), "simulated_runs": self.runs,
        }
        if "ingest" in self.res:
            self.res["ingest"]["rows"] = self.inputs["raw_trace_rows"]
            self.res["ingest"]["note"] = ("rows of the five Beacon raw tables (the six Beacon "
                                          "layers are one Spark job: the first layer line "
                                          "carries their time)")
        if "daily" in self.res:
            self.res["daily"]["rows"] = self.inputs["trace_merged_rows"]
            self.res["daily"]["note"] = "trace_merged rows"

    def headline(self) -> str:
        inp = self.inputs
        return (f"taihulight {self.nodes:,} nodes, {self.DATE}: {inp['simulated_runs'] or '?'} "
                f"simulated runs, raw {inp['raw_mib']:,.0f} MiB, {inp['raw_trace_rows']:,} raw "
                f"trace rows, {inp['trace_merged_rows'] or 0:,} trace_merged rows")

    def stage_s(self, name: str) -> float | None:
        return next((st["wall_s"] for st in self.stages("daily") if st["stage"] == name), None)


def targets(days: list[BeaconDay]) -> tuple[list[str], dict]:
    out, res = [], {}
    big = days[-1]
    day = big.day_s()
    ok = None if day is None else day <= DAY_LIMIT_S
    res["day"] = {"nodes": big.nodes, "seconds": day, "limit": DAY_LIMIT_S, "pass": ok}
    out.append(f"{run.verdict(ok)}  the day at {big.nodes:,} nodes: "
               + (f"{day:.1f} s" if day is not None else "incomplete")
               + f" (limit {DAY_LIMIT_S:.0f} s)")
    drivers = {d.nodes: d.peak_role("python_driver") for d in days}
    if all(drivers.values()):
        ok = max(drivers.values()) <= run.DRIVER_LIMIT_MIB
        res["driver"] = {"python_driver_peak_mib": drivers, "pass": ok}
        out.append(f"{run.verdict(ok)}  Python driver peak RSS: " + ", ".join(
            f"{n:,} nodes {v:,.0f} MiB" for n, v in drivers.items()))
    base = days[0]
    for other in days[1:]:
        factor = other.nodes / base.nodes
        for st in LINEAR:
            a, b = base.stage_s(st), other.stage_s(st)
            if not a or b is None:
                out.append(f"n/a   {st} {base.nodes:,} -> {other.nodes:,}: no stage time")
                continue
            g, limit = b / a, 1.1 * factor
            res.setdefault("linear", {})[f"{st} {base.nodes}->{other.nodes}"] = {
                "ratio": g, "limit": limit, "pass": g <= limit, "small_s": a, "big_s": b}
            out.append(f"{run.verdict(g <= limit)}  {st} {base.nodes:,} -> {other.nodes:,} "
                       f"nodes: {a:.1f} -> {b:.1f} s = {g:.2f}x (limit {limit:.1f}x)")
    return out, res


def main() -> int:
    ap = argparse.ArgumentParser(description="TaihuLight day benchmark (see docstring)")
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--fresh", action="store_true", help="re-ingest even when cached")
    a = ap.parse_args()
    lock = run.bench_lock()   # noqa: F841 - held until the process exits
    t0 = time.time()
    days = []
    for n in sorted(int(x) for x in a.sizes.split(",") if x.strip()):
        d = BeaconDay(n, a.fresh, dense=False)
        d.run(BeaconDay.PHASES[1:])
        days.append(d)
    print()
    for d in reversed(days):
        print(d.table(), end="\n\n")
    lines, tres = targets(days)
    print("targets:")
    print("\n".join("  " + ln for ln in lines))
    print(f"(benchmark took {time.time() - t0:.0f} s; load {os.getloadavg()[0]:.1f} at end)")
    run.save_results("taihulight", {
        "date": BeaconDay.DATE.isoformat(),
        "run_at": dt.datetime.now().isoformat(timespec="seconds"),
        "sizes": {str(d.nodes): run.day_results(d) for d in days},
        "targets": tres}, key="taihulight_day")
    return 0


if __name__ == "__main__":
    sys.exit(main())
