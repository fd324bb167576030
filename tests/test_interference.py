"""Stage `interference` on a hand-made day: neighbours, their features and one cause per
abnormal job (Beacon Fig. 12)."""

import datetime as dt

import pytest

from lassi.config import load_site
from lassi.schemas import (
    ANOMALY,
    COMPONENT_ANOMALY,
    IO_PHASE,
    JOB_SUMMARY,
    JOB_TIMESERIES,
)

DAY = dt.date(2018, 2, 25)
T0 = dt.datetime(2018, 2, 25, 10, 0, 0)


def _row(schema, **kw):
    kw.setdefault("date", DAY)
    return tuple(kw.get(f.name) for f in schema.fields)


def _job(job, fwd, mode="N:N"):
    return _row(JOB_SUMMARY, job_id=job, app=f"app_{job}", read_bytes=0, write_bytes=0,
                io_mode=mode, fwd_nodes=[fwd], osts=["online1-OST0000"], n_nodes=4,
                start=T0, end=T0 + dt.timedelta(hours=1))


def _seconds(job, n, bytes_s=0.0, ops_s=0.0, md_s=0.0):
    return [_row(JOB_TIMESERIES, job_id=job, layer="compute", component="*",
                 ts=T0 + dt.timedelta(seconds=i), interval_s=1, read_bytes=0.0,
                 write_bytes=bytes_s, read_ops=0.0, write_ops=ops_s, md_ops=md_s)
            for i in range(n)]


@pytest.fixture
def day(warehouse):
    spark, wh = warehouse.spark, warehouse
    site = load_site("taihulight", nodes=2048)
    jobs = [_job("A", "fwd000"), _job("B", "fwd000", "N:1"), _job("E", "fwd001"),
            _job("D", "fwd001"), _job("G", "fwd002"), _job("H", "fwd003"),
            _job("C", "fwd004", "N:1")]
    ts = (_seconds("A", 100, 1e6, 1.0) + _seconds("B", 100, 1e8, 100.0)   # B: N:1, writing
          + _seconds("E", 100, 1e6, 1.0) + _seconds("D", 100, 0.0, 0.0, 500.0)  # D: 500 MD/s
          + _seconds("G", 100, 1e6, 1.0) + _seconds("H", 100, 1e6, 1.0)
          + _seconds("C", 100, 2e9, 10.0))                          # elsewhere: no neighbour
    abnormal = ["A", "E", "G", "H"]
    phases = [_row(IO_PHASE, job_id=j, app=f"app_{j}", phase_no=0, start=T0,
                   end=T0 + dt.timedelta(seconds=100), bytes=100, duration_s=100.0,
                   is_abnormal=True) for j in abnormal]
    anomaly = [_row(ANOMALY, job_id=j, app=f"app_{j}", n_phases=1, n_abnormal=1,
                    method="two-stage") for j in abnormal]
    comp = [_row(COMPONENT_ANOMALY, kind="fwd", component="fwd002", rule="system",
                 start=T0 - dt.timedelta(minutes=30), end=T0 + dt.timedelta(minutes=50),
                 duration_min=80, ongoing=False)]
    for rows, schema, table in [(jobs, JOB_SUMMARY, "job_summary"),
                                (ts, JOB_TIMESERIES, "job_timeseries"),
                                (phases, IO_PHASE, "io_phase"), (anomaly, ANOMALY, "anomaly"),
                                (comp, COMPONENT_ANOMALY, "component_anomaly")]:
        wh.write(spark.createDataFrame(rows, schema), table, [DAY])
    return site, wh


def test_one_cause_per_abnormal_job(day):
    from lassi.interference import build_interference

    site, wh = day
    summary = build_interference(wh, site, DAY)
    assert summary.startswith("4 abnormal jobs")
    rows = wh.read("interference", [DAY]).toPandas()
    cause = rows.groupby("job_id")["cause"].first().to_dict()
    assert cause == {"A": "N:1", "E": "high MDOPS", "G": "system anomaly", "H": "unknown"}
    nb = rows.set_index("job_id")
    assert nb.loc["A", "neighbour"] == "B" and nb.loc["A", "bw"] == pytest.approx(1e8)
    assert bool(nb.loc["A", "n1"]) and not bool(nb.loc["A", "high_bw"])
    assert nb.loc["E", "neighbour"] == "D" and nb.loc["E", "mdops"] == pytest.approx(500.0)
    assert rows[rows.job_id == "G"]["neighbour"].isna().all()    # alone on its node
    assert "C" not in set(rows["neighbour"].dropna())             # other node: no neighbour


def test_rerun_is_idempotent(day):
    from lassi.interference import build_interference

    site, wh = day
    build_interference(wh, site, DAY)
    first = wh.read("interference", [DAY]).count()
    build_interference(wh, site, DAY)
    assert wh.read("interference", [DAY]).count() == first == 4


def test_cause_accuracy_against_truth_classes(day):
    """evaluate_interference scores causes by the class the simulator's truth supports."""
    from lassi.evaluate import evaluate_interference
    from lassi.interference import build_interference

    site, wh = day
    build_interference(wh, site, DAY)
    truth = {"runs": [
        {"job_id": "A", "neighbours": [{"run_no": 1, "lost_s": 30.0}], "components": []},
        {"job_id": "E", "neighbours": [{"run_no": 2, "lost_s": 5.0}],
         "components": [{"name": "fwd001", "lost_s": 50.0}]},            # truly system
        {"job_id": "G", "neighbours": [], "components": [{"name": "fwd002", "lost_s": 9.0}]},
        {"job_id": "H", "neighbours": [], "components": []},
    ]}
    res = evaluate_interference(wh, truth, DAY, DAY)
    assert res["jobs"] == 4 and res["accuracy"] == pytest.approx(0.75)
    assert res["confusion"] == {"interference->interference": 1, "system->interference": 1,
                                "system->system": 1, "none->none": 1}
