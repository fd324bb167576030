"""One writer per warehouse: a lock file under the root, through Hadoop's FileSystem API.

Two commands that write the same warehouse at once (a manual `lassi run daily` and the
Airflow task of the same day, or an Airflow retry racing its first try) would interleave
their partition swaps, and one's repair of a half-done swap (`Warehouse._recover`) could
undo the other's. Every writing command therefore takes `<root>/_lock/writer` first:

- taking it is one atomic create-if-absent: `open(O_CREAT|O_EXCL)` on a local (or
  POSIX-mounted) warehouse, `FileSystem.create(path, overwrite=false)` on HDFS (atomic on
  its NameNode); object stores such as S3A do not guarantee it (see the README);
- the file names its holder (command, host, pid, start time) and a random token; a
  background thread touches its modification time every HEARTBEAT_S seconds;
- a holder that died leaves a lock that expires: at once when it was on this host and its
  pid is gone, else when its heartbeat is older than TTL_S. An expired lock is renamed
  aside (atomic: of two takers only one wins) and taken;
- the second writer waits up to `wait_s` seconds, then fails with one line naming the
  holder (`LockHeld`).

Readers take no lock; while a live writer holds it they leave half-done swaps alone.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEARTBEAT_S = 20.0
TTL_S = 120.0                  # a heartbeat older than this: its holder is gone
POLL_S = 2.0
LOCK = "_lock/writer"


class LockHeld(Exception):
    """Another live command holds the warehouse's writer lock (one-line message)."""


@dataclass(frozen=True)
class Holder:
    """What a lock file says about its holder, and how fresh its heartbeat is."""

    command: str
    host: str
    pid: int
    started: str
    token: str
    heartbeat_age_s: float

    def alive(self) -> bool:
        """Still running: a live pid on this host, or a fresh heartbeat elsewhere."""
        if self.host == socket.gethostname():
            return _pid_alive(self.pid) and self.heartbeat_age_s < TTL_S
        return self.heartbeat_age_s < TTL_S

    def describe(self) -> str:
        return (f"`{self.command}` (pid {self.pid} on {self.host}, since {self.started} UTC, "
                f"heartbeat {self.heartbeat_age_s:.0f} s ago)")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                     # someone else's live process
        return True
    return True


class WriterLock:
    """The writer lock of the warehouse at `root` on Hadoop filesystem `fs` (a JVM
    FileSystem; `jvm` the gateway's JVM view)."""

    def __init__(self, jvm: Any, fs: Any, root: str, command: str,
                 local: Path | None = None) -> None:
        self._jvm = jvm
        self._fs = fs
        self.local = local / LOCK if local is not None else None   # plain files when local
        self.path = f"{root.rstrip('/')}/{LOCK}"
        self.command = command
        self.token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def _p(self, s: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(s)

    # --- reading the holder ----------------------------------------------------------------
    def holder(self) -> Holder | None:
        """The current holder, or None when the lock is free. An unreadable lock file (its
        holder died while writing it) expires 5 s after it was written."""
        try:
            text, mtime = self._read()
        except FileNotFoundError:
            return None
        age = max(0.0, time.time() - mtime)
        try:
            d = json.loads(text)
            return Holder(str(d["command"]), str(d["host"]), int(d["pid"]), str(d["started"]),
                          str(d["token"]), age)
        except (ValueError, KeyError, TypeError):
            return Holder("?", "?", -1, "?", "", age if age < 5 else TTL_S)

    # --- taking and giving back --------------------------------------------------------------
    def acquire(self, wait_s: float = 0.0) -> None:
        """Take the lock, waiting up to `wait_s` seconds for a live holder; LockHeld else."""
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            if self._try_create():
                self._start_heartbeat()
                return
            h = self.holder()
            if h is not None and not h.alive():
                self._set_aside(h)
                continue
            if h is not None and time.monotonic() >= deadline:
                hint = "wait for it to finish" + ("" if wait_s else
                                                  ", or pass --lock-wait SECONDS")
                raise LockHeld(f"warehouse {self.path.rsplit('/', 2)[0]} is being written "
                               f"by {h.describe()}; {hint}")
            time.sleep(POLL_S if h is not None else 0.05)

    def _try_create(self) -> bool:
        body = json.dumps({"command": self.command, "host": socket.gethostname(),
                           "pid": os.getpid(), "token": self.token,
                           "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")})
        return self._create(body.encode())

    def _set_aside(self, stale: Holder) -> None:
        """Move an expired lock out of the way: one rename, so of two takers one wins. A
        taker that moved a lock other than `stale` (another taker's, just created) puts it
        back without overwriting."""
        aside = f".expired.{uuid.uuid4().hex}"
        if not self._rename(aside):
            return
        try:
            moved, _ = self._read(aside)
        except FileNotFoundError:
            return
        if stale.token and json.loads(moved or "{}").get("token") != stale.token:
            self._restore(aside)
        else:
            self._delete(aside)

    def _start_heartbeat(self) -> None:
        def beat() -> None:
            while not self._stop.wait(HEARTBEAT_S):
                try:
                    self._touch()
                except Exception:                                 # noqa: BLE001
                    return                                        # the JVM is going away
        self._stop.clear()
        self._beat = threading.Thread(target=beat, name="lassi-writer-lock", daemon=True)
        self._beat.start()

    def release(self) -> None:
        """Give the lock back (only ours: a lock that expired and was taken stays)."""
        if self._beat is None:
            return
        self._stop.set()
        self._beat = None
        h = self.holder()
        if h is not None and h.token == self.token:
            self._delete()

    # --- the file, on local disk or through Hadoop ----------------------------------------
    def _create(self, body: bytes) -> bool:
        """Create the lock file with `body` unless it exists (atomically); True if created."""
        if self.local is not None:
            self.local.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(self.local, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
            return True
        try:
            out = self._fs.create(self._p(self.path), False)
        except Exception as exc:                                  # noqa: BLE001
            if "AlreadyExists" in str(exc) or self._fs.exists(self._p(self.path)):
                return False
            raise
        try:
            out.write(bytearray(body))
        finally:
            out.close()
        return True

    def _read(self, suffix: str = "") -> tuple[str, float]:
        """The lock file's (or `<lock><suffix>`'s) text and modification time (epoch s);
        FileNotFoundError."""
        if self.local is not None:
            f = Path(f"{self.local}{suffix}")
            mtime = f.stat().st_mtime
            return f.read_text(errors="replace"), mtime
        p = self._p(self.path + suffix)
        try:
            mtime = self._fs.getFileStatus(p).getModificationTime() / 1000
            stream = self._fs.open(p)
        except Exception as exc:                                  # noqa: BLE001
            if "FileNotFound" in str(exc):
                raise FileNotFoundError(self.path) from None
            raise
        try:
            return self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"), mtime
        finally:
            stream.close()

    def _touch(self) -> None:
        if self.local is not None:
            os.utime(self.local)
        else:
            self._fs.setTimes(self._p(self.path), int(time.time() * 1000), -1)

    def _rename(self, suffix: str) -> bool:
        """Move the lock file to `<lock><suffix>`; False when it was gone (another won)."""
        if self.local is not None:
            try:
                os.rename(self.local, f"{self.local}{suffix}")
            except FileNotFoundError:
                return False
            return True
        return bool(self._fs.rename(self._p(self.path), self._p(self.path + suffix)))

    def _restore(self, suffix: str) -> None:
        """Move `<lock><suffix>` back to the lock's name unless a lock exists there now."""
        if self.local is not None:
            try:
                os.link(f"{self.local}{suffix}", self.local)
            except FileExistsError:
                pass
            self._delete(suffix)
        elif not self._fs.rename(self._p(self.path + suffix), self._p(self.path)):
            self._delete(suffix)

    def _delete(self, suffix: str = "") -> None:
        if self.local is not None:
            Path(f"{self.local}{suffix}").unlink(missing_ok=True)
        else:
            self._fs.delete(self._p(self.path + suffix), False)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
