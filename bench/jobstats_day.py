"""`make bench`: Lustre job_stats at the scale the exporters fail at (issue #17).

Never a test: it prints figures and adds them to bench/jobstats_results.json, keyed by
the run's shape (`2x20000-24h`).

Writes OSS captures (`lctl get_param obdfilter.*.stats obdfilter.*.job_stats`, 2.14 YAML
layout, every 3 minutes) with 20,000 distinct job ids per OSS by default (19,000 Slurm-style
job ids and 1,000 procname_uid ids of tools), every entry moving at every capture, cached
under bench/cache/jobstats/. Then, each under bench/measure.py (wall time, CPU time, peak
RSS of the process tree and per role):

1. `lassi ingest --source lustre` of the captures;
2. `lassi run daily --stage job_window` (per-id deltas and the id -> job rule).

A site day is 480 captures; the default here is 2 hours (40 captures, 16 M lines with 2
OSSes), with `--hours 24` for the whole day where the disk allows (about 10 GB of text per
OSS). Rates are printed per line and per entry so that they scale to the day. The driver's
memory must stay flat whatever the number of ids: nothing per job is collected.

Usage: python bench/jobstats_day.py [--osses 2] [--ids 20000] [--hours 2] [--fresh]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache" / "jobstats"
DATE = dt.date(2017, 10, 10)
T0 = 1507593600                    # 2017-10-10 00:00 UTC
STEP_S = 180
DAEMONS = 1000                     # procname_uid ids among the ids of each OSS
OPS = ("getattr", "setattr", "punch", "sync", "statfs")


def write_captures(folder: Path, osses: int, ids: int, hours: float) -> int:
    """One capture file per OSS for the date; returns the number of lines written."""
    captures = int(hours * 3600 // STEP_S) + 1
    lines = 0
    for o in range(osses):
        out = folder / f"oss{o:02d}" / f"{DATE.isoformat()}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        names = [f"{2000000 + o * ids + i}" for i in range(ids - DAEMONS)]
        names += [f"cp.{1000 + i}" for i in range(DAEMONS)]
        target = f"fsb-OST{o:04x}"
        with open(out, "w") as fh:
            for k in range(captures):
                t = T0 + k * STEP_S
                block = [f"obdfilter.{target}.stats=", f"snapshot_time {t}.000001 secs.usecs",
                         f"statfs {k + 1} samples [reqs]", f"obdfilter.{target}.job_stats=",
                         "job_stats:"]
                for i, name in enumerate(names):
                    n = (k + 1) * (1 + i % 7)
                    block += [
                        f"- job_id:          {name}",
                        f"  snapshot_time:   {t}.{i:09d} secs.nsecs",
                        f"  start_time:      {T0 - 600}.000000000 secs.nsecs",
                        f"  read_bytes:      {{ samples: {n}, unit: bytes, min: 4096, "
                        f"max: 1048576, sum: {n << 20}, sumsq: 0, hist: {{ }} }}",
                        f"  write_bytes:     {{ samples: {2 * n}, unit: bytes, min: 4096, "
                        f"max: 1048576, sum: {n << 21}, sumsq: 0, hist: {{ }} }}",
                        *(f"  {op + ':':<17}{{ samples: {k}, unit: usecs, min: 0, max: 0, "
                          "sum: 0, sumsq: 0 }" for op in OPS)]
                fh.write("\n".join(block) + "\n")
                lines += len(block)
    return lines


def measured(name: str, out: Path, argv: list[str]) -> dict:
    """Run `argv` under bench/measure.py; its JSON figures plus the wall time seen here."""
    t = time.time()
    rc = subprocess.call([sys.executable, str(HERE / "measure.py"), str(out), "--", *argv])
    if rc:
        raise SystemExit(f"{name} failed (exit {rc})")
    got = json.loads(out.read_text())
    got["wall_s_outer"] = round(time.time() - t, 1)
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--osses", type=int, default=2)
    ap.add_argument("--ids", type=int, default=20000)
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args()
    tag = f"{args.osses}x{args.ids}-{args.hours:g}h"
    raw, work = CACHE / tag / "raw", CACHE / tag / "work"
    stamp = CACHE / tag / "lines.json"
    if args.fresh or not stamp.exists():
        shutil.rmtree(raw, ignore_errors=True)
        t = time.time()
        n = write_captures(raw, args.osses, args.ids, args.hours)
        stamp.write_text(json.dumps({"lines": n}))
        print(f"wrote {n:,} lines in {time.time() - t:.0f} s", flush=True)
    lines = json.loads(stamp.read_text())["lines"]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    lassi = [sys.executable, "-m", "lassi.cli"]
    common = ["--date", DATE.isoformat(), "--warehouse", str(work / "wh"), "--site", "archer"]
    ingest = measured("ingest", work / "ingest.json",
                      [*lassi, "ingest", "--source", "lustre", "--input", str(raw), *common])
    stage = measured("job_window", work / "job_window.json",
                     [*lassi, "run", "daily", "--stage", "job_window", *common])
    captures = int(args.hours * 3600 // STEP_S) + 1
    entries = args.osses * args.ids * captures
    out = {"osses": args.osses, "ids_per_oss": args.ids, "hours": args.hours,
           "captures": captures, "lines": lines, "entries": entries}
    for name, m in (("ingest", ingest), ("job_window", stage)):
        wall = m["wall_s"]
        out[name] = {"wall_s": wall, "cpu_s": m.get("cpu_s"),
                     "peak_rss_mib": m.get("peak_rss_mib"),
                     "rss_by_role_mib": m.get("rss_by_role_mib"),
                     "lines_per_s_per_core": round(lines / wall / 2) if name == "ingest"
                     else None,
                     "entries_per_s": round(entries / wall)}
        print(f"{name}: {wall:.1f} s wall, {m.get('cpu_s')} s CPU, peak {m.get('peak_rss_mib')} "
              f"MiB ({m.get('rss_by_role_mib')}); {entries / wall:,.0f} entries/s", flush=True)
    print(f"ingest: {lines / ingest['wall_s'] / 2:,.0f} lines/s per core over {lines:,} lines; "
          f"a whole day ({480 * args.osses * args.ids:,} entries) at these rates: ingest "
          f"{480 / captures * ingest['wall_s'] / 60:.0f} min, job_window "
          f"{480 / captures * stage['wall_s'] / 60:.0f} min (linear extrapolation)")
    results = HERE / "jobstats_results.json"
    kept = json.loads(results.read_text()) if results.exists() else {}
    if "osses" in kept:                       # the file's first layout: one run's figures
        kept = {f"{kept['osses']}x{kept['ids_per_oss']}-{kept['hours']:g}h": kept}
    kept[tag] = out
    results.write_text(json.dumps(kept, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
