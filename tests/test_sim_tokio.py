"""The simulator's TOKIO inputs (LMT SQLite, `lfs df`, `lctl dl -t`) against its ground truth.

Checked with sqlite3 and plain Python only (no LMT connector): the layout of pytokio's LMT
copies, local timestamps, counters that add up to the truth and to the Lustre export stats
of the same simulated day, `lfs df` arithmetic and the failed-over OSS in `lctl dl -t`.
"""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import json
import re
import sqlite3
from itertools import pairwise
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from lassi.ingest.lustre_stats import parse_file

from lassi.core.config import load_site
from lassi.sim.runner import simulate

DATE = dt.date(2017, 10, 10)
DAY0 = dt.datetime(2017, 10, 10, tzinfo=dt.timezone.utc)

# column lists of pytokio's LMT SQLite copies (LMT schema 1.1)
LMT_COLUMNS = {
    "FILESYSTEM_INFO": ["FILESYSTEM_ID", "FILESYSTEM_NAME", "FILESYSTEM_MOUNT_NAME",
                        "SCHEMA_VERSION"],
    "OSS_INFO": ["OSS_ID", "FILESYSTEM_ID", "HOSTNAME", "FAILOVERHOST"],
    "OST_INFO": ["OST_ID", "OSS_ID", "OST_NAME", "HOSTNAME", "OFFLINE", "DEVICE_NAME"],
    "MDS_INFO": ["MDS_ID", "FILESYSTEM_ID", "MDS_NAME", "HOSTNAME", "DEVICE_NAME"],
    "OPERATION_INFO": ["OPERATION_ID", "OPERATION_NAME", "UNITS"],
    "TIMESTAMP_INFO": ["TS_ID", "TIMESTAMP"],
    "OST_DATA": ["OST_ID", "TS_ID", "READ_BYTES", "WRITE_BYTES", "PCT_CPU", "KBYTES_FREE",
                 "KBYTES_USED", "INODES_FREE", "INODES_USED"],
    "OSS_DATA": ["OSS_ID", "TS_ID", "PCT_CPU", "PCT_MEMORY"],
    "MDS_DATA": ["MDS_ID", "TS_ID", "PCT_CPU", "KBYTES_FREE", "KBYTES_USED", "INODES_FREE",
                 "INODES_USED"],
    "MDS_OPS_DATA": ["MDS_ID", "TS_ID", "OPERATION_ID", "SAMPLES", "SUM", "SUMSQUARES"],
    "OST_VARIABLE_INFO": ["VARIABLE_ID", "VARIABLE_NAME", "VARIABLE_LABEL", "THRESH_TYPE",
                          "THRESH_VAL1", "THRESH_VAL2"],
    "MDS_VARIABLE_INFO": ["VARIABLE_ID", "VARIABLE_NAME", "VARIABLE_LABEL", "THRESH_TYPE",
                          "THRESH_VAL1", "THRESH_VAL2"],
}
# simulator counter -> LMT operation name
LMT_OP = {"open": "open", "close": "close", "mknod": "mknod", "unlink": "unlink",
          "mkdir": "mkdir", "rmdir": "rmdir", "getattr": "getattr", "setattr": "setattr",
          "link": "link", "rename": "rename", "getxattr": "getxattr", "setxattr": "setxattr",
          "statfs": "statfs", "mds_sync": "sync"}
DF_ROW = re.compile(r"^(\S+)_UUID\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s+(\S+)\[(OST|MDT):(\d+)\]$")
DF_SUM = re.compile(r"^filesystem summary:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s+(\S+)$")
DL_ROW = re.compile(r"^\s*(\d+)\s+(UP|DOWN|ST|AT)\s+(\w+)\s+(\S+)\s+(\S+)\s+(\d+)"
                    r"(?:\s+(\S+@\S+))?$")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    site = load_site("archer", nodes=48)
    out = tmp_path_factory.mktemp("tokio")
    simulate(site, DATE, 1, 3, out)
    return site, out, json.loads((out / "truth.json").read_text())


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _day_files(out: Path, fs: str) -> list[Path]:
    return sorted((out / "lmt" / fs).glob("*.sqlite3"))


def _ost_series(con: sqlite3.Connection) -> dict[str, list[tuple[int, int, int]]]:
    series = collections.defaultdict(list)
    for name, ts, rd, wr in con.execute(
            "SELECT OST_NAME, TS_ID, READ_BYTES, WRITE_BYTES FROM OST_DATA "
            "JOIN OST_INFO USING (OST_ID) ORDER BY OST_ID, TS_ID"):
        series[name].append((ts, rd, wr))
    return series


def _op_series(con: sqlite3.Connection) -> dict[str, list[int]]:
    series = collections.defaultdict(list)
    for name, n in con.execute(
            "SELECT OPERATION_NAME, SAMPLES FROM MDS_OPS_DATA JOIN OPERATION_INFO "
            "USING (OPERATION_ID) ORDER BY OPERATION_ID, TS_ID"):
        series[name].append(n)
    return series


def _run_totals(truth: dict) -> dict[str, collections.Counter]:
    """The engine's own totals per filesystem (independent of the LMT writer)."""
    per_fs: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in truth["runs"]:
        per_fs[r["fs"]].update(r["totals"])
    return per_fs


def test_day_files_have_the_lmt_layout(sim):
    site, out, truth = sim
    for fs in site.filesystems:
        files = _day_files(out, fs.name)
        assert [p.stem for p in files] == ["2017-10-10", "2017-10-11"]   # runs end after 00:00
        for p in files:
            with _db(p) as con:
                tables = {r[0] for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type='table'")}
                assert tables == set(LMT_COLUMNS)
                for t, cols in LMT_COLUMNS.items():
                    assert [r[1] for r in con.execute(f"PRAGMA table_info({t})")] == cols, t
                assert con.execute("SELECT FILESYSTEM_NAME, SCHEMA_VERSION FROM "
                                   "FILESYSTEM_INFO").fetchall() == [(fs.name, "1.1")]
                osts = [r[0] for r in con.execute("SELECT OST_NAME FROM OST_INFO ORDER BY OST_ID")]
                assert osts == list(fs.osts)
                ops = {r[0] for r in con.execute("SELECT OPERATION_NAME FROM OPERATION_INFO")}
                assert {"open", "close", "getattr", "setattr", "mkdir", "unlink", "rename",
                        "mknod", "rmdir", "sync"} <= ops
                assert con.execute("SELECT COUNT(*) FROM OST_VARIABLE_INFO").fetchone() == (11,)
                assert con.execute("SELECT COUNT(*) FROM MDS_VARIABLE_INFO").fetchone() == (7,)


def test_layout_matches_the_real_pytokio_copy(sim, realdata):
    _site, out, _truth = sim
    real = realdata / "pytokio" / "snx11025_2018-01-28.sqlite3"
    mine = next((out / "lmt" / "fs2").glob("*.sqlite3"))
    with _db(real) as a, _db(mine) as b:
        for t in LMT_COLUMNS:
            assert ([r[1] for r in a.execute(f"PRAGMA table_info({t})")]
                    == [r[1] for r in b.execute(f"PRAGMA table_info({t})")]), t
        q = "SELECT OPERATION_ID, OPERATION_NAME FROM OPERATION_INFO ORDER BY 1"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
        q = "SELECT * FROM OST_VARIABLE_INFO ORDER BY 1"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()


def test_timestamps_are_lmt_local_time_of_the_utc_day(sim):
    site, out, truth = sim
    tz = ZoneInfo(site.tz("lmt"))
    assert site.tz("lmt") == "Europe/London"
    with _db(out / "lmt" / "fs3" / "2017-10-10.sqlite3") as con:
        rows = con.execute("SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO ORDER BY TS_ID").fetchall()
    assert rows[0][1] == "2017-10-10 01:00:00"          # BST: 00:00 UTC is 01:00 local
    utc = [dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
           .astimezone(dt.timezone.utc) for _, s in rows]
    assert utc[0] == DAY0 and utc[-1] == DAY0 + dt.timedelta(days=1)
    assert len(rows) == 1441
    assert all(b - a == dt.timedelta(seconds=60) for a, b in pairwise(utc))
    assert all(b[0] - a[0] == 1 for a, b in pairwise(rows))
    # the next day's file starts with the same two samples (23:59 and 00:00), so a reader
    # of that day alone has the delta of its first interval; TS_ID increases across days
    with _db(out / "lmt" / "fs3" / "2017-10-11.sqlite3") as con:
        nxt = con.execute("SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO ORDER BY TS_ID").fetchall()
    assert nxt[:2] == rows[-2:] and nxt[2][0] == rows[-1][0] + 1
    nxt = nxt[1:]
    # ... with the very same rows in every table, so concatenated files dedup on the keys
    for table in ("OST_DATA", "OSS_DATA", "MDS_DATA", "MDS_OPS_DATA"):
        q = f"SELECT * FROM {table} WHERE TS_ID = {nxt[0][0]} ORDER BY 1, 2, 3"
        with _db(out / "lmt" / "fs3" / "2017-10-10.sqlite3") as a, \
                _db(out / "lmt" / "fs3" / "2017-10-11.sqlite3") as b:
            assert a.execute(q).fetchall() == b.execute(q).fetchall() != [], table


def test_ost_counters_add_up_to_the_truth_and_never_decrease(sim):
    site, out, truth = sim
    engine = _run_totals(truth)
    for fs in site.filesystems:
        whole = collections.Counter()
        for p in _day_files(out, fs.name):
            want = truth["tokio"]["lmt"][fs.name][p.stem]
            with _db(p) as con:
                series = _ost_series(con)
            assert set(series) == set(fs.osts)
            for ost, obs in series.items():
                assert all(b[1] >= a[1] and b[2] >= a[2] for a, b in pairwise(obs)), ost
                assert obs[-1][1] - obs[0][1] == want["ost_read_bytes"][ost]
                assert obs[-1][2] - obs[0][2] == want["ost_write_bytes"][ost]
                whole["read_bytes"] += obs[-1][1] - obs[0][1]
                whole["write_bytes"] += obs[-1][2] - obs[0][2]
            assert sum(want["ost_write_bytes"].values()) == want["write_bytes"]
        # the day files together carry exactly what the engine's runs moved on this fs
        assert whole["read_bytes"] == engine[fs.name]["read_bytes"], fs.name
        assert whole["write_bytes"] == engine[fs.name]["write_bytes"], fs.name
    assert sum(c["write_bytes"] for c in engine.values()) > 0


def test_kbytes_used_follow_the_writes(sim):
    site, out, truth = sim
    with _db(out / "lmt" / "fs2" / "2017-10-10.sqlite3") as con:
        rows = con.execute("SELECT OST_ID, WRITE_BYTES, KBYTES_USED, KBYTES_FREE FROM OST_DATA "
                           "ORDER BY OST_ID, TS_ID").fetchall()
    first: dict[int, tuple] = {}
    for ost, wr, used, free in rows:
        w0, u0, total = first.setdefault(ost, (wr, used, used + free))
        assert used + free == total
        assert used == u0 + (wr - w0) // 1024     # day 1: the fill counts from 00:00


def test_mds_operations_add_up_to_the_truth(sim):
    site, out, truth = sim
    engine = _run_totals(truth)
    for fs in site.filesystems:
        whole = collections.Counter()
        for p in _day_files(out, fs.name):
            with _db(p) as con:
                series = _op_series(con)
                n_ts = con.execute("SELECT COUNT(*) FROM TIMESTAMP_INFO").fetchone()[0]
                cpu = con.execute("SELECT MIN(PCT_CPU), MAX(PCT_CPU) FROM MDS_DATA").fetchone()
            assert cpu[0] >= 0 and cpu[1] <= 100
            want = truth["tokio"]["lmt"][fs.name][p.stem]["mds_ops"]
            for op, obs in series.items():
                assert len(obs) == n_ts
                assert all(b >= a for a, b in pairwise(obs)), op
                assert obs[-1] - obs[0] == want.get(op, 0), op
                whole[op] += obs[-1] - obs[0]
        for sim_name, op in LMT_OP.items():
            assert whole[op] == engine[fs.name][sim_name], (fs.name, op)
    assert sum(c["open"] for c in engine.values()) > 0


def _export_deltas(site, out: Path, truth: dict) -> dict[tuple[str, str], dict[int, int]]:
    """Bytes per OST and capture (epoch s) from the raw export stats: every export series'
    increments, resets included."""
    base = {tuple(k.split("|")): v for k, v in truth["baseline"].items()}
    series = collections.defaultdict(list)
    for f in sorted((out / "lustre").rglob("*.txt")):
        rows, quarantined, stats = parse_file(f, nid_map=site.nid_map)
        assert not quarantined and stats.conserved
        for r in rows:
            if r["kind"] == "export" and r["counter"] in ("read_bytes", "write_bytes"):
                series[(r["target"], r["nid"], r["counter"])].append(
                    (r["snapshot_time"], r["sum"] or 0, r["start_time"]))
    tot: dict = collections.defaultdict(collections.Counter)
    for (target, nid, counter), obs in series.items():
        obs.sort()
        prev = base.get((target, nid), {}).get(counter, 0)
        prev_start = None
        for t, cur, start in obs:
            restarted = prev_start is not None and start > prev_start
            at = int(t.replace(tzinfo=dt.timezone.utc).timestamp())   # capture (jitter < 1 s)
            tot[(target, counter)][at] += cur if restarted or cur < prev else cur - prev
            prev, prev_start = cur, start
    return tot


def test_lmt_agrees_with_the_lustre_export_stats(sim):
    site, out, truth = sim
    stats = _export_deltas(site, out, truth)
    lmt = truth["tokio"]["lmt"]
    window = truth["window_s"]
    for fs in site.filesystems:
        fs_sum = collections.Counter()
        for ost in fs.osts:
            for kind in ("read_bytes", "write_bytes"):
                got = sum(day[f"ost_{kind}"][ost] for day in lmt[fs.name].values())
                assert got == sum(stats[(ost, kind)].values()), (ost, kind)
                fs_sum[kind] += got
        assert fs_sum["write_bytes"] == sum(sum(stats[(o, "write_bytes")].values())
                                            for o in fs.osts)
        # at every capture of the first day, each OST's LMT counter moved by exactly what its
        # export stats moved since 00:00
        with _db(out / "lmt" / fs.name / "2017-10-10.sqlite3") as con:
            series = _ost_series(con)
            ts0 = con.execute("SELECT MIN(TS_ID) FROM TIMESTAMP_INFO").fetchone()[0]
        step = truth["tokio"]["lmt_step_s"]
        for ost in fs.osts:
            at = {ts: (rd, wr) for ts, rd, wr in series[ost]}
            for kind, i in (("read_bytes", 0), ("write_bytes", 1)):
                inc = stats[(ost, kind)]
                run = 0
                for k in range(86400 // window + 1):
                    c = int(DAY0.timestamp()) + k * window
                    run += inc.get(c, 0)
                    lmt_now = at[ts0 + k * window // step][i] - at[ts0][i]
                    assert lmt_now == run, (ost, kind, k)


def _snapshots(path: Path) -> dict[int, list[str]]:
    snaps: dict[int, list[str]] = {}
    cur: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("BEGIN "):
            cur = snaps.setdefault(int(line.split()[1]), [])
        else:
            cur.append(line)
    return snaps


def _half_up(used: int, avail: int) -> int:
    return (200 * used + used + avail) // (2 * (used + avail))


def test_lfs_df_parses_and_its_arithmetic_holds(sim):
    site, out, truth = sim
    snaps = _snapshots(out / "lfs-df" / "2017-10-10.txt")
    assert [dt.datetime.fromtimestamp(t, dt.timezone.utc).hour for t in snaps] == [0, 6, 12, 18]
    for t, lines in snaps.items():
        osts: dict[str, list[tuple[str, int, int, int]]] = collections.defaultdict(list)
        for line in lines:
            if m := DF_ROW.match(line):
                name, total, used, avail, pct = m[1], int(m[2]), int(m[3]), int(m[4]), int(m[5])
                assert pct == _half_up(used, avail) and used + avail <= total
                if m[7] == "OST":
                    osts[name.split("-")[0]].append((name, total, used, avail))
                    assert m[6] == f"/mnt/{name.split('-')[0]}" and int(m[8], 10) == int(
                        name.split("OST")[1], 16)
            elif m := DF_SUM.match(line):
                rows = osts[m[5].rsplit("/", 1)[1]]
                assert [int(m[i]) for i in (1, 2, 3)] == [sum(r[i] for r in rows)
                                                         for i in (1, 2, 3)]
                assert int(m[4]) == _half_up(int(m[2]), int(m[3]))
            else:
                assert line == "" or line.startswith("UUID "), line
        assert {fs: [r[0] for r in rows] for fs, rows in osts.items()} == {
            fs.name: list(fs.osts) for fs in site.filesystems}
        if t == DAY0.timestamp():   # the fullest OST the truth names
            for fs, rows in osts.items():
                want = truth["tokio"]["fullest_ost"][fs]["2017-10-10"]
                best = max(rows, key=lambda r: r[2])
                assert best[0] == want["ost"]
                assert _half_up(best[2], best[3]) == want["use_pct"]


def test_lfs_df_used_is_lmt_kbytes_used(sim):
    _site, out, _truth = sim
    t = int(DAY0.timestamp()) + 12 * 3600
    lines = _snapshots(out / "lfs-df" / "2017-10-10.txt")[t]
    df = {m[1]: int(m[3]) for line in lines if (m := DF_ROW.match(line)) and m[7] == "OST"}
    with _db(out / "lmt" / "fs4" / "2017-10-10.sqlite3") as con:
        lmt = dict(con.execute(
            "SELECT OST_NAME, KBYTES_USED FROM OST_DATA JOIN OST_INFO USING (OST_ID) "
            "WHERE TS_ID = (SELECT MIN(TS_ID) FROM TIMESTAMP_INFO) + 720").fetchall())
    assert lmt and all(df[o] == v for o, v in lmt.items())


def test_rounding_rule_is_the_one_of_real_lfs_df(realdata):
    rows = 0
    for line in gzip.open(realdata / "pytokio" / "lfs-df.txt.gz", "rt"):
        if m := DF_ROW.match(line.strip()):
            assert int(m[5]) == _half_up(int(m[3]), int(m[4])), line
            rows += 1
    assert rows == 340   # 4 filesystems: 332 OSTs + 8 MDTs


def test_lctl_dl_shows_the_failed_over_oss(sim):
    site, out, truth = sim
    (fo,) = truth["tokio"]["failed_over"]
    assert fo["snapshots"], "the failover must be visible in at least one snapshot"
    snaps = _snapshots(out / "lctl-dl" / "2017-10-10.txt")
    seen = 0
    for t, lines in snaps.items():
        when = dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat()
        per_nid: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        served: dict[str, str] = {}
        index = []
        for line in lines:
            m = DL_ROW.match(line)
            assert m, line
            index.append(int(m[1]))
            if m[3] == "osc":
                ost = m[4].split("-osc-")[0]
                per_nid[ost.split("-")[0]][m[7]] += 1
                served[ost] = m[7]
        assert index == list(range(len(index)))
        for fs, counts in per_nid.items():
            mode = collections.Counter(counts.values()).most_common(1)[0][0]
            odd = {nid: n for nid, n in counts.items() if n != mode}
            if fs == fo["fs"] and when in fo["snapshots"]:
                seen += 1
                assert odd == {fo["partner_nid"]: 2 * mode}
                assert fo["oss_nid"] not in counts
                assert all(served[o] == fo["partner_nid"] for o in fo["osts"])
            else:
                assert odd == {}, (when, fs)
    assert seen == len(fo["snapshots"])


def test_failed_over_oss_reports_no_lmt_samples(sim):
    _site, out, truth = sim
    (fo,) = truth["tokio"]["failed_over"]
    start = dt.datetime.fromisoformat(fo["start"])
    end = dt.datetime.fromisoformat(fo["end"])
    tz = ZoneInfo("Europe/London")
    with _db(out / "lmt" / fo["fs"] / f"{start.date()}.sqlite3") as con:
        rows = con.execute(
            "SELECT TIMESTAMP, HOSTNAME FROM OSS_DATA JOIN OSS_INFO USING (OSS_ID) "
            "JOIN TIMESTAMP_INFO USING (TS_ID)").fetchall()
        cpu = con.execute("SELECT MIN(PCT_CPU), MAX(PCT_CPU), MIN(PCT_MEMORY), "
                          "MAX(PCT_MEMORY) FROM OSS_DATA").fetchone()
    assert 0 <= cpu[0] <= cpu[1] <= 100 and 0 <= cpu[2] <= cpu[3] <= 100
    present = [dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
               for s, host in rows if host == fo["oss"]]
    n_ts = len({s for s, _ in rows})
    down = n_ts - len(present)
    assert all(not start <= t < end for t in present)
    assert abs(down - (end - start).total_seconds() / 60) <= 1


def test_the_other_raw_files_do_not_change(tmp_path):
    site = load_site("archer", nodes=16)
    simulate(site, DATE, 1, 5, tmp_path / "on")
    simulate(site, DATE, 1, 5, tmp_path / "off", tokio=False)
    for layer in ("lustre", "pbs", "alps"):
        a = sorted(p.relative_to(tmp_path / "on") for p in (tmp_path / "on" / layer).rglob("*"))
        b = sorted(p.relative_to(tmp_path / "off") for p in (tmp_path / "off" / layer).rglob("*"))
        assert a == b and a
        for rel in a:
            if (tmp_path / "on" / rel).is_file():
                assert (tmp_path / "on" / rel).read_bytes() == (tmp_path / "off" / rel).read_bytes()
    on = json.loads((tmp_path / "on" / "truth.json").read_text())
    off = json.loads((tmp_path / "off" / "truth.json").read_text())
    assert "tokio" in on and "tokio" not in off
    on.pop("tokio")
    assert on == off
    assert not (tmp_path / "off" / "lmt").exists()
