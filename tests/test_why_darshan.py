"""`lassi why` for a job known only from Darshan: the slow-OST test per job and the
Drishti-style pattern checks, on hand-made darshan_file rows (values worked by hand) and on
real logs (pytokio's bad-OST sample: OST #14 upstream; the others derived with PyDarshan)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from lassi.cli.main import main
from lassi.core.config import load_site
from lassi.core.schemas import schema_of

DAY = dt.date(2024, 5, 6)
MIB = 1 << 20
SITE_YAML = """\
name: edison-like
description: a Lustre site whose Darshan mounts map to file systems
scheduler: [slurm]
timezones: {slurm: UTC, pbs: UTC, alps: UTC, lmt: UTC, beacon_local: UTC, beacon_job: UTC}
compute: {nodes: 16, first_nid: 0, name_format: "nid{:05d}", nid_format: "{}@gni",
          ip_format: "10.0.{hi}.{lo}", procs_per_node: 4}
forwarding: null
filesystems:
  - {name: snx9, osts: 8, osts_per_oss: 4, mdts: 1, ost_peak_bw: 1.0e+9, ost_peak_iops: 10000,
     mds_peak_ops: 50000}
tokio:
  mounts: {/scratch: snx9}
"""


def _row(table: str, **values) -> tuple:
    return tuple(values.get(f.name) for f in schema_of(table).fields)


def _job(job: str, nprocs: int) -> tuple:
    return _row("darshan_job", log_path=f"/logs/{job}.darshan", job_id=job, user="alice",
                exe="/home/alice/bin/sim", nprocs=nprocs,
                start=dt.datetime(2024, 5, 6, 10, 0), end=dt.datetime(2024, 5, 6, 10, 30),
                runtime_s=1800.0, date=DAY)


def _file(job: str, rid: str, module: str = "POSIX", **values) -> tuple:
    base = dict(log_path=f"/logs/{job}.darshan", job_id=job, module=module, record_id=rid,
                file_name=f"/scratch/{job}/{rid}", mount="/scratch", rank=0, opens=1,
                reads=0, writes=0, bytes_read=0, bytes_written=0, read_time_s=0.0,
                write_time_s=0.0, meta_time_s=0.0, seq_reads=0, seq_writes=0, rw_switches=0,
                file_not_aligned=0, date=DAY)
    return _row("darshan_file", **{**base, **values})


def _hist(**buckets: int) -> list[int]:
    """A Darshan size histogram: bucket index -> count."""
    h = [0] * 10
    for k, v in buckets.items():
        h[int(k[1:])] = v
    return h


def darshan_rows() -> tuple[list, list]:
    """D1: 24 file-per-process files, 3 per OST on 8 OSTs; the 3 on OST 5 took 60 s, the
    others 10 s (sequential 1-4 MiB writes). D2: one shared file, 64 ranks, 1000 reads +
    3000 writes (500 + 1500 sequential), 800 unaligned, 600 read/write switches, reads in
    the 10-100 KiB bucket; MPI-IO 400 of 4000 collective; metadata 2560 s over all ranks.
    D3: 5000 POSIX requests, 4000 of them under 100 B."""
    jobs = [_job("D1", 24), _job("D2", 64), _job("D3", 1)]
    files = []
    for i in range(24):
        ost = i % 8
        files.append(_file("D1", f"f{i}", rank=i, writes=100, seq_writes=100,
                           bytes_written=100 * MIB, write_time_s=60.0 if ost == 5 else 10.0,
                           write_size_hist=_hist(b5=100), read_size_hist=_hist(),
                           stripe_count=1, ost_ids=[ost]))
    files.append(_file("D2", "shared", rank=-1, reads=1000, writes=3000, seq_reads=500,
                       seq_writes=1500, file_not_aligned=800, rw_switches=600,
                       read_size_hist=_hist(b3=1000), write_size_hist=_hist(b5=3000),
                       read_time_s=1000.0, write_time_s=2000.0, meta_time_s=2560.0))
    files.append(_file("D2", "shared", module="MPI-IO", rank=-1, reads=1000, writes=3000,
                       coll_ops=400))
    files.append(_file("D3", "log", writes=5000, seq_writes=5000,
                       write_size_hist=_hist(b0=4000, b5=1000), read_size_hist=_hist()))
    return jobs, files


@pytest.fixture(scope="module")
def darshan_day(spark, tmp_path_factory):
    from lassi.core.warehouse import Warehouse

    root = tmp_path_factory.mktemp("why_darshan")
    wh = Warehouse(spark, str(root / "wh"))
    jobs, files = darshan_rows()
    wh.write_rows(jobs, "darshan_job", [DAY])
    wh.write_rows(files, "darshan_file", [DAY])
    site_file = root / "site.yaml"
    site_file.write_text(SITE_YAML)
    return wh, site_file


def _slow_indices_of(*names: str) -> set[int]:
    from lassi.report.why_page import _slow_indices
    from lassi.tools.why import Cause, Diagnosis

    d = Diagnosis("x", DAY, causes=[Cause("component", n, 1.0, "") for n in names])
    return _slow_indices(d)


def _causes(d) -> dict[str, tuple[str, float, str]]:
    return {c.name: (c.kind, round(c.share, 6), c.evidence) for c in d.causes}


def test_slow_ost_in_the_darshan_log_is_the_component_at_fault(darshan_day, capsys, tmp_path):
    """OST 5's files took 60 s, the rest 10 s: 50 s lost there, all the lost time; the page
    draws the files by OST."""
    wh, site_file = darshan_day
    page = tmp_path / "D1.html"
    rc = main(["why", "D1", "--json", "--html", str(page), "--warehouse", wh.root,
               "--site", str(site_file)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["job_id"] == "D1"
    assert out["lost_s"] == pytest.approx(50.0)
    (cause,) = out["causes"]
    assert (cause["kind"], cause["name"], cause["share"]) == ("component", "snx9-OST0005", 1.0)
    # perfectly separated: every file on OST 5 slower -> r = -1 over the 24 files
    assert "Pearson r -1.00 over 24 files, 3 on it, p " in cause["evidence"]
    assert "up to 60 s, its files elsewhere up to 10 s" in cause["evidence"]
    assert "stripe new files away from it" in cause["recommendation"]
    assert any("its Darshan log alone" in n for n in out["notes"])
    png = tmp_path / "D1_darshan_osts.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="D1_darshan_osts.png"' in page.read_text()
    assert _slow_indices_of("snx9-OST0005", "OST#7", "fwd3") == {5, 7}


def _diagnose_many(wh, site, job_ids: list[str]) -> dict:
    """Diagnoses of Darshan-only jobs through one run of the diagnosis SQL (as `why` builds
    each job's row: lassi.tools.why._job_row)."""
    from functools import reduce

    from lassi.siox.diagnosis import diagnose_frame
    from lassi.tools.why import _job_row, find_job, from_rows

    frames = [_job_row(wh, DAY, j, find_job(wh, j)[1])[0] for j in job_ids]
    jobs = reduce(lambda a, b: a.unionByName(b), frames).localCheckpoint()
    rows = diagnose_frame(wh, site, DAY, jobs).collect()
    by_job = {r["job_id"]: r for r in jobs.collect()}
    return {j: from_rows(j, DAY, [r for r in rows if r["job_id"] == j], by_job[j])
            for j in job_ids}


def test_darshan_patterns_are_flagged_with_their_counts(darshan_day):
    wh, site_file = darshan_day
    got_all = _diagnose_many(wh, load_site(str(site_file)), ["D2", "D3"])
    d = got_all["D2"]
    assert d.lost_s == 0 and d.runtime_s == pytest.approx(1800)
    got = _causes(d)
    assert set(got) == {"random-access", "unaligned", "read-after-write",
                        "n1-no-aggregation", "metadata-heavy"}       # not small-requests: 25 %
    assert all(kind == "pattern" and share == 0 for kind, share, _ in got.values())
    assert got["random-access"][2] == \
        "50 % of its 4,000 POSIX requests were not sequential (Darshan)"
    assert got["unaligned"][2].startswith("20 % of its 4,000 POSIX requests did not start")
    assert got["read-after-write"][2] == ("its files switched between writing and reading "
                                          "600 times in 4,000 POSIX requests (Darshan)")
    assert got["n1-no-aggregation"][2] == ("64 ranks shared 1 file(s); 10 % of their 4,000 "
                                           "requests were collective (Darshan)")
    # 2560 / (1000 + 2000 + 2560) = 46 % of the I/O time; 2560 / 64 = 40 s per rank
    assert got["metadata-heavy"][2] == \
        "metadata took 46 % of its I/O time, 40 s per rank (Darshan)"
    assert any("no lost time measured" in n for n in d.notes)
    assert _causes(got_all["D3"]) == {"small-requests": (
        "pattern", 0.0, "80 % of its 5,000 POSIX requests were under 100 KiB (Darshan)")}


def test_pattern_thresholds_come_from_conf(darshan_day, tmp_path):
    """random_share 0.6 > D2's 50 % random, unaligned_share 0.25 > its 20 % unaligned;
    small_share 0.9 > D3's 80 % small requests."""
    wh, site_file = darshan_day
    strict = tmp_path / "strict.yaml"
    strict.write_text(site_file.read_text() + "diagnosis: {random_share: 0.6, "
                      "unaligned_share: 0.25, small_share: 0.9}\n")
    got = _diagnose_many(wh, load_site(str(strict)), ["D2", "D3"])
    assert set(_causes(got["D2"])) == {"read-after-write", "n1-no-aggregation",
                                       "metadata-heavy"}
    assert _causes(got["D3"]) == {}


def _ingest_logs(realdata: Path, tmp: Path, logs: list[str]) -> tuple[str, str]:
    site = tmp / "edison.yaml"
    site.write_text(SITE_YAML.replace("{/scratch: snx9}", "{/scratch1: snx11025}"))
    wh = str(tmp / "wh")
    assert main(["ingest", "--source", "darshan", "--input", *logs, "--warehouse", wh,
                 "--site", str(site)]) == 0
    return wh, str(site)


def test_real_badost_log_names_ost_14(realdata, tmp_path, capsys):
    """pytokio's sample-badost.darshan: OST #14 (snx11025-OST000e) is the bad one (upstream);
    its files took up to 778 s against 17 s elsewhere (derived with PyDarshan)."""
    import darshan

    log = realdata / "pytokio" / "sample-badost.darshan"
    e3sm = next((realdata / "darshan" / "darshan-logs" / "e3sm_io_heatmaps_and_dxt")
                .glob("*.darshan"))
    wh, site = _ingest_logs(realdata, tmp_path, [str(log), str(e3sm)])
    capsys.readouterr()
    assert main(["why", "6265799", "--json", "--warehouse", wh, "--site", site]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["causes"][0]
    assert (top["kind"], top["name"], top["share"]) == ("component", "snx11025-OST000e", 1.0)
    assert "Pearson r -0.70 over 2048 files, 85 on it" in top["evidence"]
    assert out["lost_s"] == pytest.approx(778.494 - 16.939, abs=0.01)

    # e3sm_io: read/write switches and POSIX requests straight from PyDarshan
    rep = darshan.DarshanReport(str(e3sm), read_all=False)
    rep.mod_read_all_records("POSIX", warnings=False)
    c = rep.records["POSIX"].to_df()["counters"]
    switches = int(c["POSIX_RW_SWITCHES"].clip(lower=0).sum())
    requests = int((c["POSIX_READS"] + c["POSIX_WRITES"]).sum())
    assert main(["why", str(rep.metadata["job"]["jobid"]), "--json", "--warehouse", wh,
                 "--site", site]) == 0
    causes = {c["name"]: c for c in json.loads(capsys.readouterr().out)["causes"]}
    assert causes["read-after-write"]["evidence"] == (
        f"its files switched between writing and reading {switches:,} times in "
        f"{requests:,} POSIX requests (Darshan)")
