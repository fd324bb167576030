"""Lustre server stats parser: upstream known answers, quirks, accounting (no Spark)."""

from __future__ import annotations

import gzip
import os
import re
from datetime import datetime
from pathlib import Path

import pytest
from lassi.ingest.lustre_stats import (
    epoch_to_datetime,
    fs_of,
    parse_file,
    parse_lines,
    parse_tree,
)
from lassi.ingest.nid import nid_to_node

from lassi.core.schemas import RAW_LUSTRE_STATS

FIELDS = {f.name for f in RAW_LUSTRE_STATS.fields} - {"date"}
HPE = "lustre/hpe_lustre_exporter"
LMT = "lustre/llnl_lmt_proc_fixtures/test/lustre_versions"
WHAM = "lustre/whamcloud_lustrefs_exporter"
TELEGRAF = "lustre/telegraf_lustre2"
LMT_VERSIONS = [
    "1.8.3", "2.0.0.1", "2.0.50.zfs", "2.0.53", "2.0.56", "2.10.8", "2.10.8.bad_version",
    "2.10.8.missing_version", "2.12.9_12", "2.15.4_1",
]


def by(rows, **match):
    """The rows whose fields equal every given value."""
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def one(rows, **match):
    found = by(rows, **match)
    assert len(found) == 1, (match, len(found))
    return found[0]


def check_accounting(rows, q, stats):
    assert stats.conserved, stats.summary()
    assert stats.lines_quarantined == len(q)
    assert stats.rows == len(rows)
    assert all(x.source == "lustre" for x in q)
    for r in rows:
        assert set(r) == FIELDS
        assert r["target"] and r["fs"] and r["kind"] in ("export", "target", "job")
        assert isinstance(r["snapshot_time"], datetime) and r["snapshot_time"].tzinfo is None


# --------------------------------------------------------------------------- nid.py


def test_nid_gni_without_table():
    assert nid_to_node("123@gni1") == "nid00123"
    assert nid_to_node("7@gni") == "nid00007"
    assert nid_to_node("123@gni1", {"123@gni1": "ignored"}) == "nid00123"


def test_nid_map_full_then_address():
    m = {"10.2.4.27@o2ib1": "cn27", "10.2.4.28": "cn28"}
    assert nid_to_node("10.2.4.27@o2ib1", m) == "cn27"
    assert nid_to_node("10.2.4.28@o2ib1", m) == "cn28"
    assert nid_to_node("10.2.4.29@o2ib1", m) is None
    assert nid_to_node("10.2.4.27@o2ib1") is None
    assert nid_to_node("x@gni1") is None
    assert nid_to_node("") is None


# --------------------------------------------------------------------------- helpers


def test_epoch_usecs_nsecs_and_unpadded_usecs():
    assert epoch_to_datetime("1704403917.045921397", "secs.nsecs") == datetime(
        2024, 1, 4, 21, 31, 57, 45921)
    assert epoch_to_datetime("1284241188.775657", "secs.usecs").microsecond == 775657
    # Old Lustre printed `%lu.%lu secs.usecs`: `.20113` is 20113 microseconds.
    assert epoch_to_datetime("1438693238.20113", "secs.usecs").microsecond == 20113
    assert epoch_to_datetime("1510782606").microsecond == 0
    assert epoch_to_datetime("12a.5") is None


def test_fs_of():
    assert fs_of("fs2-OST0003") == "fs2"
    assert fs_of("my-fs-MDT0000") == "my-fs"
    assert fs_of("OST0001") == "unknown"


# --------------------------------------------------------------------------- 2.10.1 (HPE)


def test_hpe_ost0000_stats_known_answers(realdata):
    rows, q, stats = parse_file(realdata / HPE / "proc/fs/lustre/obdfilter/lustrefs-OST0000/stats")
    check_accounting(rows, q, stats)
    assert not q
    wb = one(rows, counter="write_bytes")
    assert (wb["samples"], wb["sum"], wb["max"]) == (4298711, 16552048697344, 4194304)
    assert (wb["target"], wb["fs"], wb["kind"], wb["unit"]) == (
        "lustrefs-OST0000", "lustrefs", "target", "bytes")
    assert wb["snapshot_time"] == datetime(2017, 11, 15, 21, 50, 6, 789180)
    assert one(rows, counter="statfs")["samples"] == 35359  # duplicate line: first kept
    assert stats.extra["duplicate_counters"] == 1


def test_hpe_tree_statfs_ping_create_per_ost(realdata):
    rows, q, stats = parse_tree(realdata / HPE, server="oss1")
    check_accounting(rows, q, stats)
    assert not q
    t = by(rows, kind="target")
    statfs = {r["target"]: r["samples"] for r in by(t, counter="statfs")}
    assert statfs == {"lustrefs-OST0000": 35359, "lustrefs-OST0002": 35354,
                      "lustrefs-OST0004": 35350, "lustrefs-OST0006": 35347,
                      "lustrefs-MDT0000": 1}
    assert {r["target"]: r["samples"] for r in by(t, counter="ping")} == {
        "lustrefs-OST0000": 141, "lustrefs-OST0002": 645, "lustrefs-OST0004": 645,
        "lustrefs-OST0006": 645}
    assert all(r["samples"] == 2 for r in by(t, counter="create"))
    assert all(r["server"] == "oss1" for r in rows)
    # client-side llite/osc/mdc and service (ost/OSS, mds/MDS, mgs) stats give no rows
    assert not [r for r in rows if "ffff" in r["target"] or r["target"] in ("MDS", "OSS")]
    exports = by(rows, kind="export")
    # exports with only a snapshot_time (0@lo, .5, .6 on the MDT): every counter zero, one
    # marker row each
    counted = [r for r in exports if r["counter"] != "snapshot_time"]
    assert {r["nid"] for r in counted} == {"172.20.20.2@o2ib", "172.20.20.4@o2ib"}
    zero = sorted((r["target"], r["nid"], r["samples"]) for r in exports
                  if r["counter"] == "snapshot_time")
    assert zero == [("lustrefs-MDT0000", n, 0) for n in
                    ("0@lo", "172.20.20.5@o2ib", "172.20.20.6@o2ib")]
    e = one(exports, target="lustrefs-OST0000", nid="172.20.20.4@o2ib", counter="write_bytes")
    assert e["sum"] == 16552048697344 and e["node"] is None


def test_hpe_ost0000_job_stats(realdata):
    path = realdata / HPE / "proc/fs/lustre/obdfilter/lustrefs-OST0000/job_stats"
    rows, q, stats = parse_file(path)
    check_accounting(rows, q, stats)
    assert not q
    wb = by(rows, counter="write_bytes")
    assert len({r["job_id"] for r in rows}) == 35 and len(wb) == 35
    j24 = one(wb, job_id="24")
    assert (j24["samples"], j24["sum"], j24["max"]) == (64575, 215147593728, 4194304)
    assert (j24["kind"], j24["nid"], j24["node"], j24["target"]) == (
        "job", None, None, "lustrefs-OST0000")
    assert j24["snapshot_time"] == datetime(2017, 11, 15, 21, 50, 6)
    assert sum(r["sum"] for r in wb) == 3_050_062_635_008
    assert sum(r["samples"] for r in wb) == 937_778
    assert {r["job_id"]: r["samples"] for r in wb if r["job_id"] in ("23", "25", "26")} == {
        "23": 46956, "25": 71996, "26": 56048}
    punch = one(rows, job_id="24", counter="punch")
    assert (punch["unit"], punch["min"], punch["sum"]) == ("reqs", None, None)


def test_hpe_all_upstream_asserted_values(realdata):
    """Every ost/mdt stats and job_stats tuple lustre_exporter_test.go asserts."""
    rows, _, _ = parse_tree(realdata / HPE)
    go = (realdata / HPE / "lustre_exporter_test.go").read_text()
    pat = re.compile(r'\{"lustre_(stats|job_stats|job_write_bytes|job_write_samples)_total", '
                     r'"[^"]*", counter, \[\]labelPair\{(.*?)\}\}, ([0-9.e+]+), false\}')
    tgt = {(r["target"], r["counter"]): r for r in by(rows, kind="target")}
    job = {(r["target"], r["job_id"], r["counter"]): r for r in by(rows, kind="job")}
    checked = 0
    for m in pat.finditer(go):
        lab = dict(re.findall(r'\{"(\w+)", "([^"]*)"', m[2]))
        if lab["component"] not in ("ost", "mdt"):
            continue
        if m[1] == "stats":
            got = tgt[(lab["target"], lab["operation"])]["samples"]
        elif m[1] == "job_stats":
            got = job[(lab["target"], lab["jobid"], lab["operation"])]["samples"]
        else:
            r = job[(lab["target"], lab["jobid"], "write_bytes")]
            got = r["sum"] if m[1] == "job_write_bytes" else r["samples"]
        assert got == float(m[3]), (m[1], lab)
        checked += 1
    assert checked >= 650


def test_hpe_empty_job_stats(realdata):
    path = realdata / HPE / "proc/fs/lustre/obdfilter/lustrefs-OST0002/job_stats"
    rows, q, stats = parse_file(path)
    assert (rows, q, stats.lines_read, stats.lines_used) == ([], [], 1, 1)


# --------------------------------------------------------------------------- LLNL LMT 1.8 -> 2.15


@pytest.mark.parametrize("version", LMT_VERSIONS)
def test_lmt_every_version_parses(realdata, version):
    rows, q, stats = parse_tree(realdata / LMT / version)
    check_accounting(rows, q, stats)
    assert not q and rows
    assert stats.files >= 2


@pytest.mark.parametrize("version", ["1.8.3", "2.0.56", "2.12.9_12", "2.15.4_1", "2.10.8"])
def test_lmt_matches_lmt_parser_output(realdata, version):
    """Samples and sums equal LMT's own t05 expected output (2.10.8: duplicate statfs differs)."""
    rows, _, _ = parse_tree(realdata / LMT / version)
    got = {(r["target"], r["counter"]): r for r in by(rows, kind="target")}
    exp_re = re.compile(r"tstats: (\S+): (\w+)='(\d+) samples \[\w+\]\s*(.*)'")
    checked = 0
    for line in (realdata / LMT / version / "outputs/t05.exp").read_text().splitlines():
        m = exp_re.match(line)
        if not m or (version == "2.10.8" and m[2] == "statfs"):
            continue  # LMT keeps the LAST duplicate statfs; we keep the first (as lustre_exporter)
        r = got[(m[1], m[2])]
        nums = m[4].split()
        assert r["samples"] == int(m[3]) and (not nums or r["sum"] == int(nums[2])), line
        checked += 1
    assert checked >= 25


def test_lmt_2_15_lflood_ost0001(realdata):
    rows, _, _ = parse_tree(realdata / LMT / "2.15.4_1")
    wb = one(rows, target="lflood-OST0001", counter="write_bytes")
    rb = one(rows, target="lflood-OST0001", counter="read_bytes")
    assert (wb["samples"], wb["sum"]) == (1704066, 1786842710016)
    assert (rb["samples"], rb["sum"]) == (1705491, 1788336930816)
    assert wb["sumsq"] == pytest.approx(1873640381497737216.0)
    assert wb["start_time"] == datetime(2024, 1, 4, 21, 31, 57, 45921)  # 1704403917.045921397
    assert wb["snapshot_time"] == datetime(2024, 1, 10, 22, 1, 57, 40584)
    assert wb["fs"] == "lflood" and wb["unit"] == "bytes"


def test_lmt_2_0_53_mdt_exports_and_1_8_mds(realdata):
    rows, _, _ = parse_tree(realdata / LMT / "2.0.53")
    e = one(rows, kind="export", nid="192.168.1.29@tcp", counter="open")
    assert (e["target"], e["samples"]) == ("lustre-MDT0000", 23462)
    rows, _, _ = parse_tree(realdata / LMT / "1.8.3")
    assert one(rows, target="lc1-MDT0000", counter="open")["samples"] == 3184513192


# --------------------------------------------------------------------------- Whamcloud (2.14-2.15)


def test_whamcloud_new_format_ost_job_stats(realdata):
    path = realdata / WHAM / "testcmds_stdout/jobstats_2.14.0_162_OST_es01a-OST0001.txt"
    rows, q, stats = parse_file(path)
    check_accounting(rows, q, stats)
    assert not q
    wb = by(rows, counter="write_bytes")
    assert len(wb) == 16 and sum(r["sum"] for r in wb) == 89_786_580_992
    first = rows[0]
    assert first["job_id"] == "SLURM_JOB10:0:es18kxe-co-client"
    assert (first["target"], first["fs"], first["kind"]) == ("es01a-OST0001", "es01a", "job")
    assert first["start_time"] == datetime(2024, 8, 8, 7, 27, 5, 57286)
    w = one(rows, job_id="SLURM_JOB10:0:es18kxe-co-client", counter="write_bytes")
    assert (w["samples"], w["max"], w["sumsq"]) == (861, 16777216, 166242808078794752.0)
    assert one(rows, job_id=first["job_id"], counter="write")["unit"] == "usecs"


def test_whamcloud_mdt_job_stats_two_targets(realdata):
    path = realdata / WHAM / "testcmds_stdout/jobstats_2.14.0_164_MDT_es01a_es02a.txt"
    rows, q, stats = parse_file(path)
    check_accounting(rows, q, stats)
    assert not q
    for target, jobs, opens in (("es01a-MDT0000", 5, 127), ("es02a-MDT0000", 7, 62)):
        o = by(rows, target=target, counter="open")
        assert len(o) == jobs and sum(r["samples"] for r in o) == opens


def test_whamcloud_server_stats_capture(realdata):
    path = realdata / WHAM / "testcmds_stdout/lctl_get_param_server_stats_cd582a4c.txt"
    rows, q, stats = parse_file(path)
    check_accounting(rows, q, stats)
    assert not q
    rb = one(rows, target="ai400x2-OST0000", counter="read_bytes")
    assert (rb["samples"], rb["sum"]) == (71482249, 58370831220736)
    assert {r["target"] for r in rows} == {"ai400x2-OST0000", "ai400x2-OST0001", "ai400x2-MDT0000"}
    assert one(rows, target="ai400x2-MDT0000", counter="close")["samples"] == 114600
    assert stats.extra["blocks_skipped"] > 100  # brw_stats, quota, ldlm, services, uuid, ...


def test_whamcloud_exports_capture(realdata):
    path = realdata / WHAM / "lctl_fixtures/valid/lustre-2.14.0_ddn133/2.14.0_ddn133_exports.txt"
    rows, q, stats = parse_file(path, nid_map={"192.168.0.100": "cn100"})
    check_accounting(rows, q, stats)
    assert not q
    r = one(rows, kind="export", target="ai400x2-OST0000", nid="192.168.0.100@o2ib",
            counter="read_bytes")
    assert (r["samples"], r["sum"], r["node"]) == (1165330, 1221937070080, "cn100")


def test_whamcloud_every_lctl_fixture_parses(realdata):
    files = sorted((realdata / WHAM / "lctl_fixtures").rglob("*.txt"))
    assert len(files) >= 20
    total_rows = 0
    for f in files:
        rows, q, stats = parse_file(f)
        check_accounting(rows, q, stats)
        if f.name == "mgs-fs.txt":  # `lctl list_param` names, not a stats capture
            assert stats.lines_quarantined == 2
        else:
            assert not q, (f, q[:2])
        total_rows += len(rows)
    assert total_rows > 500
    client = realdata / WHAM / "lctl_fixtures/valid/lustre-2-14-0/client/llite_client.txt"
    rows, _, _ = parse_file(client)
    assert rows == []  # client-side stats: skipped, not rows


# --------------------------------------------------------------------------- telegraf


def test_telegraf_samples(realdata):
    d = realdata / TELEGRAF
    hint = "/proc/fs/lustre/obdfilter/OST0001/exports/10.2.4.27@o2ib1/stats"
    lines = (d / "obdfilter_OST0001_stats").read_text().splitlines(True)
    rows, q, stats = parse_lines(lines, "x", path_hint=hint, nid_map={"10.2.4.27": "n27"})
    check_accounting(rows, q, stats)
    rb = one(rows, counter="read_bytes")
    assert (rb["sum"], rb["samples"], rb["kind"], rb["nid"], rb["node"]) == (
        78026117632000, 203238095, "export", "10.2.4.27@o2ib1", "n27")
    assert (rb["target"], rb["fs"]) == ("OST0001", "unknown")
    wb = one(rows, counter="write_bytes")
    assert (wb["sum"], wb["samples"]) == (15201500833981, 71893382)

    rows, q, _ = parse_file(d / "obdfilter_OST0001_stats")  # no path structure: loose file
    assert not q and one(rows, counter="read_bytes")["target"] == "OST0001"
    rows, q, _ = parse_file(d / "osd-ldiskfs_OST0001_stats")
    assert not q and one(rows, counter="cache_hit")["samples"] == 7393729777
    rows, q, _ = parse_file(d / "mdt_md_stats")
    assert not q
    assert one(rows, counter="open")["samples"] == 1024577037
    assert one(rows, counter="getxattr")["samples"] == 6145349681
    assert rows[0]["snapshot_time"].microsecond == 20113  # `1438693238.20113 secs.usecs`


def test_telegraf_synthetic_job_stats_malformed_max(realdata):
    rows, q, stats = parse_file(realdata / TELEGRAF / "obdfilter_OST0001_job_stats_SYNTHETIC")
    check_accounting(rows, q, stats)
    assert not q
    w = one(rows, job_id="cluster-testjob1", counter="write_bytes")
    assert (w["samples"], w["min"], w["max"], w["sum"]) == (25, 1048576, 16777216, 26214400)
    assert one(rows, job_id="testjob2", counter="read_bytes")["sum"] == 1024


def test_telegraf_brw_stats_is_skipped(realdata):
    rows, q, stats = parse_file(realdata / TELEGRAF / "osd-ldiskfs_OST0001_brw_stats_v2.12")
    assert rows == [] and q == [] and stats.conserved and stats.lines_read > 10


# --------------------------------------------------------------------------- hand-written


CAPTURE = """\
health_check=device fs2-OST0003 reported unhealthy
NOT HEALTHY
obdfilter.fs2-OST0003.exports.123@gni1.stats=
snapshot_time             1700000000.000001 secs.usecs
read_bytes                10 samples [bytes] 4096 1048576 5000000
write_bytes               4 samples [bytes] 4096 4096 16384
ping                      7 samples [reqs]
obdfilter.fs2-OST0003.exports.10.1.1.9@o2ib.stats=
snapshot_time             1700000000.000002 secs.usecs
read_bytes                x samples [bytes] 4096 1048576 5000000
punch                     2 samples [reqs]
obdfilter.fs2-OST0003.brw_stats=
snapshot_time:         1700000000.000003 (secs.usecs)
pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %
mdt.fs2-MDT0000.exports.45@gni.stats=
snapshot_time             1700000000.5 secs.nsecs
open                      3 samples [reqs]
samedir_rename            1 samples [reqs]

obdfilter.fs2-OST0003.exports.123@gni1.stats=
snapshot_time             1700000180.000001 secs.usecs
read_bytes                12 samples [bytes] 4096 1048576 6000000
mdt.fs2-MDT0000.job_stats=
job_stats:
- job_id:          "42.0"
  snapshot_time:   1700000180.250000000 secs.nsecs
  start_time:      1700000000.000000000 secs.nsecs
  elapsed_time:    180.25 secs.nsecs
  open:            { samples:           5, unit: usecs, min: 1, max: 9, sum: 20, sumsq: 100 }
  close:           { samples:           5, unit usecs }
"""


def _check_capture(rows, q, stats):
    check_accounting(rows, q, stats)
    assert stats.lines_read == CAPTURE.count("\n")
    assert [(x.line_no, x.reason) for x in q] == [
        (10, "counter line: samples is not an integer"),
        (30, "job_stats counter: item is not 'key: value'"),
    ]
    assert len(rows) == 8
    gni = by(rows, nid="123@gni1", counter="read_bytes")
    assert [(r["samples"], r["snapshot_time"].second) for r in gni] == [(10, 20), (12, 20)]
    assert gni[0]["snapshot_time"] == datetime(2023, 11, 14, 22, 13, 20, 1)
    assert {r["node"] for r in gni} == {"nid00123"}
    unknown = one(rows, nid="10.1.1.9@o2ib")
    assert (unknown["counter"], unknown["node"], unknown["fs"]) == ("punch", None, "fs2")
    mdt = by(rows, target="fs2-MDT0000", kind="export")
    assert {r["counter"] for r in mdt} == {"open", "samedir_rename"}
    assert mdt[0]["node"] == "nid00045" and mdt[0]["snapshot_time"].microsecond == 500000
    job = one(rows, kind="job")
    assert (job["job_id"], job["counter"], job["samples"]) == ("42.0", "open", 5)
    assert job["sumsq"] == 100.0
    assert job["start_time"] == datetime(2023, 11, 14, 22, 13, 20)
    assert stats.extra["blocks_skipped"] == 2  # health_check, brw_stats


def test_capture_by_lines():
    rows, q, stats = parse_lines(CAPTURE.splitlines(True), "cap.txt", server="oss7")
    _check_capture(rows, q, stats)
    assert {r["server"] for r in rows} == {"oss7"} and {r["file"] for r in rows} == {"cap.txt"}


def test_capture_gzip_file(tmp_path):
    p = tmp_path / "2023-11-14.txt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(CAPTURE)
    rows, q, stats = parse_file(p)
    _check_capture(rows, q, stats)
    assert rows[0]["file"] == str(p)


def test_truncated_gzip_keeps_rows_and_quarantines_rest(tmp_path):
    p = tmp_path / "cut.txt.gz"
    p.write_bytes(gzip.compress((CAPTURE * 50).encode())[:-40])
    rows, q, stats = parse_file(p)
    assert stats.conserved and rows
    assert q[-1].reason.startswith("read error")


def test_no_snapshot_time_and_bad_lines():
    text = (
        "obdfilter.fs1-OST0000.stats=\n"
        "read_bytes 1 samples [bytes] 1 1 1\n"
        "snapshot_time 1700000000.1 secs.usecs\n"
        "write_bytes 1 samples [bytes 1 1 1\n"
        "write_bytes 1 samples [bytes] 1 1\n"
        "sync 1 samples [reqs] 1 1 99999999999999999999\n"
        "read_bytes=5\n"
        "garbage\n"
        "sync 2 samples [reqs]\n"
    )
    rows, q, stats = parse_lines(text.splitlines(True), "f")
    check_accounting(rows, q, stats)
    assert [x.reason for x in q] == [
        "no snapshot_time before counters",
        "counter line: unit is not in [brackets]",
        "counter line: expected min max sum [sumsq] after the unit",
        "counter line: min/max/sum is not a 64-bit integer",
        "counter line: expected '<name> <samples> samples [<unit>] [min max sum [sumsq]]'",
        "counter line: expected '<name> <samples> samples [<unit>] [min max sum [sumsq]]'",
    ]
    assert [(r["counter"], r["samples"]) for r in rows] == [("sync", 2)]
    assert stats.lines_used == 3


def test_regs_unit_typo_and_missing_numbers():
    text = "snapshot_time 1700000000.000000000 secs.nsecs\nopen 3 samples [regs]\n"
    hint = "/proc/fs/lustre/mdt/a-MDT0000/md_stats"
    rows, q, _ = parse_lines(text.splitlines(True), "f", path_hint=hint)
    assert not q
    r = one(rows)
    assert (r["unit"], r["min"], r["sum"], r["sumsq"], r["target"], r["kind"]) == (
        "reqs", None, None, None, "a-MDT0000", "target")


def test_tree_with_dangling_link_and_symlinked_file(tmp_path):
    base = tmp_path / "proc/fs/lustre/obdfilter/fs9-OST0000"
    (base / "exports/5@gni").mkdir(parents=True)
    (base / "stats").write_text("snapshot_time 1700000000.0 secs.usecs\nping 1 samples [reqs]\n")
    (base / "exports/5@gni/stats").write_text(
        "snapshot_time 1700000000.0 secs.usecs\nping 2 samples [reqs]\n")
    os.symlink("../../osd-zfs/fs9-OST0000/read_cache_enable", base / "read_cache_enable")
    os.symlink("../../osd-zfs/fs9-OST0000/brw_stats", base / "brw_stats")
    dbg = tmp_path / "sys/kernel/debug/lustre/obdfilter/fs9-OST0000"
    dbg.mkdir(parents=True)
    os.symlink(base / "stats", dbg / "stats")  # same real file: read once
    rows, q, stats = parse_tree(tmp_path)
    check_accounting(rows, q, stats)
    assert stats.extra["dangling_links"] == 2 and stats.files == 2 and not q
    assert {(r["kind"], r["nid"], r["node"], r["samples"]) for r in rows} == {
        ("target", None, None, 1), ("export", "5@gni", "nid00005", 2)}
    rows, q, stats = parse_file(base / "brw_stats")
    assert rows == [] and q[0].reason == "dangling symlink" and stats.conserved


def test_many_blocks_all_become_rows():
    """5,000 export blocks of 6 counters: every counter line is one row (speed is in bench/)."""
    block = ["obdfilter.fs2-OST0001.exports.77@gni1.stats=\n",
             "snapshot_time             1700000000.123456 secs.usecs\n",
             "read_bytes                10 samples [bytes] 4096 1048576 5000000\n",
             "write_bytes               4 samples [bytes] 4096 4096 16384\n"]
    block += [f"{op:<25} 9 samples [reqs]\n" for op in ("punch", "sync", "preprw", "commitrw")]
    _, _, stats = parse_lines(block * 5000, "many")
    assert stats.rows == 30000 and stats.conserved


def test_missing_file_is_quarantined_not_raised(tmp_path):
    rows, q, stats = parse_file(Path(tmp_path) / "nope")
    assert rows == [] and len(q) == 1 and q[0].line_no == 0 and stats.conserved
