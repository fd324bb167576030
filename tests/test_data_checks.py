"""Data that does not match the site's configuration is loud (ingest.data_checks).

A 4-node ARCHER day is ingested once with its own site (every check finds nothing), then
with a site whose node numbering starts elsewhere (`first_nid`: other node names and
NIDs), as a site with a wrong `conf/` would: the Lustre export rows and the runs match
nothing, `lassi ingest` prints one warning line per check with the counts, and the report's
data-quality box shows them. Expected counts come from the raw files and the simulator's
truth, not from the tables checked. The Beacon side (trace IPs) is in test_beacon_ingest.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
from html import escape
from pathlib import Path

import pytest

from lassi.cli.main import main
from lassi.core.config import conf_dir, load_site

DATE = dt.date(2017, 10, 10)


@pytest.fixture(scope="module")
def day(archer_day, tmp_path_factory) -> tuple[Path, Path, dict]:
    """(raw folder of the shared 4-node ARCHER day (conftest.archer_day, read only), a YAML
    site shifted by 1,000 node numbers, the truth)."""
    assert (archer_day.date, archer_day.nodes) == (DATE, 4)
    tmp = tmp_path_factory.mktemp("checks")
    raw = archer_day.raw
    text = (conf_dir() / "sites" / "archer.yaml").read_text()
    assert "  first_nid: 8 " in text
    shifted = tmp / "archer-shifted.yaml"
    shifted.write_text(text.replace("  first_nid: 8 ", "  first_nid: 1008 "))
    return raw, shifted, json.loads((raw / "truth.json").read_text())


def _checks(wh_root: Path) -> dict[str, dict]:
    import pandas as pd

    df = pd.read_parquet(wh_root / "data_check" / f"date={DATE}")
    return {r["source"]: r for r in df.to_dict("records")}


def runs_of(truth: dict) -> int:
    """app_run rows of the date with nodes: every simulated run that starts on it is in
    both the PBS and the ALPS log (ARCHER's two schedulers)."""
    return 2 * sum(1 for r in truth["runs"] if r["start"].startswith(DATE.isoformat()))


def _export_lines(raw: Path) -> int:
    """Counter lines of export blocks in the day's captures (the next day's too): each is
    one export row (`<counter> <samples> samples [<unit>] ...`)."""
    n = 0
    for f in sorted((raw / "lustre").rglob("*")):
        if not f.is_file():
            continue
        export = False
        for line in f.read_text().splitlines():
            if line.startswith("obdfilter.") or line.startswith("mdt."):
                export = ".exports." in line
            elif export and " samples " in line:
                n += 1
    return n


def test_matching_site_passes_every_check(day, spark, tmp_path, capsys):
    raw, _, truth = day
    wh = tmp_path / "wh"
    rc = main(["ingest", "--raw", str(raw), "--date", DATE.isoformat(), "--warehouse", str(wh),
               "--site", "archer", "--nodes", "4"])
    assert rc == 0
    assert "warning" not in capsys.readouterr().err
    checks = _checks(wh)
    assert set(checks) == {"lustre", "scheduler", "alps", "pbs"}   # no Beacon trace here
    assert all(c["warning"] is None for c in checks.values())
    # the 4 nodes' I/O falls in runs: a few 10-minute buckets at run edges do not
    assert checks["alps"]["n_bad"] < 0.1 * checks["alps"]["n_total"]
    assert checks["lustre"]["n_bad"] == checks["scheduler"]["n_bad"] == 0
    started = runs_of(truth)
    assert checks["scheduler"]["n_total"] == started > 0
    from lassi.core.warehouse import Warehouse
    from lassi.report.data import load_quality
    from lassi.report.html import quality_box

    html = quality_box(load_quality(Warehouse(spark, str(wh)), [DATE]))
    assert "Checked against the site configuration (lustre, scheduler)" in html
    a, p = checks["alps"], checks["pbs"]
    assert (f"I/O outside every run of the job log (10-minute node buckets with I/O): alps "
            f"{a['n_bad']} of {a['n_total']} ({100 * a['n_bad'] / a['n_total']:.1f} %), pbs "
            f"{p['n_bad']} of {p['n_total']}") in html
    assert "class='warn'" not in html


@pytest.fixture(scope="module")
def shifted_run(day, tmp_path_factory) -> tuple[Path, list[str]]:
    """`lassi ingest --raw` of the day with the shifted site: (warehouse, warning lines)."""
    raw, shifted, _ = day
    wh = tmp_path_factory.mktemp("shifted") / "wh"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["ingest", "--raw", str(raw), "--date", DATE.isoformat(), "--warehouse",
                   str(wh), "--site", str(shifted), "--nodes", "4"])
    assert rc == 0                                         # loud, not fatal
    return wh, [x for x in err.getvalue().splitlines() if x.startswith("warning: ")]


def test_shifted_site_warns_in_one_line_per_check(day, shifted_run):
    raw, _, truth = day
    wh, err = shifted_run
    checks = _checks(wh)
    started = runs_of(truth)
    export_rows = checks["lustre"]["n_total"]
    assert 0 < export_rows <= _export_lines(raw)           # the date's captures of them
    assert (checks["lustre"]["n_bad"], checks["scheduler"]["n_bad"],
            checks["scheduler"]["n_total"]) == (export_rows, started, started)
    assert err == [checks["lustre"]["warning"], checks["scheduler"]["warning"]]
    assert err[0].startswith(f"warning: lustre: {export_rows:,} of {export_rows:,} export "
                             "statistics rows from clients that are no compute node of the "
                             "site (e.g. ")
    assert "8@gni1" in checks["lustre"]["examples"]          # nid00008's NID, by hand
    assert err[1].startswith(f"warning: scheduler: {started:,} of {started:,} runs on no "
                             "compute node of the site (e.g. nid0000")
    assert "job log of another machine" in err[1]


def test_report_quality_box_shows_the_warnings(shifted_run, spark):
    from lassi.core.warehouse import Warehouse
    from lassi.report.data import load_quality
    from lassi.report.html import quality_box

    wh, _ = shifted_run
    html = quality_box(load_quality(Warehouse(spark, str(wh)), [DATE]))
    warnings = [c["warning"] for c in _checks(wh).values() if c["warning"]]
    for w in warnings:
        assert f"<p class='warn'>{escape(w)}</p>" in html
    assert html.count("class='warn'") == 2 and "runs on no compute node" in html


def test_job_log_times_off_by_hours(spark, tmp_path):
    """Trace lines of two nodes from 02:00 to 04:00 UTC; a `beacon-job` log that places
    their job at 10:00-12:00 (a log in UTC+8 read as UTC) and an `alps` log that is right.
    Counted by hand: 12 + 6 active 10-minute buckets, none inside the beacon-job run as
    read, all with its times moved -8 h."""
    from lassi.ingest.data_checks import run_checks

    from lassi.core.schemas import schema_of
    from lassi.core.warehouse import Warehouse
    from tests.conftest import schema_row

    site = load_site("archer", nodes=4)
    wh = Warehouse(spark, str(tmp_path / "wh"))
    at = lambda h, m=0: dt.datetime(2017, 10, 10, h, m)  # noqa: E731
    trace = [schema_row(schema_of("raw_lwfs_trace"), node=node, ip="10.0.0.1",
                        ts=at(2 + k // 6, 10 * (k % 6) + 3), op="WRITE", count=1, date=DATE)
             for node, n in (("nid00008", 12), ("nid00009", 6)) for k in range(n)]
    wh.write(spark.createDataFrame(trace, schema_of("raw_lwfs_trace")), "raw_lwfs_trace",
             [DATE])
    runs = [schema_row(schema_of("app_run"), app_id=a, job_id=a, source=src, nodes=nodes,
                       start=s, end=e, date=DATE)
            for a, src, nodes, s, e in (
                ("1", "beacon-job", ["nid00008", "nid00009"], at(10), at(12)),
                ("2", "alps", ["nid00008"], at(1, 30), at(4, 30)),
                ("3", "alps", ["nid00009"], at(2), at(2, 55)))]
    wh.write(spark.createDataFrame(runs, schema_of("app_run")), "app_run", [DATE])
    checks = {c.source: c for c in run_checks(wh, site, DATE)}
    job, alps = checks["beacon-job"], checks["alps"]
    assert (job.n_bad, job.n_total, alps.n_bad, alps.n_total) == (18, 18, 0, 18)
    assert job.examples == ["nid00008 02:00", "nid00008 02:10", "nid00008 02:20"]
    assert alps.warning is None
    assert job.warning == (
        "warning: beacon-job: 18 of 18 10-minute node buckets with I/O outside every run "
        "(e.g. nid00008 02:00, nid00008 02:10, nid00008 02:20): the beacon-job times look "
        "8 h late (100% of the sampled I/O falls in runs moved -8 h, 0% as read): check "
        f"timezones.beacon_job in {site.source}")
    rows = {r.source: r for r in wh.read("data_check", [DATE]).collect()}
    assert rows["beacon-job"].warning == job.warning and rows["alps"].n_bad == 0
