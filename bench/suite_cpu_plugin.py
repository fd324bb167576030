"""pytest plugin of `bench/suite_profile.py`: the CPU seconds of every test file.

Around each test it reads, through psutil, the worker's own CPU time, the CPU time of
the worker's children that have ended (`spark-submit` and `lassi` subprocesses), and
that of its live descendants (its Spark session's JVM, Spark's Python workers).
At the end it writes `<SUITE_CPU_OUT>/<worker>.json`, with one entry per test file.
The figures are lower bounds: a process that a test kills (`test_kill_rerun`), and the
JVM of a `lassi` subprocess that exits without waiting for it, are reaped by no process
of the worker, so their CPU time is counted nowhere here (the machine's busy CPU seconds
count it). It is loaded only by that script (`-p suite_cpu_plugin`), never by
`make test`.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import psutil
import pytest

_FIELDS = ("wall", "py", "reaped", "jvm", "other")
_per_file: dict[str, dict[str, float]] = {}
_me = psutil.Process()


def _snapshot() -> tuple[float, float, float, dict[int, tuple[str, float]]]:
    """(wall clock, own CPU, ended children's CPU, {pid: (name, CPU)} of live descendants)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = {}
    for p in _me.children(recursive=True):
        try:
            t = p.cpu_times()
            live[p.pid] = (p.name(), t.user + t.system)
        except psutil.Error:         # ended meanwhile: counted with the reaped ones
            pass
    return (time.time(), own.ru_utime + own.ru_stime, ended.ru_utime + ended.ru_stime, live)


def _difference(a, b) -> dict[str, float]:
    jvm = other = 0.0
    for pid, (name, cpu) in b[3].items():
        d = cpu - a[3].get(pid, (name, 0.0))[1]
        if name == "java":
            jvm += d
        else:
            other += d
    return {"wall": b[0] - a[0], "py": b[1] - a[1], "reaped": b[2] - a[2], "jvm": jvm,
            "other": other}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _snapshot()
    yield
    acc = _per_file.setdefault(item.path.name, {**dict.fromkeys(_FIELDS, 0.0), "tests": 0})
    for k, v in _difference(before, _snapshot()).items():
        acc[k] += v
    acc["tests"] += 1


def pytest_sessionfinish(session):
    out = os.environ.get("SUITE_CPU_OUT")
    if out:
        who = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (Path(out) / f"{who}.json").write_text(json.dumps(_per_file))
