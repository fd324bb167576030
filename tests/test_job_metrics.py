"""summarize_job (`job_metrics`): every column of a hand-made warehouse, computed by hand."""

from __future__ import annotations

import datetime as dt

import pytest

from lassi.core.schemas import schema_of

DAY = dt.date(2018, 1, 28)
MIB = 1 << 20


def T(h: int, m: int, s: int = 0) -> dt.datetime:
    return dt.datetime(2018, 1, 28, h, m, s)


def _row(table: str, **values) -> tuple:
    return tuple(values.get(f.name) for f in schema_of(table).fields)


def _app_run(job, source, start, end, exe, user, n_nodes):
    return _row("app_run", app_id=f"{job}.0", job_id=job, user=user, exe=exe,
                command=f"srun ./{exe}", nodes=["n1"], n_nodes=n_nodes, n_procs=n_nodes * 24,
                start=start, end=end, source=source, date=DAY)


def _darshan_job(job, start, end, br, bw, opens, io_t, nprocs, exe, user):
    return _row("darshan_job", log_path=f"/logs/{user}_{exe}_id{job}.darshan", job_id=job,
                user=user, exe=f"/home/{user}/bin/{exe}", nprocs=nprocs, start=start, end=end,
                bytes_read=br, bytes_written=bw, posix_opens=opens, io_time_slowest_s=io_t,
                date=DAY)


def _darshan_file(job, mount, br, bw):
    return _row("darshan_file", log_path=f"/logs/{job}.darshan", job_id=job, module="POSIX",
                record_id="1", file_name=f"{mount}/f", mount=mount, rank=-1,
                bytes_read=br, bytes_written=bw, date=DAY)


# LMT file system snx1, two OSTs, a sample a minute: (minute, read MiB, write MiB, OSS CPU a, b)
OST_SAMPLES = [(0, 1, 0, 5, 5), (1, 10, 100, 10, 20), (2, 20, 200, 30, 40), (3, 5, 5, 0, 0),
               (4, 0, 0, 0, 0)]
# MDS: (minute, open, close, getattr, MDS CPU)
MDS_SAMPLES = [(1, 5, 5, 100, 50.0), (2, 15, 15, 0, 70.0), (3, 1, 1, 1, 10.0)]


def _lmt_rows():
    ost, mds = [], []
    for m, rd, wr, ca, cb in OST_SAMPLES:
        for name, cpu in (("snx1-OST0000", ca), ("snx1-OST0001", cb)):
            ost.append(_row("lmt_ost", fs="snx1", ost=name, oss="oss1", ts=T(8, m),
                            read_bytes_delta=rd * MIB, write_bytes_delta=wr * MIB,
                            interval_s=60.0, reset=False, oss_cpu_pct=float(cpu), date=DAY))
    for m, o, c, g, cpu in MDS_SAMPLES:
        for op, v in (("open", o), ("close", c), ("getattr", g)):
            mds.append(_row("lmt_mds", fs="snx1", mdt="snx1-MDT0000", ts=T(8, m), op=op,
                            samples_delta=v, interval_s=60.0, reset=False, mds_cpu_pct=cpu,
                            date=DAY))
    return ost, mds


def _health_rows():
    rows = []
    for ts, uses in ((T(7, 0), (50.0, 70.0)), (T(9, 0), (90.0, 95.0))):
        for i, use in enumerate(uses):
            rows.append(_row("ost_health", source="lfs-df", ts=ts, fs="snx1",
                             target=f"snx1-OST000{i}", kind="OST", target_index=i,
                             use_pct=use, date=DAY))
            rows.append(_row("ost_health", source="lctl-dl", ts=ts, fs="snx1",
                             target=f"snx1-OST000{i}", kind="OST", target_index=i,
                             status="UP", failed_over=(i == 0 and ts.hour == 7), date=DAY))
    return rows


@pytest.fixture(scope="module")
def site():
    from lassi.core.config import load_site

    return _with_tokio(load_site("archer"), mounts={"/scratch": "snx1"})


def _with_tokio(site, **tokio):
    """The site with these `tokio:` settings (settings are built once per Site)."""
    from lassi.core.config import Site

    return Site({**site.data, "tokio": {**site.data["tokio"], **tokio}}, site.source)


@pytest.fixture(scope="module")
def wh(spark, tmp_path_factory, site):
    """The hand-made day, with `job_metrics` built once: (warehouse, rows written)."""
    from lassi.core.warehouse import Warehouse
    from lassi.tokio.job_metrics import build_job_metrics

    warehouse = Warehouse(spark, str(tmp_path_factory.mktemp("job_metrics") / "wh"))
    ost, mds = _lmt_rows()
    warehouse.write_rows([
        _app_run("J1", "slurm", T(8, 0), T(8, 2), "vpic", "u1", 4),
        _app_run("J3", "pbs", T(8, 0), T(8, 1), "small", "u3", 1),
    ], "app_run")
    warehouse.write_rows([
        _darshan_job("J1", T(8, 0, 5), T(8, 1, 55), 100 * MIB, 300 * MIB, 10, 4.0, 96,
                     "vpic", "u1"),
        _darshan_job("J2", T(8, 1), T(8, 3), 0, 60 * MIB, 2, 1.0, 24, "solo", "u2"),
    ], "darshan_job")
    warehouse.write_rows([_darshan_file("J1", "/scratch", 100 * MIB, 300 * MIB),
                          _darshan_file("J2", "/scratch", 0, 60 * MIB)], "darshan_file")
    zero = {f.name: {"double": 0.0, "bigint": 0, "int": 0}.get(f.dataType.simpleString())
            for f in schema_of("app_hour").fields
            if f.name not in ("app_id", "job_id", "fs", "hour", "date")}
    warehouse.write_rows([_row("app_hour", **{**zero, "app_id": "J3.0", "job_id": "J3",
                                              "fs": "snx1", "hour": T(8, 0), "read_kb": 1024.0,
                                              "write_kb": 1024.0, "date": DAY})], "app_hour")
    warehouse.write_rows(ost, "lmt_ost")
    warehouse.write_rows(mds, "lmt_mds")
    warehouse.write_rows(_health_rows(), "ost_health")
    return warehouse, build_job_metrics(warehouse, site, DAY)


def test_job_metrics_by_hand(wh):
    warehouse, written = wh
    assert written == 3
    rows = {r["job_id"]: r.asDict() for r in warehouse.read("job_metrics", DAY).collect()}
    j1 = rows["J1"]
    # job info: Slurm first (its start/end, not Darshan's), Darshan's procs
    assert (j1["jobinfo_source"], j1["start"], j1["end"], j1["runtime_s"]) == \
        ("slurm", T(8, 0), T(8, 2), 120.0)
    assert (j1["app"], j1["user"], j1["n_nodes"], j1["fs"]) == ("vpic", "u1", 4, "snx1")
    # Darshan: 400 MiB over the slowest rank's 4 s
    assert (j1["darshan_logs"], j1["darshan_bytes_read"], j1["darshan_bytes_written"]) == \
        (1, 100 * MIB, 300 * MIB)
    assert j1["darshan_agg_perf_mibs"] == pytest.approx(100.0)
    assert j1["perf_mibs"] == pytest.approx(100.0)
    # LMT samples ending in (08:00, 08:02]: minutes 1 and 2 on both OSTs
    assert j1["lmt_bytes_read"] == 2 * (10 + 20) * MIB
    assert j1["lmt_bytes_written"] == 2 * (100 + 200) * MIB
    assert j1["coverage_bw"] == pytest.approx(400 / 660)
    assert j1["lmt_oss_cpu_mean"] == pytest.approx((15 + 35) / 2)
    assert j1["lmt_oss_cpu_max"] == 40.0
    assert j1["lmt_missing_fraction"] == 0.0
    assert (j1["lmt_opens_closes"], j1["lmt_md_ops"]) == (40, 140)
    assert j1["coverage_opens"] == pytest.approx(10 / 20)
    assert (j1["lmt_mds_cpu_mean"], j1["lmt_mds_cpu_max"]) == (60.0, 70.0)
    # the 07:00 snapshot (last before the start), not the 09:00 one
    assert (j1["ost_fullest_pct"], j1["ost_mean_pct"], j1["ost_failed_over"]) == (70.0, 60.0, 1)
    assert j1["concurrent_jobs"] == 2                # J2 and J3 overlap it
    assert (j1["job_bytes"], j1["bytes_source"]) == (400 * MIB, "darshan")
    # J2 is known to Darshan only; J3 has no Darshan log: LASSi's export bytes
    assert rows["J2"]["jobinfo_source"] == "darshan" and rows["J2"]["n_nodes"] is None
    assert rows["J2"]["app"] == "solo" and rows["J2"]["lmt_bytes_written"] == 2 * 205 * MIB
    j3 = rows["J3"]
    assert (j3["jobinfo_source"], j3["bytes_source"], j3["job_bytes"]) == \
        ("scheduler", "lustre_stats", 2 * MIB)
    assert j3["perf_mibs"] == pytest.approx(2 / 60)
    assert j3["darshan_logs"] is None and j3["coverage_opens"] is None
    assert j3["lmt_bytes_read"] == 2 * 10 * MIB   # the 08:01 sample only


def test_jobinfo_priority_is_configurable(wh, site):
    from lassi.tokio.job_metrics import summarize_jobs

    site = _with_tokio(site, jobinfo=["darshan", "slurm"])
    pdf = summarize_jobs(wh[0], site, ["J1"])
    r = pdf.iloc[0]
    assert r["jobinfo_source"] == "darshan" and r["runtime_s"] == 110.0
    assert r["lmt_missing_fraction"] == pytest.approx(0.0)


def test_summarize_merges_and_names_unknown_jobs(wh, site):
    """summarize_jobs on the day's built job_metrics: the known job, and a one-line error
    naming the unknown one."""
    from lassi.tokio.job_metrics import JobNotFound, summarize_jobs

    warehouse, _ = wh
    with pytest.raises(JobNotFound, match="knows job NOPE") as err:
        summarize_jobs(warehouse, site, ["J3", "NOPE"])
    assert list(err.value.found["job_id"]) == ["J3"]
    assert sorted(r.job_id for r in warehouse.read("job_metrics", DAY).collect()) == \
        ["J1", "J2", "J3"]


def test_summarize_real_nersc_job(warehouse, realdata, tmp_path):
    """Job 4478544 (Edison, realdata §3c/§6): pytokio's Slurm cache, its two Darshan logs
    found in the log repository by job id, the lfs df / lctl dl -t snapshots; through the
    CLI, as an admin would run it."""
    import gzip
    import json
    import re

    from lassi.cli.main import main

    pt = realdata / "pytokio"
    from lassi.core.config import conf_dir

    site = tmp_path / "edison.yaml"                 # archer's layout + Edison's mount map
    site.write_text((conf_dir() / "sites/archer.yaml").read_text()
                    + "\ntokio: {mounts: {/scratch2: snx11035}}\n")
    common = ["--warehouse", str(warehouse.root), "--site", str(site)]
    for source, inputs, extra in (
            ("slurm", [pt / "sample.slurm"], ["--tz", "America/Los_Angeles"]),
            ("lfs-df", [pt / "lfs-df.txt.gz"], ["--date", "2017-03-20"]),
            ("lctl-dl", [pt / "lctl-dl-t.txt.gz"], ["--date", "2017-03-20"])):
        assert main(["ingest", "--source", source, "--input", *map(str, inputs), *extra,
                     *common]) == 0
    out = tmp_path / "job.json"
    assert main(["summarize-job", "4478544", "--json", str(out), *common,
                 "--darshan-root", str(pt / "darshanlogs")]) == 0   # finds the job's 2 logs
    (row,) = json.loads(out.read_text())
    # Slurm first: steps .0-.7 span 01:59:05-02:11:34 PDT
    assert row["jobinfo_source"] == "slurm" and row["n_nodes"] == 128
    assert row["start"].startswith("2017-03-20T08:59:05")
    assert row["end"].startswith("2017-03-20T09:11:34")
    # both Darshan logs: vpicio wrote 2,199,023,259,968 B, dbscan_read read 1,649,291,067,392
    assert row["darshan_logs"] == 2
    assert row["darshan_bytes_written"] >= 2_199_023_259_968
    assert row["darshan_bytes_read"] >= 1_649_291_067_392
    assert row["fs"] == "snx11035" and row["bytes_source"] == "darshan"
    # OST fullness of snx11035 from the lfs df text, read here with a plain regex
    with gzip.open(pt / "lfs-df.txt.gz", "rt") as fh:
        uses = [int(m.group(1)) for m in
                (re.match(r"snx11035-OST\w+_UUID\s+\d+\s+\d+\s+\d+\s+(\d+)%", ln) for ln in fh)
                if m]
    assert len(uses) == 24 and row["ost_fullest_pct"] == pytest.approx(max(uses), abs=1)
    assert row["ost_mean_pct"] == pytest.approx(sum(uses) / 24, abs=1)
    assert row["ost_failed_over"] == 2            # OST0002 and OST0003 share an OSS
    assert row["lmt_bytes_read"] is None           # no LMT for Edison in March 2017
