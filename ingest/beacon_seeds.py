"""Delta seeds kept for the next day: the last sample of every counter series of a Beacon
file, stored when the file is ingested, so that the next day's file seeds its deltas
without parsing this one again.

The counter layers (`ost`, `lustre-client`, `mds`, `lwfs-server`) turn cumulative counters
into per-interval deltas; a series' first sample of a day takes the previous day's last
sample of the same host's file as its seed (`beacon_columnar`). Without a store, every
ingest parses the previous day's whole file again for those seeds: twice the parse of a
day at a site that ingests daily (README, Scale; bench/scale-history.md).

A seed file holds, per series (key text), the last sample (latest time, then latest line):
time, counters and the optional aux counter, plus the file's last sample time (`host_ts`).
It is named for the raw file's absolute path, size and modification time, so a raw file
rewritten after its ingest is parsed again, and it is written only when no line of the
file was quarantined: then the samples of the day's parse are those a seed parse of the
whole file (no day filter) finds, and the stored seed equals the parsed one. A file whose
name gives no day stores none (no next day's file names it as its previous).

The store lives under a local warehouse, `<warehouse>/_seeds/<layer>/date=<day>/` (the day
the raw file's name gives), which the executors see as they see the Parquet files they
write; each file is written to a temporary name and renamed into place. It is a cache:
a seed that cannot be written or read costs the next day a parse of this file, nothing
else. A warehouse on another Hadoop filesystem gets no store and parses the previous
day's files as before. `prune` drops the seeds of files more than KEEP_DAYS before an
ingested day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

KEEP_DAYS = 7
FOLDER = "_seeds"


@dataclass(frozen=True)
class Seed:
    """The last sample per series: key text, time (µs), counters (n x k), aux counter and
    whether it is there, and the file's last sample time."""

    keys: pa.StringArray
    ts: np.ndarray
    values: np.ndarray
    aux: np.ndarray
    aux_ok: np.ndarray
    host_ts: int | None


def file_day(path: str | Path) -> dt.date | None:
    """The UTC day of a Beacon file named `<YYYY-MM-DD>.log[.gz]`, else None."""
    try:
        return dt.date.fromisoformat(Path(path).name.split(".", 1)[0])
    except ValueError:
        return None


def _name(raw: str | Path) -> str | None:
    """The seed file's name for the raw file as it is now (None when it is gone)."""
    path = os.path.abspath(raw)
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident = f"{path}\0{st.st_size}\0{st.st_mtime_ns}".encode()
    return hashlib.sha1(ident, usedforsecurity=False).hexdigest() + ".parquet"


@dataclass(frozen=True)
class SeedStore:
    """One layer's seeds under `root` (a local folder every executor sees)."""

    root: str

    def _path(self, raw: str | Path) -> Path | None:
        """Where the raw file's seed is: in the folder of the day its name gives (None for
        a file whose name gives no day: no next day's file names it as its previous)."""
        day = file_day(raw)
        name = _name(raw) if day else None
        return None if name is None else Path(self.root) / f"date={day.isoformat()}" / name

    def save(self, raw: str | Path, seed: Seed) -> None:
        """Store `seed` for the raw file, atomically (temporary name, rename)."""
        path = self._path(raw)
        if path is None:
            return
        k = seed.values.shape[1]
        table = pa.table({
            "key": seed.keys, "ts": pa.array(seed.ts, pa.int64()),
            "values": pa.FixedSizeListArray.from_arrays(
                pa.array(seed.values.reshape(-1), pa.int64()), k),
            "aux": pa.array(seed.aux, pa.int64()), "aux_ok": pa.array(seed.aux_ok, pa.bool_()),
        }).replace_schema_metadata({"host_ts": "" if seed.host_ts is None
                                    else str(seed.host_ts)})
        tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, path)
        except (OSError, pa.ArrowException):
            pass                           # a cache: tomorrow parses this file instead
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def load(self, raw: str | Path) -> Seed | None:
        """The stored seed of the raw file as it is now, or None."""
        path = self._path(raw)
        if path is None or not path.is_file():
            return None
        try:
            t = pq.read_table(path)
        except (OSError, pa.ArrowException):
            return None                    # unreadable: the caller parses the file
        host = (t.schema.metadata or {}).get(b"host_ts", b"").decode()
        vals = t.column("values").combine_chunks()
        k = vals.type.list_size
        return Seed(t.column("key").combine_chunks(),
                    t.column("ts").to_numpy().astype(np.int64),
                    vals.flatten().to_numpy().reshape(len(t), k).astype(np.int64),
                    t.column("aux").to_numpy().astype(np.int64),
                    t.column("aux_ok").to_numpy(zero_copy_only=False).astype(bool),
                    int(host) if host else None)

    def drop(self, raw: str | Path) -> None:
        """No seed for the raw file as it is now (a file with quarantined lines)."""
        path = self._path(raw)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def layer_store(warehouse: Path | None, layer: str) -> SeedStore | None:
    """The layer's store under a local warehouse directory (None: no store)."""
    return None if warehouse is None else SeedStore(str(warehouse / FOLDER / layer))


def prune(warehouse: Path | None, day: dt.date) -> int:
    """Drop every layer's seeds of files more than KEEP_DAYS before `day`; how many day
    folders went."""
    root = None if warehouse is None else warehouse / FOLDER
    if root is None or not root.is_dir():
        return 0
    oldest, gone = day - dt.timedelta(days=KEEP_DAYS), 0
    for folder in root.glob("*/date=*"):
        try:
            old = dt.date.fromisoformat(folder.name[5:]) < oldest
        except ValueError:
            continue
        if old:
            shutil.rmtree(folder, ignore_errors=True)
            gone += 1
    return gone


def key_ids(seed: Seed, keys: pa.Array) -> np.ndarray:
    """Each seed series' index in `keys` (-1: not there)."""
    return pc.fill_null(pc.index_in(seed.keys, value_set=keys), -1).to_numpy(
        zero_copy_only=False).astype(np.int64)
