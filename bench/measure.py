"""Run one command and report its wall time and peak memory as one JSON line.

Usage: python bench/measure.py OUT.json -- CMD [ARG ...]

Why a wrapper: a Spark phase is python -> spark-submit -> java, and the JVM is where the
memory goes. `getrusage(RUSAGE_CHILDREN)` in the benchmark process would be a running
maximum over *every* phase so far (ru_maxrss of children is the largest single descendant
ever waited for), so each phase runs under this fresh process instead, which reports:

* `peak_rss_mib`: the peak of the summed RSS of the whole process tree (driver + JVM +
  Python workers), polled with psutil every 0.1 s. This is the figure the table prints;
  it can miss a spike shorter than the poll interval.
* `cpu_s`: CPU seconds (user + system) of the tree, summed over every process seen while
  polling (what it used until its last poll). On a shared, overloaded machine this is the
  less noisy figure: wall time grows with the load, CPU time much less.
* `max_child_maxrss_mib`: `ru_maxrss` of RUSAGE_CHILDREN after the command ended, i.e.
  the largest single descendant's peak as the kernel saw it (only descendants that were
  waited for; a JVM orphaned at exit is not counted), as a cross-check.

The command's stdout/stderr pass through; the exit status is the command's.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import psutil

POLL_S = 0.1


def poll(proc: psutil.Process, cpu: dict[int, float]) -> int:
    """Summed RSS (bytes) of `proc` and all its descendants (vanished ones count as 0);
    records each one's CPU seconds so far in `cpu` (pid -> user + system)."""
    total = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for p in procs:
        try:
            with p.oneshot():
                total += p.memory_info().rss
                t = p.cpu_times()
            cpu[p.pid] = max(cpu.get(p.pid, 0.0), t.user + t.system)
        except psutil.Error:
            pass
    return total


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: measure.py OUT.json -- CMD [ARG ...]")
    out, cmd = sys.argv[1], sys.argv[3:]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd)
    ps = psutil.Process(child.pid)
    peak = 0
    cpu: dict[int, float] = {}
    while child.poll() is None:
        peak = max(peak, poll(ps, cpu))
        time.sleep(POLL_S)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = {"cmd": cmd, "rc": child.returncode, "wall_s": round(wall, 2),
           "peak_rss_mib": round(peak / 2**20, 1),
           "max_child_maxrss_mib": round(ru.ru_maxrss / 1024, 1),
           "cpu_s": round(sum(cpu.values()), 1),
           "waited_children_cpu_s": round(ru.ru_utime + ru.ru_stime, 1)}
    with open(out, "w") as fh:
        json.dump(res, fh)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
