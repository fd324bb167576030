"""UMAMI: the job against its application's history; colours from the quartiles."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from lassi.core.schemas import schema_of


def _metrics(job, app, day, hour, perf, runtime):
    values = {"job_id": job, "app": app, "start": dt.datetime.combine(day, dt.time(hour)),
              "perf_mibs": perf, "runtime_s": runtime, "lmt_oss_cpu_mean": 20.0,
              "concurrent_jobs": 3, "date": day}
    return tuple(values.get(f.name) for f in schema_of("job_metrics").fields)


def test_verdict_quartiles():
    from lassi.tools.umami import BETTER, USUAL, WORSE, verdict

    hist = pd.Series([10.0, 20.0, 30.0, 40.0, 50.0])     # q1 20, q3 40
    assert verdict(45.0, hist, True) == BETTER
    assert verdict(15.0, hist, True) == WORSE
    assert verdict(30.0, hist, True) == USUAL
    assert verdict(15.0, hist, False) == BETTER          # e.g. CPU load: lower is better
    assert verdict(45.0, hist, False) == WORSE
    assert verdict(45.0, hist[:3], True) == USUAL         # too little history to judge
    assert verdict(None, hist, True) == USUAL


def test_umami_history_and_png(warehouse, tmp_path):
    from lassi.core.config import load_site
    from lassi.tools.umami import WORSE, umami_data, verdict, write_umami

    d0 = dt.date(2018, 1, 1)
    rows = [_metrics(f"h{k}", "vpic", d0 + dt.timedelta(days=k), 8, 100.0 + k, 600.0)
            for k in range(6)]
    rows += [_metrics("slow", "vpic", d0 + dt.timedelta(days=6), 8, 20.0, 1500.0),
             _metrics("later", "vpic", d0 + dt.timedelta(days=7), 8, 100.0, 600.0),
             _metrics("other", "wrf", d0 + dt.timedelta(days=5), 8, 1.0, 60.0),
             _metrics("old", "vpic", d0 - dt.timedelta(days=40), 8, 1.0, 60.0)]
    warehouse.write_rows(rows, "job_metrics")
    site = load_site("archer")
    job, hist = umami_data(warehouse, site, "slow")
    assert job["perf_mibs"] == 20.0
    assert list(hist["job_id"]) == [f"h{k}" for k in range(6)]   # same app, before, in 30 days
    assert verdict(job["perf_mibs"], hist["perf_mibs"], True) == WORSE
    png = write_umami(warehouse, site, "slow", tmp_path)
    assert png.name == "umami_slow.png" and png.stat().st_size > 10_000
    with pytest.raises(ValueError, match="no job_metrics row"):
        umami_data(warehouse, site, "nope")
    day = umami_data(warehouse, site, "slow", date=d0 + dt.timedelta(days=6))
    assert day[0] == job and day[1].equals(hist)
    with pytest.raises(ValueError, match="no job_metrics row on 2018-01-01"):
        umami_data(warehouse, site, "slow", date=d0)


def test_report_tokio_section(warehouse, tmp_path):
    """The daily report's TOKIO section: the slow job with its UMAMI figure, the overview."""
    from lassi.core.config import load_site
    from lassi.report.tokio import tokio_section

    d0 = dt.date(2018, 1, 1)
    day = d0 + dt.timedelta(days=6)
    rows = [_metrics(f"h{k}", "vpic", d0 + dt.timedelta(days=k), 8, 100.0 + k, 600.0)
            for k in range(6)]
    rows += [_metrics("slow", "vpic", day, 8, 20.0, 1500.0),
             _metrics("fine", "vpic", day, 9, 104.0, 600.0)]
    warehouse.write_rows(rows, "job_metrics")
    html = tokio_section(warehouse, load_site("archer"), day, tmp_path)
    assert 'id="tokio-2018-01-07"' in html
    assert "<b>2</b> jobs started on 2018-01-07" in html
    assert "<td>slow</td>" in html and "<td>fine</td>" not in html    # below q1 only
    assert (tmp_path / "_tokio/2018-01-07/umami_0.png").stat().st_size > 10_000
    assert "No lfs df / lctl dl snapshot" in html
    assert tokio_section(warehouse, load_site("archer"), d0 - dt.timedelta(days=1),
                         tmp_path) == ""                                  # no job_metrics
