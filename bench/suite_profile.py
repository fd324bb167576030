"""`make suite-profile`: where the test suite's time goes. It prints figures and asserts nothing.

It runs pytest with the arguments it is given (`make suite-profile` passes `make test`'s,
then $SUITE_ARGS) and prints:
- the wall time;
- the machine's busy CPU seconds and the CPU time the hypervisor took (steal), from
  /proc/stat;
- a calibration loop timed before the run: runs of different days on one virtual
  machine differ by ±10 %, and the loop shows how fast the machine was;
- the CPU seconds and Spark jobs of every test file (bench/suite_cpu_plugin.py), sorted;
- the CPU seconds and Spark jobs of every pipeline activity (simulate, ingest_raw, each
  daily stage, the report) summed over the tests that call it, sorted.

The suite is CPU-bound (both workers busy to the end), so the busy CPU seconds measure
a change, not per-test durations (README, Tests). For one file:
`make suite-profile SUITE_ARGS=tests/test_io_phase.py`. The figures also go to
bench/cache/suite_profile.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "cache" / "suite_profile.json"


def cpu_ticks() -> tuple[int, int]:
    """(busy, steal) clock ticks of the whole machine since boot (/proc/stat)."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = f[:8]
    return user + nice + system + irq + softirq, steal


def calibration_s() -> float:
    """CPU seconds of a fixed pure-Python loop: how fast this machine is right now."""
    t = time.process_time()
    s = 0
    for i in range(20_000_000):
        s += i
    return time.process_time() - t


def run(args: list[str]) -> dict:
    """Run pytest with `args` and the plugin; return the figures."""
    tick = os.sysconf("SC_CLK_TCK")
    calib = calibration_s()
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as out:
        # the plugin alone on the workers' path (the tests' subprocesses inherit it: the
        # clone itself must stay off it, or the installed-wheel tests would import it)
        plugin = Path(out) / "plugin"
        plugin.mkdir()
        shutil.copy(Path(__file__).with_name("suite_cpu_plugin.py"), plugin)
        env = {**os.environ, "SUITE_CPU_OUT": out,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin),
                                                          os.environ.get("PYTHONPATH")]))}
        cmd = [sys.executable, "-m", "pytest", "-p", "suite_cpu_plugin", *args]
        (b0, s0), t0 = cpu_ticks(), time.time()
        rc = subprocess.run(cmd, cwd=REPO, env=env).returncode
        (b1, s1), wall = cpu_ticks(), time.time() - t0
        files: dict[str, dict] = {}
        activities: dict[str, dict] = {}
        for f in Path(out).glob("*.json"):      # one per worker
            worker = json.loads(f.read_text())
            files.update(worker["files"])
            for name, v in worker["activities"].items():
                acc = activities.setdefault(name, dict.fromkeys(v, 0))
                for k, x in v.items():
                    acc[k] += x
    return {"pytest_exit": rc, "pytest_args": args, "wall_s": round(wall),
            "busy_cpu_s": round((b1 - b0) / tick), "steal_s": round((s1 - s0) / tick),
            "calibration_s": round(calib, 2), "files": files, "activities": activities}


def report(res: dict) -> None:
    """Print the run's figures, the test files and the activities by CPU seconds, the
    dearest first."""
    m, s = divmod(res["wall_s"], 60)
    print(f"\nsuite: {m}:{s:02d} wall, {res['busy_cpu_s']:,} busy CPU-s "
          f"({res['busy_cpu_s'] / max(res['wall_s'], 1):.2f} cores), steal {res['steal_s']} s, "
          f"calibration loop {res['calibration_s']} s, pytest exit {res['pytest_exit']}")
    rows = sorted(res["files"].items(),
                  key=lambda kv: -(kv[1]["py"] + kv[1]["reaped"] + kv[1]["jvm"] + kv[1]["other"]))
    total = sum(v["py"] + v["reaped"] + v["jvm"] + v["other"] for _, v in rows)
    print(f"\n{'test file':34s} {'tests':>5s} {'wall s':>7s} {'CPU s':>7s} {'Python':>7s} "
          f"{'ended':>7s} {'JVMs':>7s} {'other':>7s} {'Spark jobs':>10s}")
    for name, v in rows:
        cpu = v["py"] + v["reaped"] + v["jvm"] + v["other"]
        print(f"{name:34s} {v['tests']:5d} {v['wall']:7.0f} {cpu:7.0f} {v['py']:7.0f} "
              f"{v['reaped']:7.0f} {v['jvm']:7.0f} {v['other']:7.0f} {v['spark_jobs']:10.0f}")
    print(f"{'all files':34s} {'':5s} {'':7s} {total:7.0f}   (Python: the worker's own; "
          "ended: its finished subprocesses; JVMs: its live Spark JVMs; Spark jobs: its "
          "shared session's)")
    acts = sorted(res["activities"].items(), key=lambda kv: -kv[1]["cpu"])
    print(f"\n{'activity (outermost calls)':34s} {'calls':>5s} {'wall s':>7s} {'CPU s':>7s} "
          f"{'Spark jobs':>10s}")
    for name, v in acts:
        print(f"{name:34s} {v['calls']:5d} {v['wall']:7.0f} {v['cpu']:7.0f} "
              f"{v['spark_jobs']:10.0f}")
    print(f"{'all activities':34s} {'':5s} {'':7s} {sum(v['cpu'] for _, v in acts):7.0f}   "
          "(in the workers' own sessions; the DAG tests' spark-submits are not activities)")


def main(argv: list[str]) -> int:
    res = run(argv)
    report(res)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(res, indent=1))
    print(f"\nfigures: {OUT}")
    return res["pytest_exit"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
