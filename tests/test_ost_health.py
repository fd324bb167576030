"""`lfs df` / `lctl dl -t` connectors -> ost_health (TOKIO issue #6)."""

from __future__ import annotations

import datetime as dt
import gzip

import pytest
from lassi.ingest import lctl_dl, lfs_df

DAY = dt.date(2017, 3, 20)

LFS_DF = """\
BEGIN 1489975200
UUID                   1K-blocks        Used   Available Use% Mounted on
fsx-MDT0000_UUID          1000         100         900  10% /fsx[MDT:0]
fsx-OST0000_UUID         10000        7000        3000  70% /fsx[OST:0]
fsx-OST0001_UUID         10000        2500        7000  26% /fsx[OST:1]
fsx-OST000a_UUID : inactive device
this line is junk
fsx-OST0002_UUID         10000        9000        1000  90% /fsx[OST:2]

filesystem summary:      30000       18500       11000  63% /fsx
"""

LCTL = """\
  0 UP mgc MGC10.0.0.1@o2ib 3547302e-74a0 5
  1 UP lov fsx-clilov-ffff88 8dbdc7f6 4
  2 UP mdc fsx-MDT0000-mdc-ffff88 8dbdc7f6 5 10.0.0.2@o2ib
  3 UP osc fsx-OST0000-osc-ffff88 8dbdc7f6 5 10.0.0.10@o2ib
  4 UP osc fsx-OST0001-osc-ffff88 8dbdc7f6 5 10.0.0.11@o2ib
  5 UP osc fsx-OST0002-osc-ffff88 8dbdc7f6 5 10.0.0.12@o2ib
  6 UP osc fsx-OST0003-osc-ffff88 8dbdc7f6 5 10.0.0.12@o2ib
  7 IN osc fsx-OST0004-osc-ffff88 8dbdc7f6 5 10.0.0.14@o2ib
garbage garbage
"""


def _write(tmp_path, name: str, text: str, gz: bool = False):
    p = tmp_path / name
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    else:
        p.write_text(text)
    return p


# --- core: small hand-written inputs ---------------------------------------------------------
def test_lfs_df_small(tmp_path):
    p = _write(tmp_path, "osts.txt.gz", LFS_DF, gz=True)
    before = p.read_bytes()
    rows, qs, st = lfs_df.parse_file(p)
    assert p.read_bytes() == before
    assert st.lines_read == 10 and st.conserved
    assert st.lines_quarantined == 1 and st.lines_used == 9
    assert [(q.line_no, q.raw) for q in qs] == [(7, "this line is junk")]
    assert "not an `lfs df` line" in qs[0].reason
    by = {r["target"]: r for r in rows}
    assert sorted(by) == ["fsx-MDT0000", "fsx-OST0000", "fsx-OST0001", "fsx-OST0002",
                          "fsx-OST000a"]
    ost1 = by["fsx-OST0001"]
    assert (ost1["fs"], ost1["kind"], ost1["target_index"], ost1["mount"]) == \
        ("fsx", "OST", 1, "/fsx")
    assert (ost1["total_kib"], ost1["used_kib"], ost1["avail_kib"], ost1["use_pct"]) == \
        (10000, 2500, 7000, 26.0)
    assert ost1["ts"] == dt.datetime(2017, 3, 20, 2, 0)          # BEGIN 1489975200
    assert by["fsx-OST000a"]["status"] == "inactive"
    assert by["fsx-OST000a"]["target_index"] == 10 and by["fsx-OST000a"]["total_kib"] is None
    assert by["fsx-MDT0000"]["kind"] == "MDT"
    # the summary line is used, not a row: OST totals agree with it
    assert sum(r["total_kib"] or 0 for r in rows if r["kind"] == "OST") == 30000


def test_lfs_df_long_uuid_wrapped(tmp_path):
    text = ("UUID                   1K-blocks        Used   Available Use% Mounted on\n"
            "averyverylongfsname-OST0003_UUID\n"
            "                           10000        2500        7000  26% /lfs[OST:3]\n")
    rows, qs, st = lfs_df.parse_file(_write(tmp_path, "long.txt", text), DAY)
    assert qs == [] and st.conserved and st.lines_read == 3
    assert [(r["target"], r["target_index"], r["used_kib"]) for r in rows] == \
        [("averyverylongfsname-OST0003", 3, 2500)]


def test_lfs_df_inode_and_human_forms_are_quarantined(tmp_path):
    text = ("UUID                      Inodes       IUsed       IFree IUse% Mounted on\n"
            "fsx-OST0000_UUID         100          10          90  10% /fsx[OST:0]\n"
            "UUID                       bytes        Used   Available Use% Mounted on\n"
            "fsx-OST0000_UUID          9.5T        1.2T        8.3T  12% /fsx[OST:0]\n")
    rows, qs, st = lfs_df.parse_file(_write(tmp_path, "df-i.txt", text), DAY)
    assert rows == [] and st.lines_quarantined == 2 and st.conserved
    assert all("not supported" in q.reason for q in qs)


def test_snapshot_time_from_name_date_or_mtime(tmp_path):
    assert lfs_df.name_time("lfs-df_2017-03-20T02:00:00.txt") == dt.datetime(2017, 3, 20, 2)
    assert lfs_df.name_time("lfs-df.20170320T020000Z.txt.gz") == dt.datetime(2017, 3, 20, 2)
    assert lfs_df.name_time("osts.1489975200.txt") == dt.datetime(2017, 3, 20, 2)
    assert lfs_df.name_time("lfs-df_2017-03-20.txt") == dt.datetime(2017, 3, 20)
    # local name time (PDT = UTC-7 on that day)
    assert lfs_df.name_time("lfs-df_2017-03-20T02:00:00.txt", "America/Los_Angeles") == \
        dt.datetime(2017, 3, 20, 9)
    assert lfs_df.name_time("lfs-df.txt.gz") is None
    body = LFS_DF.replace("BEGIN 1489975200\n", "")
    p = _write(tmp_path, "lfs-df_2017-03-21T06:30:00.txt", body)
    assert {r["ts"] for r in lfs_df.parse_file(p)[0]} == {dt.datetime(2017, 3, 21, 6, 30)}
    p = _write(tmp_path, "plain.txt", body)
    assert {r["ts"] for r in lfs_df.parse_file(p, DAY)[0]} == {dt.datetime(2017, 3, 20)}
    import os
    os.utime(p, (1489975200, 1489975200))
    assert {r["ts"] for r in lfs_df.parse_file(p)[0]} == {dt.datetime(2017, 3, 20, 2)}
    # with a date, lines of another day's snapshot are quarantined, not written
    rows, qs, st = lfs_df.parse_file(_write(tmp_path, "x.txt", LFS_DF), dt.date(2017, 3, 21))
    assert rows == [] and st.conserved and len(qs) == 6
    assert all("is not on 2017-03-21" in q.reason for q in qs[:1])


def test_lctl_dl_small_failover(tmp_path):
    p = _write(tmp_path, "lctl-dl_2017-03-20T02:00:00Z.txt", LCTL)
    rows, qs, st = lctl_dl.parse_file(p)
    assert st.lines_read == 9 and st.conserved and st.lines_quarantined == 1
    assert qs[0].line_no == 9 and qs[0].raw == "garbage garbage"
    assert st.extra["other_devices"] == 2 and st.rows == 6
    by = {r["target"]: r for r in rows}
    assert by["fsx-OST0002"]["server_nid"] == "10.0.0.12@o2ib"
    assert by["fsx-OST0004"]["status"] == "IN"
    assert by["fsx-MDT0000"]["kind"] == "MDT" and by["fsx-MDT0000"]["failed_over"] is None
    # 10.0.0.12 serves two OSTs where every other OSS serves one (the mode): failed over
    flagged = sorted(t for t, r in by.items() if r["failed_over"])
    assert flagged == ["fsx-OST0002", "fsx-OST0003"]
    assert all(r["ts"] == dt.datetime(2017, 3, 20, 2) for r in rows)
    fo = lctl_dl.failovers(lctl_dl.to_pandas(rows))
    assert fo[["fs", "server_ip", "n_osts"]].values.tolist() == [["fsx", "10.0.0.12", 2]]


def test_ingest_into_warehouse(spark, warehouse, tmp_path):
    from lassi.ingest.runner import ingest_source

    from lassi.core.config import load_site

    site = load_site("archer")
    df_file = _write(tmp_path, "lfs-df.txt", LFS_DF)
    dl_file = _write(tmp_path, "lctl.txt", LCTL)
    for _ in range(2):                                   # a rerun replaces, never duplicates
        st = ingest_source(spark, warehouse, site, "lfs-df", [str(df_file)], DAY)
        st2 = ingest_source(spark, warehouse, site, "lctl-dl", [str(dl_file)], DAY)
    assert st.rows == 5 and st2.rows == 6
    log = warehouse.read("ingest_log", [DAY]).toPandas().set_index("source")
    assert log.loc["lfs-df", "rows"] == 5 and log.loc["lctl-dl", "rows"] == 6
    # the registry's compatibility entry point writes the same (tables and quarantine)
    assert lfs_df.ingest_inputs(spark, warehouse, site, [str(df_file)], DAY, None).rows == 5
    oh = warehouse.read("ost_health", [DAY]).toPandas()
    assert oh.groupby("source").size().to_dict() == {"lctl-dl": 6, "lfs-df": 5}
    assert oh[oh.failed_over.eq(True)].target.tolist() in (
        ["fsx-OST0002", "fsx-OST0003"], ["fsx-OST0003", "fsx-OST0002"])
    q = warehouse.read("quarantine", [DAY]).toPandas()
    assert sorted(q.source) == ["lctl-dl", "lfs-df"]
    assert set(q.raw) == {"this line is junk", "garbage garbage"}


def test_cli_ingest_and_errors(spark, tmp_path, capsys):
    from lassi.cli.main import main

    wh = str(tmp_path / "wh")
    f = _write(tmp_path, "lfs-df.txt", LFS_DF)
    assert main(["ingest", "--source", "lfs-df", "--input", str(f), "--date", "2017-03-20",
                 "--warehouse", wh]) == 0
    out = capsys.readouterr().out
    assert "lfs-df: 1 files, 10 lines read = 9 used + 1 quarantined; 5 rows" in out
    assert main(["ingest", "--source", "lctl-dl", "--input", str(tmp_path / "nope"),
                 "--warehouse", wh]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lassi: error: no such file") and err.count("\n") == 1


# --- real data: pytokio's test inputs ---------------------------------------------------------
@pytest.fixture(scope="module")
def real_df(realdata):
    rows, qs, st = lfs_df.parse_file(realdata / "pytokio" / "lfs-df.txt.gz", DAY)
    return lfs_df.to_pandas(rows), qs, st


def test_real_lfs_df(real_df, realdata):
    df, qs, st = real_df
    assert st.lines_read == 355 and st.conserved and qs == []   # summaries are not quarantined
    counts = df.groupby(["fs", "kind"]).size().to_dict()
    assert counts == {("snx11025", "OST"): 24, ("snx11025", "MDT"): 1,
                      ("snx11035", "OST"): 24, ("snx11035", "MDT"): 1,
                      ("snx11036", "OST"): 36, ("snx11036", "MDT"): 1,
                      ("snx11168", "OST"): 248, ("snx11168", "MDT"): 5}
    assert (df.target_index >= 0).all()
    assert (df.total_kib >= df.avail_kib + df.used_kib).all()     # as pytokio asserts
    mounts = df.groupby("fs").mount.first().to_dict()
    assert mounts == {"snx11025": "/scratch1", "snx11035": "/scratch2",
                      "snx11036": "/scratch3", "snx11168": "/global/cscratch1"}
    # the `filesystem summary:` totals written in the file equal the OST sums
    summary = {"/scratch2": (2178423632448, 1590005655436, 565502107932),
               "/scratch3": (3267635448672, 2443970370748, 789373877112),
               "/global/cscratch1": (29763608416864, 13195383146952, 16238309957828),
               "/scratch1": (2178423632448, 1560557556800, 594839593984)}
    osts = df[df.kind == "OST"].groupby("mount")[["total_kib", "used_kib", "avail_kib"]].sum()
    for mount, tot in summary.items():
        assert tuple(int(v) for v in osts.loc[mount]) == tot


def test_real_lctl_dl(realdata):
    path = realdata / "pytokio" / "lctl-dl-t.txt.gz"
    rows, qs, st = lctl_dl.parse_file(path, DAY)
    df = lctl_dl.to_pandas(rows)
    assert st.lines_read == 352 and st.conserved and qs == []     # 352 devices
    assert st.rows + st.extra["other_devices"] == 352
    assert set(df.status) == {"UP"}                                # all UP
    assert set(df[df.kind == "OST"].fs) == set(df.fs)                 # every fs has >= 1 OST
    assert (df.target_index >= 0).all()
    assert df.groupby(["fs", "kind"]).size().to_dict()[("snx11168", "OST")] == 248
    # OST0002 and OST0003 of snx11035 are both served by 10.100.101.7 (see the file)
    fo = lctl_dl.failovers(df)
    s35 = fo[fo.fs == "snx11035"]
    assert s35.server_ip.tolist() == ["10.100.101.7"]
    assert s35.targets.iloc[0] == ["snx11035-OST0002", "snx11035-OST0003"]
    assert not df[(df.fs == "snx11025")].failed_over.eq(True).any()
