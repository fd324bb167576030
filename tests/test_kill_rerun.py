"""SIGKILL mid-run, then rerun: every table equals a clean run's and nothing is left behind.

One warehouse, one simulated 4-node ARCHER day. Each command runs in a process group of
its own (the Python driver and its JVM) and is killed at a point read from what it does,
never after a sleep: `lassi ingest --raw RAW` when its log says the Lustre statistics were
written (mid-ingest, the schedulers and the ledger not yet), then `lassi run daily --stage
node_window --stage app_hour` (an admin's run on what the crashed ingest left) when
node_window's staged write appears under `_staging/` (mid-write), then `lassi run daily
--raw RAW` with the same stages (ingest, then LASSi's first two stages) when app_hour's
staged write appears (the ingest and node_window done again, app_hour not swapped in);
each next run starts on what the killed one left (a writer lock of a dead pid, staged
files, half the day). The same `lassi run daily --raw RAW` run again (an Airflow retry)
completes, and every table then equals the clean in-process run's, sorted, without the
columns that date a run; no `_staging`, `_trash` or lock file is left.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pandas as pd

from tests.conftest import FAST_JVM
from tests.spark_cluster import table
from tests.test_packaging import _env

DATE = dt.date(2017, 10, 10)
STAGES = ["--stage", "node_window", "--stage", "app_hour"]     # LASSi's first two stages


def run_until(argv: list[str], env: dict[str, str], killed_when: Callable[[list[str]], bool]
              ) -> tuple[int, list[str]]:
    """Run argv in a new process group; SIGKILL the whole group (driver and JVM) as soon as
    `killed_when(stdout lines so far)` holds. (exit status, stdout lines)."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    lines: list[str] = []
    err: list[str] = []
    readers = [threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True),
               threading.Thread(target=lambda: err.extend(p.stderr), daemon=True)]
    for t in readers:
        t.start()
    while p.poll() is None:
        if killed_when(list(lines)):
            os.killpg(p.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    rc = p.wait(timeout=600)
    for t in readers:
        t.join(timeout=10)
    assert rc in (0, -signal.SIGKILL), f"rc {rc}:\n{''.join(lines)}\n{''.join(err)[-3000:]}"
    return rc, lines


def test_killed_runs_then_a_rerun_equal_a_clean_run(archer_day, tmp_path):
    """The killed runs' warehouse ends equal to the shared clean in-process run of the same
    raw day (conftest.archer_day), table by table."""
    assert (archer_day.date, archer_day.nodes) == (DATE, 4)
    raw, clean = archer_day.raw, archer_day.warehouse
    wh = tmp_path / "wh"
    common = ["--raw", str(raw), "--date", DATE.isoformat(), "--warehouse", str(wh),
              "--site", "archer", "--nodes", "4"]
    ingest = [sys.executable, "-m", "lassi.cli", "ingest", *common]
    stages = [sys.executable, "-m", "lassi.cli", "run", "daily", *common[2:], *STAGES]
    rerun = [sys.executable, "-m", "lassi.cli", "run", "daily", *common, *STAGES]
    # whole-stage code generation off, as in the shared sessions (conftest.SMALL_DATA_SQL):
    # these cold JVMs then compile less (process accounting, session 31: 56 against 63 JVM
    # CPU-s for the three runs); the clean run they are compared with runs without it too
    env = {**_env(tmp_path), "LASSI_SPARK_CONF": (
        "spark.driver.memory=1g,spark.sql.shuffle.partitions=4,spark.ui.enabled=false,"
        "spark.sql.codegen.wholeStage=false,"
        f"spark.driver.extraJavaOptions=-Duser.timezone=UTC {FAST_JVM}")}

    def logged(prefix: str) -> Callable[[list[str]], bool]:
        return lambda lines: any(line.startswith(prefix) for line in lines)

    def staging(table: str) -> Callable[[list[str]], bool]:
        return lambda _: (wh / "_staging" / table).exists()

    for cmd, point, when in ((ingest, "after the Lustre ingest", logged("lustre: ")),
                             (stages, "mid-write of node_window", staging("node_window")),
                             (rerun, "mid-write of app_hour", staging("app_hour"))):
        t = time.time()
        rc, lines = run_until(cmd, env, when)
        assert rc == -signal.SIGKILL, f"not killed {point}: the run ended first"
        print(f"killed `lassi {' '.join(cmd[3:5])}` {point} after {time.time() - t:.0f} s: "
              f"{len(lines)} log lines")
    assert (wh / "_lock" / "writer").exists()             # a dead holder's lock stays
    t = time.time()
    rc, lines = run_until(rerun, env, lambda _: False)
    print(f"the rerun: {time.time() - t:.0f} s")
    assert rc == 0 and any(line.startswith("app_hour: ") for line in lines), lines

    # the clean run went on through every stage: compare the tables these commands write
    tables = sorted(p.name for p in wh.iterdir() if not p.name.startswith("_"))
    assert {"raw_lustre_stats", "app_run", "node_window", "app_hour", "fs_baseline",
            "ingest_log", "data_check"} <= set(tables)
    assert set(tables) <= {p.name for p in clean.iterdir()}
    for t in tables:
        pd.testing.assert_frame_equal(table(clean, t), table(wh, t), check_dtype=False,
                                      obj=t)
    leftovers = [p.name for p in wh.iterdir() if p.name.startswith("_")]
    assert leftovers in ([], ["_lock"]) and not any((wh / "_lock").iterdir()), leftovers
