"""One writer per warehouse (lassi.core.writer_lock): a second writer is refused with one
line naming the holder, or waits; a dead holder's lock expires (at once on this host, after
TTL_S elsewhere); readers leave a live writer's half-done swap alone; taking the lock
clears what a killed writer left (staging, half swaps)."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lassi.cli.args import EXIT_LOCKED
from lassi.cli.main import main
from lassi.core import writer_lock
from lassi.core.warehouse import Warehouse
from lassi.core.writer_lock import LockHeld, WriterLock

D1 = dt.date(2024, 1, 1)


def q(line: int, d: dt.date = D1) -> tuple:
    return ("pbs", "f.txt", line, f"raw {line}", "bad", dt.datetime(2024, 1, 3), d)


def lock_of(spark, root: Path, command: str) -> WriterLock:
    wh = Warehouse(spark, str(root))
    return WriterLock(spark.sparkContext._jvm, wh._fs, str(root), command, root)


def plant(root: Path, host: str, pid: int, age_s: float = 0.0) -> Path:
    """A lock file as another holder would have left it, `age_s` seconds old."""
    path = root / "_lock" / "writer"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"command": "lassi run daily --date 2024-01-01", "host": host,
                                "pid": pid, "token": "t", "started": "2024-01-01 00:00:00"}))
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_second_writer_is_refused_naming_the_holder_then_gets_it(spark, tmp_path):
    first = lock_of(spark, tmp_path, "lassi run daily --date 2024-01-01")
    first.acquire()
    holder = json.loads((tmp_path / "_lock" / "writer").read_text())
    assert (holder["pid"], holder["host"]) == (os.getpid(), socket.gethostname())
    second = lock_of(spark, tmp_path, "lassi ingest")
    with pytest.raises(LockHeld) as exc:
        second.acquire()
    msg = str(exc.value)
    assert "\n" not in msg and "lassi run daily --date 2024-01-01" in msg
    assert f"pid {os.getpid()} on {socket.gethostname()}" in msg and "--lock-wait" in msg
    first.release()
    assert not (tmp_path / "_lock" / "writer").exists()
    second.acquire()                                       # free now
    second.release()


def test_a_waiting_writer_gets_the_lock_when_the_holder_finishes(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(writer_lock, "POLL_S", 0.1)
    first = lock_of(spark, tmp_path, "first")
    first.acquire()
    threading.Timer(1.0, first.release).start()
    second = lock_of(spark, tmp_path, "second")
    t = time.monotonic()
    second.acquire(wait_s=30)
    assert 0.9 < time.monotonic() - t < 20
    assert json.loads((tmp_path / "_lock" / "writer").read_text())["command"] == "second"
    second.release()


def test_dead_holders_expire(spark, tmp_path):
    here = socket.gethostname()
    plant(tmp_path, here, dead_pid())                      # killed on this host: at once
    lock = lock_of(spark, tmp_path, "me")
    lock.acquire()
    lock.release()
    plant(tmp_path, "other-host", 1, age_s=writer_lock.TTL_S + 5)   # silent too long
    lock.acquire()
    lock.release()
    plant(tmp_path, "other-host", 1, age_s=1)              # elsewhere, heartbeat fresh
    with pytest.raises(LockHeld, match="pid 1 on other-host"):
        lock.acquire()
    plant(tmp_path, here, os.getppid(), age_s=writer_lock.TTL_S + 5)  # live pid, no beat
    lock.acquire()
    lock.release()


def test_heartbeat_keeps_a_long_holder_fresh(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(writer_lock, "HEARTBEAT_S", 0.2)
    lock = lock_of(spark, tmp_path, "long")
    lock.acquire()
    path = tmp_path / "_lock" / "writer"
    old = time.time() - 3600
    os.utime(path, (old, old))
    deadline = time.monotonic() + 10                       # beats every 0.2 s
    while time.time() - path.stat().st_mtime > 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert time.time() - path.stat().st_mtime < 5          # touched again
    lock.release()


def half_swap(spark, tmp_path: Path) -> tuple[Path, Path]:
    """A warehouse with two rows on D1 whose partition a writer has just moved aside (the
    first rename of a swap): its root and the trash entry."""
    root = tmp_path / "wh"
    Warehouse(spark, str(root)).write_rows([q(1), q(2)], "quarantine")
    trash = root / "_trash" / "quarantine" / f"date={D1}.tok"
    trash.parent.mkdir(parents=True, exist_ok=True)
    (root / "quarantine" / f"date={D1}").rename(trash)
    return root, trash


def test_readers_leave_a_live_writers_half_swap_alone(spark, tmp_path):
    root, trash = half_swap(spark, tmp_path)
    writer = Warehouse(spark, str(root))
    writer._tidy = lambda: None                            # a writer between its swaps
    writer.lock_writes("writer", 0)
    reader = Warehouse(spark, str(root))
    assert not reader.has("quarantine", D1) and trash.exists()   # not "repaired" under it
    writer.release_writes()
    assert reader.has("quarantine", D1) and not trash.exists()   # no live writer: repaired
    assert reader.read("quarantine", D1).count() == 2


def test_taking_the_lock_clears_a_killed_writers_leftovers(spark, tmp_path):
    root, _ = half_swap(spark, tmp_path)
    staged = root / "_staging" / "quarantine" / "abc" / f"date={D1}"
    staged.mkdir(parents=True)
    (staged / "part-0.parquet").write_bytes(b"half")
    plant(root, socket.gethostname(), dead_pid())
    wh = Warehouse(spark, str(root))
    wh.lock_writes("rerun")
    assert not (root / "_staging").exists() and not (root / "_trash").exists()
    assert wh.read("quarantine", D1).count() == 2          # the old partition is back
    wh.release_writes()
    assert not (root / "_lock" / "writer").exists()


def test_cli_writer_refused_in_one_line_with_exit_75(spark, tmp_path, capsys):
    root = tmp_path / "wh"
    pbs = tmp_path / "20240101"
    pbs.write_text("")
    holder = lock_of(spark, root, "lassi run daily --date 2024-01-01")
    holder.acquire()
    try:
        rc = main(["ingest", "--source", "pbs", "--input", str(pbs), "--warehouse", str(root),
                   "--date", "2024-01-01"])
    finally:
        holder.release()
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_LOCKED and len(err) == 1
    assert err[0].startswith(f"lassi: error: warehouse {root} is being written by "
                             "`lassi run daily --date 2024-01-01`")
    assert not (root / "_lock" / "writer").exists()        # the refused one took nothing


def test_two_takers_of_an_expired_lock_leave_the_winner_its_lock(spark, tmp_path):
    """Taker B saw the same expired lock as A, but A set it aside and took it first: B's
    set-aside moves A's fresh lock, sees another token and puts it back."""
    plant(tmp_path, socket.gethostname(), dead_pid())
    a, b = lock_of(spark, tmp_path, "a"), lock_of(spark, tmp_path, "b")
    stale = b.holder()
    assert stale is not None and not stale.alive()
    a.acquire()                                            # A sets it aside and takes it
    b._set_aside(stale)                                    # B, a moment late
    assert json.loads((tmp_path / "_lock" / "writer").read_text())["command"] == "a"
    assert [p.name for p in (tmp_path / "_lock").iterdir()] == ["writer"]
    with pytest.raises(LockHeld, match="`a`"):
        b.acquire()
    a.release()
