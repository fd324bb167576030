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
* `rss_by_role_mib`: the same peak per role: `python_driver` (the command's own Python and
  shell processes), `jvm` (the Spark JVM: the driver, and in local mode the executors
  too) and `python_workers` (pyspark.daemon / worker processes of the executors). The
  driver figure the issue bounds (<= 2 GB whatever the size) is `python_driver`; `jvm`
  shows that the JVM's use stays flat too.
* `max_child_maxrss_mib`: `ru_maxrss` of RUSAGE_CHILDREN after the command ended, i.e.
  the largest single descendant's peak as the kernel saw it (only descendants that were
  waited for; a JVM orphaned at exit is not counted), as a cross-check.

* `marks` and `series`, for figures per stage inside the phase: the time (s from the
  start) of each stdout line (at most MAX_MARKS; a long line keeps its start and end) and, every
  SERIES_S, the tree's CPU seconds so far and RSS per role. bench/run.py turns them into
  wall time, CPU time and peak memory per stage (the stage lines of `lassi run daily`
  say how long each stage took; an ingest summary line closes its source).

The command's stdout passes through (read line by line to time it); stderr passes
through untouched; the exit status is the command's.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

POLL_S = 0.1
SERIES_S = 0.5
MAX_MARKS = 2000


ROLES = ("python_driver", "jvm", "python_workers")


_ROLE: dict[int, str] = {}   # pid -> role, fixed at first sight as the JVM or a worker (an
                             # exiting process may lose its command line and look like
                             # something else); a Python driver is looked at again at every
                             # poll: a child seen between its fork and its exec still shows
                             # the driver's command line (session 44: a JVM counted as the
                             # driver, 2.3 GiB, for a whole phase)


def role(p: psutil.Process) -> str:
    """Which part of a Spark command `p` is (see ROLES)."""
    if p.pid in _ROLE:
        return _ROLE[p.pid]
    cmd = p.cmdline()
    if not cmd:
        return "python_driver"          # not classified yet: look again at the next poll
    text = " ".join(cmd)
    if p.name().startswith("java") or Path(cmd[0]).name == "java":
        _ROLE[p.pid] = "jvm"
    elif "pyspark.daemon" in text or "pyspark.worker" in text:
        _ROLE[p.pid] = "python_workers"
    else:                                       # spark-submit's scripts exec into java
        return "python_driver"
    return _ROLE[p.pid]


def poll(proc: psutil.Process, cpu: dict[int, float]) -> dict[str, int]:
    """Summed RSS (bytes) per role of `proc` and all its descendants (vanished ones count
    as 0); records each one's CPU seconds so far in `cpu` (pid -> user + system)."""
    total = dict.fromkeys(ROLES, 0)
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return total
    for p in procs:
        try:
            with p.oneshot():
                total[role(p)] += p.memory_info().rss
                t = p.cpu_times()
            cpu[p.pid] = max(cpu.get(p.pid, 0.0), t.user + t.system)
        except psutil.Error:
            pass
    return total


def _pass_through(stream, t0: float, marks: list[tuple[float, str]]) -> None:
    """Copy the child's stdout to ours, noting when each line arrived."""
    for line in stream:
        sys.stdout.write(line)
        sys.stdout.flush()
        text = line.rstrip()
        if len(text) > 240:            # keep the end: a stage line ends "for D (12.3 s)"
            text = text[:150] + " ... " + text[-80:]
        if len(marks) < MAX_MARKS and text:
            marks.append((round(time.perf_counter() - t0, 2), text))


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: measure.py OUT.json -- CMD [ARG ...]")
    out, cmd = sys.argv[1], sys.argv[3:]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    marks: list[tuple[float, str]] = []
    reader = threading.Thread(target=_pass_through, args=(child.stdout, t0, marks), daemon=True)
    reader.start()
    ps = psutil.Process(child.pid)
    peak = 0
    peaks = dict.fromkeys(ROLES, 0)
    cpu: dict[int, float] = {}
    series: list[list] = []
    while child.poll() is None:
        rss = poll(ps, cpu)
        peak = max(peak, sum(rss.values()))
        peaks = {k: max(v, rss[k]) for k, v in peaks.items()}
        now = time.perf_counter() - t0
        if not series or now - series[-1][0] >= SERIES_S:
            series.append([round(now, 2), round(sum(cpu.values()), 2),
                           *(round(rss[k] / 2**20, 1) for k in ROLES)])
        time.sleep(POLL_S)
    wall = time.perf_counter() - t0
    reader.join(timeout=5)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = {"cmd": cmd, "rc": child.returncode, "wall_s": round(wall, 2),
           "peak_rss_mib": round(peak / 2**20, 1),
           "rss_by_role_mib": {k: round(v / 2**20, 1) for k, v in peaks.items()},
           "max_child_maxrss_mib": round(ru.ru_maxrss / 1024, 1),
           "cpu_s": round(sum(cpu.values()), 1),
           "waited_children_cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
           "marks": marks, "series_columns": ["t_s", "cpu_s", *ROLES], "series": series}
    with open(out, "w") as fh:
        json.dump(res, fh)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
