"""`lassi correlate` (TOKIO Fig. 9): Spark's Pearson r and our p-values against scipy."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from scipy.stats import pearsonr

from tests.test_scoreboard import rows_of

D1, D2 = dt.date(2017, 3, 20), dt.date(2017, 3, 21)
PERF = [812.5, 640.0, 1220.75, 95.5, 402.0, 1033.0, 288.25, 700.0]
RUNTIME = [120.0, 300.5, 90.0, 1800.0, 610.0, 95.0, 980.0, None]          # one missing
BYTES = [5 * 2**30, 3 * 2**30, 9 * 2**30, 2**28, 2**31, 6 * 2**30, 2**30, 4 * 2**30]
NODES = [4, 16, 2, 64, 32, 2, 64, 8]
CPU = [35.0, None, 20.0, 80.5, None, 22.5, 75.0, 41.0]


@pytest.fixture
def jm_wh(warehouse):
    rows = []
    for i in range(8):
        rows.append({"job_id": str(100 + i), "perf_mibs": PERF[i], "runtime_s": RUNTIME[i],
                     "darshan_bytes_read": BYTES[i], "n_nodes": NODES[i],
                     "lmt_oss_cpu_mean": CPU[i], "ost_fullest_pct": 73.0,   # constant
                     "coverage_bw": 0.5 if i < 2 else None,              # only 2 pairs
                     "date": D1 if i < 5 else D2})
    rows.append({"job_id": "999", "perf_mibs": 1.0, "runtime_s": 1e6, "n_nodes": 1,
                 "date": dt.date(2017, 4, 1)})                            # outside the period
    warehouse.write_rows(rows_of("job_metrics", *rows), "job_metrics")
    return warehouse


def _expected(xs):
    pairs = [(x, y) for x, y in zip(xs, PERF, strict=True) if x is not None]
    x, y = np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)
    res = pearsonr(x, y)
    return len(pairs), float(res.statistic), float(res.pvalue)


def test_r_and_p_match_scipy(jm_wh):
    from lassi.tools.correlate import correlate

    res = correlate(jm_wh, D1, D2)
    assert res.attrs["jobs"] == 8 and res.attrs["perf"] == "perf_mibs"
    by = res.set_index("metric")
    for metric, xs in [("runtime_s", RUNTIME), ("darshan_bytes_read", BYTES),
                       ("n_nodes", NODES), ("lmt_oss_cpu_mean", CPU)]:
        n, r, p = _expected(xs)
        assert by.loc[metric, "n"] == n
        assert by.loc[metric, "r"] == pytest.approx(r, rel=1e-12, abs=1e-14)
        assert by.loc[metric, "p"] == pytest.approx(p, rel=1e-9, abs=1e-300)
    # n/a, not crashes
    assert by.loc["ost_fullest_pct", "note"] == "n/a: the metric does not vary"
    assert by.loc["coverage_bw", "note"].startswith("n/a: fewer than 3")
    assert by.loc["coverage_bw", "n"] == 2 and math.isnan(by.loc["coverage_bw", "r"])
    assert by.loc["lmt_bytes_read", "n"] == 0
    assert "perf_mibs" not in by.index and "job_id" not in by.index
    assert "darshan_agg_perf_mibs" not in by.index       # the performance itself
    # sorted by |r|, n/a last
    finite = res[res.r.notna()]
    assert list(finite.r.abs()) == sorted(finite.r.abs(), reverse=True)
    assert res.r.notna().tolist() == sorted(res.r.notna().tolist(), reverse=True)


def test_other_perf_column_and_all_days(jm_wh):
    from lassi.tools.correlate import correlate

    res = correlate(jm_wh, perf="runtime_s")            # every day: 9 jobs
    assert res.attrs["jobs"] == 9
    run = [r for r in RUNTIME if r is not None] + [1e6]
    perf = [p for p, r in zip(PERF, RUNTIME, strict=True) if r is not None] + [1.0]
    exp = pearsonr(np.array(run), np.array(perf))
    row = res.set_index("metric").loc["perf_mibs"]
    assert row.n == 8 and row.r == pytest.approx(exp.statistic, rel=1e-12)
    assert row.p == pytest.approx(exp.pvalue, rel=1e-9)


def test_cli_correlate(jm_wh, tmp_path, capsys):
    from lassi.cli.main import main

    wh, out = jm_wh.root, tmp_path / "out"
    assert main(["correlate", "--from", "2017-03-20", "--to", "2017-03-21", "--warehouse", wh,
                 "--out", str(out), "-p", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "Pearson correlation of perf_mibs with job metrics (8 jobs" in text
    n, r, p = _expected(BYTES)
    line = next(ln for ln in text.splitlines() if ln.startswith("darshan_bytes_read"))
    assert line.split()[1:4] == [str(n), f"{r:.3f}", f"{p:.3g}"]
    assert line.endswith("*") == (p < 0.05)
    csv = out / "correlate_perf_mibs_2017-03-20_2017-03-21.csv"
    png = out / "correlate_perf_mibs_2017-03-20_2017-03-21.png"
    assert csv.read_text().splitlines()[0] == "metric,n,r,p,note,significant"
    assert png.read_bytes()[:4] == b"\x89PNG"
    cases = [(["--perf", "nope"], "not a numeric job_metrics column"),
             (["--perf", "user"], "not a numeric job_metrics column"),
             (["--from", "2017-03-22", "--to", "2017-03-21"], "is after --to"),
             (["--from", "yesterday", "--to", "2017-03-21"], "--from: not a date"),
             (["--from", "2017-03-20"], "give both --from"),
             (["--from", "2016-01-01", "--to", "2016-01-01"], "no job_metrics rows")]
    for args, msg in cases:
        assert main(["correlate", *args, "--warehouse", wh]) == 1
        err = capsys.readouterr().err
        assert err.startswith("lassi: error: ") and msg in err and err.count("\n") == 1
