"""pytest plugin of `bench/suite_profile.py`: the CPU seconds of every test file, and of
every pipeline activity.

Around each test it reads, through psutil, the worker's own CPU time, the CPU time of
the worker's children that have ended (`spark-submit` and `lassi` subprocesses), and
that of its live descendants (its Spark session's JVM, Spark's Python workers), and the
number of Spark jobs its session has started. The same CPU sum is read around every call
of the pipeline's activities (`ACTIVITIES`: simulate, ingest_raw, each daily stage, the
daily report), wherever a test calls them; a call inside another activity counts only
for the outer one. At the end it writes `<SUITE_CPU_OUT>/<worker>.json`: one entry per
test file, and one per activity.
The figures are lower bounds: a process that a test kills (`test_kill_rerun`), and the
JVM of a `lassi` subprocess that exits without waiting for it, are reaped by no process
of the worker, so their CPU time is counted nowhere here (the machine's busy CPU seconds
count it). It is loaded only by that script (`-p suite_cpu_plugin`), never by
`make test`.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

_FIELDS = ("wall", "py", "reaped", "jvm", "other", "spark_jobs")
_per_file: dict[str, dict[str, float]] = {}
_per_activity: dict[str, dict[str, float]] = {}
_me = psutil.Process()
_inside = [0]            # activities running now (nested calls count for the outer one)
_jobs_before_teardown = [0]

# "module:function" -> activity name (the daily stages are added from lassi.pipeline.daily)
ACTIVITIES = {"lassi.sim.runner:simulate": "simulate",
              "lassi.ingest.runner:ingest_raw": "ingest_raw",
              "lassi.report.daily:write_daily_report": "report"}


def _spark_jobs() -> int:
    """Spark jobs the worker's session has started so far (0 without one)."""
    ctx = getattr(sys.modules.get("pyspark"), "SparkContext", None)
    sc = getattr(ctx, "_active_spark_context", None)
    if sc is None:
        return 0
    try:
        return int(sc._jsc.sc().dagScheduler().nextJobId())
    except Exception:           # stopped meanwhile, or another Spark's internals
        return 0


def _cpu_and_jobs() -> tuple[float, int]:
    """The worker's CPU seconds with its ended children and live descendants, and the Spark
    jobs its session has started (one `_snapshot`)."""
    _wall, own, ended, live, jobs = _snapshot()
    return own + ended + sum(cpu for _name, cpu in live.values()), jobs


def _measured(fn: Callable, name: str) -> Callable:
    """`fn`, adding the CPU seconds, wall seconds and Spark jobs of each outermost call
    to activity `name`."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        outer = _inside[0] == 0
        _inside[0] += 1
        (c0, j0), t0 = (_cpu_and_jobs(), time.time()) if outer else ((0.0, 0), 0.0)
        try:
            return fn(*args, **kwargs)
        finally:
            _inside[0] -= 1
            if outer:
                c1, j1 = _cpu_and_jobs()
                acc = _per_activity.setdefault(name, {"calls": 0, "cpu": 0.0, "wall": 0.0,
                                                      "spark_jobs": 0})
                acc["calls"] += 1
                acc["cpu"] += c1 - c0
                acc["wall"] += time.time() - t0
                acc["spark_jobs"] += max(j1 - j0, 0)
    return call


def pytest_configure(config) -> None:
    """Wrap every activity before the test modules import them."""
    from lassi.pipeline.daily import STAGES

    targets = {**ACTIVITIES, **{t: f"stage {name}" for name, t in STAGES.items()}}
    for target, name in targets.items():
        module, fn = target.split(":")
        m = importlib.import_module(module)
        setattr(m, fn, _measured(getattr(m, fn), name))


def _snapshot() -> tuple[float, float, float, dict[int, tuple[str, float]], int]:
    """(wall clock, own CPU, ended children's CPU, {pid: (name, CPU)} of live descendants,
    Spark jobs started)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = {}
    for p in _me.children(recursive=True):
        try:
            t = p.cpu_times()
            live[p.pid] = (p.name(), t.user + t.system)
        except psutil.Error:         # ended meanwhile: counted with the reaped ones
            pass
    return (time.time(), own.ru_utime + own.ru_stime, ended.ru_utime + ended.ru_stime, live,
            _spark_jobs())


def _difference(a, b) -> dict[str, float]:
    jvm = other = 0.0
    for pid, (name, cpu) in b[3].items():
        d = cpu - a[3].get(pid, (name, 0.0))[1]
        if name == "java":
            jvm += d
        else:
            other += d
    return {"wall": b[0] - a[0], "py": b[1] - a[1], "reaped": b[2] - a[2], "jvm": jvm,
            "other": other, "spark_jobs": max(b[4] - a[4], 0)}


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """Count the Spark jobs before the teardown: the last test's stops the session."""
    _jobs_before_teardown[0] = _spark_jobs()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _snapshot()
    yield
    acc = _per_file.setdefault(item.path.name, {**dict.fromkeys(_FIELDS, 0.0), "tests": 0})
    after = _snapshot()
    if after[4] < _jobs_before_teardown[0]:      # the session was stopped in the teardown
        after = (*after[:4], _jobs_before_teardown[0])
    for k, v in _difference(before, after).items():
        acc[k] += v
    acc["tests"] += 1


def pytest_sessionfinish(session):
    out = os.environ.get("SUITE_CPU_OUT")
    if out:
        who = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (Path(out) / f"{who}.json").write_text(json.dumps({"files": _per_file,
                                                           "activities": _per_activity}))
