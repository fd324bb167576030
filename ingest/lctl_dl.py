"""`lctl dl -t` snapshots (a client's devices and the server NID of each target) ->
`ost_health` rows (source `lctl-dl`), with failed-over OSTs flagged as pytokio does
(`tokio/connectors/lfshealth.py`, `LfsOstMap.get_failovers`).

Accepted lines: `idx status type name uuid refcount [nid]`, e.g.
`  4 UP osc snx11035-OST0014-osc-ffff885f81a64000 8dbdc7f6-... 5 10.100.101.25@o2ib2`.
An `osc` (or `mdc`) device named `fsname-OSTxxxx-osc-...` gives one row: target
`fsname-OSTxxxx`, kind OST (MDT), target_index the hex index, status as written (UP, ...),
server_nid the NID. Other devices (mgc, lov, lmv, server-side obdfilter/osp/...) and blank
lines are used without a row (extra["other_devices"]); `BEGIN <epoch>` separates
snapshots; anything else is quarantined. Snapshot time: as `lassi.ingest.lfs_df` (module doc).

Failover (pytokio's rule): per snapshot and file system, count the OSC targets per server
IP (the NID before `@`); the mode of those counts is the normal OSTs per OSS (ties: the
count seen first, as pytokio's `max(histogram, key=histogram.get)`); every OST on a server
whose count differs from the mode is `failed_over` (an OSS that took over its partner's
OSTs serves twice the mode). MDTs are not assessed (null), as in pytokio.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from lassi.ingest.contract import IngestResult
from lassi.ingest.lfs_df import (
    COLUMNS,
    complete_rows,
    parse_snapshots,
    read_files,
    tail_reader,
    to_pandas,
)

from lassi.core.quarantine import ParseStats, Quarantined

SOURCE = "lctl-dl"
_DEVICE = re.compile(r"^\s*(?P<idx>\d+)\s+(?P<status>\S+)\s+(?P<type>\S+)\s+(?P<name>\S+)\s+"
                     r"(?P<uuid>\S+)\s+(?P<refs>\d+)(?:\s+(?P<nid>\S+@\S+))?\s*$")
_CLIENT = re.compile(r"^(?P<target>(?P<fs>[A-Za-z0-9_.]+?)-(?P<kind>OST|MDT)"
                     r"(?P<hex>[0-9a-fA-F]{4,8}))-(?:osc|mdc)(?:-|$)")
KINDS = {"osc": "OST", "mdc": "MDT"}


def _classify(line: str) -> tuple[str, dict | str | None]:
    if not line.strip():
        return "used", None
    m = _DEVICE.match(line)
    if not m:
        return "bad", "not an `lctl dl -t` line (index status type name uuid refcount [nid])"
    dtype = m.group("type").lower()
    if dtype not in KINDS:
        return "used", {"_other": True}
    c = _CLIENT.match(m.group("name"))
    if not c or c.group("kind") != KINDS[dtype]:
        return "bad", f"{dtype} device name is not <fsname>-{KINDS[dtype]}xxxx-{dtype}-..."
    return "row", {"fs": c.group("fs"), "target": c.group("target"), "kind": c.group("kind"),
                   "target_index": int(c.group("hex"), 16), "status": m.group("status"),
                   "server_nid": m.group("nid")}


def flag_failovers(rows: list[dict]) -> None:
    """Set `failed_over` on OST rows per (ts, fs) by pytokio's mode rule; MDTs stay None."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["kind"] == "OST":
            groups.setdefault((r["ts"], r["fs"]), []).append(r)
    for osts in groups.values():
        counts: dict[str, int] = {}
        for r in osts:
            if r["server_nid"]:
                ip = r["server_nid"].split("@")[0]
                counts[ip] = counts.get(ip, 0) + 1
        hist: dict[int, int] = {}
        for n in counts.values():
            hist[n] = hist.get(n, 0) + 1
        mode = max(hist, key=hist.get) if hist else None
        for r in osts:
            ip = r["server_nid"].split("@")[0] if r["server_nid"] else None
            r["failed_over"] = None if ip is None else counts[ip] != mode


def parse_file(path: str | Path, date: dt.date | None = None, tz: str = "UTC",
               ) -> tuple[list[dict], list[Quarantined], ParseStats]:
    """Parse one `lctl dl -t` file: `ost_health` rows (dicts without `date`)."""
    other = [0]

    def classify(line: str):
        kind, val = _classify(line)
        if kind == "used" and val:
            other[0] += 1
            return "used", None
        return kind, val

    rows, qs, stats = parse_snapshots(path, SOURCE, classify, date, tz)
    flag_failovers(rows)
    if other[0]:
        stats.extra["other_devices"] = other[0]
    return complete_rows(rows), qs, stats


def failovers(df):
    """pytokio's `get_failovers` as a table: per ts, fs and server IP whose OST count is not
    the mode, the OSTs it serves (pandas in, pandas out; `df` = ost_health rows)."""
    import pandas as pd

    flagged = df["failed_over"].map(lambda v: bool(v) if v is not None and v == v else False)
    osts = df[(df["kind"] == "OST") & flagged].copy()
    cols = ["ts", "fs", "server_ip", "n_osts", "targets"]
    if osts.empty:
        return pd.DataFrame(columns=cols)
    osts["server_ip"] = osts["server_nid"].str.split("@").str[0]
    out = (osts.groupby(["ts", "fs", "server_ip"], sort=True)["target"]
           .agg(lambda s: sorted(s)).reset_index(name="targets"))
    out["n_osts"] = out["targets"].str.len()
    return out[cols]


def read_inputs(site, inputs: list[str], date: dt.date | None, tz: str | None
                ) -> list[IngestResult]:
    """`lassi ingest --source lctl-dl`: files/directories of `lctl dl -t` -> ost_health rows
    (this source's rows of the snapshots' days replaced; `lassi.ingest.writer` writes)."""
    return read_files(site, inputs, date, tz, SOURCE, parse_file, TAIL)


TAIL = tail_reader(SOURCE, lambda: _classify)


__all__ = ["COLUMNS", "SOURCE", "failovers", "flag_failovers", "parse_file", "read_inputs",
           "to_pandas"]
