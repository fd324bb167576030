"""LASSi metrics on a hand-made warehouse: every expected value below is worked out by hand
(or, for means and deviations, with Python's statistics module from those hand values)."""

from __future__ import annotations

import datetime as dt
import statistics

import pytest

from lassi.core.config import load_site
from lassi.core.schemas import ALL_COUNTERS, schema_of
from lassi.risk.metrics import build_app_hour, build_fs_hour
from lassi.risk.slowdown import build_run_metrics

D = dt.date(2017, 10, 10)
PREV = D - dt.timedelta(days=1)
A, B, C, DN = "nid00008", "nid00009", "nid00010", "nid00011"
X_CMD = "aprun -n 48 -N 24 ./x.exe in.nml"


def ts(hms: str, day: dt.date = D) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.fromisoformat(hms))


def nw_row(node: str, fs: str, hms: str, **counters) -> dict:
    row = {c: 0.0 if c.endswith("_kb") else 0 for c in ALL_COUNTERS}
    row.update(counters)
    return {"node": node, "fs": fs, "window_start": ts(hms), "window_s": 180, **row,
            "resets": 0, "date": D}


def run_row(app_id, job_id, source, nodes, start, end, day=D, command=None, exe=None,
            user=None) -> dict:
    row = dict.fromkeys(schema_of("app_run").fieldNames())
    row.update(app_id=app_id, job_id=job_id, source=source, nodes=nodes, n_nodes=len(nodes),
               start=start, end=end, command=command, exe=exe, user=user, date=day)
    return row


NODE_WINDOWS = [
    nw_row(A, "fs2", "00:06:00", write_kb=999.0, write_ops=9),   # before A starts: not A's
    nw_row(A, "fs2", "00:09:00", write_kb=1024.0, write_ops=1),  # window holding A's start
    nw_row(B, "fs2", "00:30:00", write_kb=1024.0, write_ops=1, open=5),
    nw_row(A, "fs2", "01:00:00", write_kb=2048.0, write_ops=2),
    nw_row(B, "fs2", "01:30:00", write_kb=77.0, write_ops=7),    # starts at A's end: not A's
    nw_row(A, "fs3", "00:30:00", write_kb=512.0, write_ops=512),
    nw_row(C, "fs2", "00:30:00", read_kb=4096.0, read_ops=4),
    nw_row(C, "fs2", "00:42:00", read_kb=1024.0, read_ops=8),
    nw_row(C, "fs2", "00:45:00", read_kb=5.0, read_ops=5),       # starts at B's end: not B's
    nw_row(DN, "fs2", "00:15:00", open=100),                     # Z0, started the day before
    nw_row(DN, "fs2", "00:18:00", open=50),
    nw_row(DN, "fs2", "02:03:00", other=10),                     # PBS-only job 102
]

RUNS = [
    run_row("100.sdb", "100.sdb", "pbs", [A, B], ts("00:09:30"), ts("01:31:00"), user="alice"),
    run_row("A1", "100.sdb", "alps", [A, B], ts("00:10:00"), ts("01:30:00"), command=X_CMD,
            exe="x.exe"),
    run_row("B1", "101.sdb", "alps", [C], ts("00:30:00"), ts("00:45:00"), user="bob",
            command="aprun -n 24 ./y.exe", exe="y.exe"),
    run_row("102.sdb", "102.sdb", "pbs", [DN], ts("02:00:00"), ts("02:30:00"), user="carol"),
    # the day before: Z0 runs across midnight; two earlier runs of A1's command
    run_row("Z0", "99.sdb", "alps", [DN], ts("23:00:00", PREV), ts("00:20:00"), PREV,
            command="aprun ./z.exe", exe="z.exe", user="dave"),
    run_row("H1", "90.sdb", "alps", [C], ts("10:00:00", PREV), ts("10:40:00", PREV), PREV,
            command=X_CMD, exe="x.exe", user="alice"),
    run_row("H2", "91.sdb", "alps", [C], ts("12:00:00", PREV), ts("12:40:00", PREV), PREV,
            command=X_CMD, exe="x.exe", user="alice"),
]

# (app_id, fs, hour) -> counters, by hand from the windows above
EXPECTED = {
    ("A1", "fs2", 0): dict(write_kb=2048.0, write_ops=2, open=5, node_windows=2),
    ("A1", "fs2", 1): dict(write_kb=2048.0, write_ops=2, node_windows=1),
    ("A1", "fs3", 0): dict(write_kb=512.0, write_ops=512, node_windows=1),
    ("B1", "fs2", 0): dict(read_kb=5120.0, read_ops=12, node_windows=2),
    ("Z0", "fs2", 0): dict(open=150, node_windows=2),
    ("102.sdb", "fs2", 2): dict(other=10, node_windows=1),
}


@pytest.fixture(scope="module")
def wh(spark, tmp_path_factory):
    from lassi.core.warehouse import Warehouse

    w = Warehouse(spark, str(tmp_path_factory.mktemp("wh")))
    w.write_rows(NODE_WINDOWS, "node_window")
    w.write_rows(RUNS, "app_run")
    site = load_site("archer", nodes=16)
    build_app_hour(w, site, D)
    build_fs_hour(w, site, D)
    build_run_metrics(w, site, D)
    return w, site


def _value(key: tuple, col: str) -> float:
    return EXPECTED[key].get(col, 0)


def test_app_hour_counters_by_hand(wh):
    w, _ = wh
    rows = {(r.app_id, r.fs, r.hour.hour): r for r in w.read("app_hour", [D]).collect()}
    assert set(rows) == set(EXPECTED)          # the PBS row of job 100 is not a launch
    for key, want in EXPECTED.items():
        for col in [*ALL_COUNTERS, "node_windows"]:
            assert rows[key][col] == want.get(col, 0), (key, col)
    assert rows[("A1", "fs2", 0)]["user"] == "alice"   # taken from the PBS job
    assert rows[("Z0", "fs2", 0)]["exe"] == "z.exe"


def test_baseline_and_risk_by_hand(wh):
    w, site = wh
    base = {(r.fs, r.op): r for r in w.read("fs_baseline", [D]).collect()}
    keys2 = [k for k in EXPECTED if k[1] == "fs2"]
    stats = {}
    for op in ALL_COUNTERS:
        xs = [_value(k, op) for k in keys2]
        mu, sd = statistics.mean(xs), statistics.stdev(xs)
        stats[op] = (mu, sd)
        got = base[("fs2", op)]
        assert got["n"] == 5 and got["mean"] == pytest.approx(mu)
        assert got["std"] == pytest.approx(sd)
        assert got["rsd"] == (pytest.approx(sd / mu) if mu else None)
        assert got["period_start"] == D - dt.timedelta(days=29)
    assert base[("fs3", "write_kb")]["std"] is None      # one app-hour: no deviation

    oss, mds = site.settings.risk.oss_ops, site.settings.risk.mds_ops
    rows = {(r.app_id, r.fs, r.hour.hour): r for r in w.read("app_hour", [D]).collect()}
    for key in keys2:
        r = {op: ((_value(key, op) - 2.0 * mu) / sd if sd > 0 else 0.0)
             for op, (mu, sd) in stats.items()}
        for op in ALL_COUNTERS:
            assert rows[key][f"r_{op}"] == pytest.approx(r[op]), (key, op)
        assert rows[key]["risk_oss"] == pytest.approx(sum(max(r[o], 0) for o in oss))
        assert rows[key]["risk_mds"] == pytest.approx(sum(max(r[o], 0) for o in mds))
    # Z0's opens (150 against a mean of 31 and a deviation of 65.9) are the MDS risk
    assert rows[("Z0", "fs2", 0)]["risk_mds"] == pytest.approx(
        (150 - 2 * 31) / statistics.stdev([5, 0, 0, 150, 0]))
    assert rows[("A1", "fs3", 0)]["risk_oss"] == 0.0
    # ops metrics: ops * 1024 / kB
    assert rows[("A1", "fs2", 0)]["write_kb_ops"] == pytest.approx(1.0)
    assert rows[("A1", "fs3", 0)]["write_kb_ops"] == pytest.approx(1024.0)
    assert rows[("B1", "fs2", 0)]["read_kb_ops"] == pytest.approx(12 * 1024 / 5120)
    assert rows[("B1", "fs2", 0)]["write_kb_ops"] is None


def test_fs_hour_sums(wh):
    w, _ = wh
    ah = w.read("app_hour", [D]).collect()
    fh = {(r.fs, r.hour.hour): r for r in w.read("fs_hour", [D]).collect()}
    assert set(fh) == {("fs2", 0), ("fs2", 1), ("fs2", 2), ("fs3", 0)}
    h0 = [r for r in ah if r.fs == "fs2" and r.hour.hour == 0]
    assert len({(r.app_id, r.fs, r.hour) for r in ah}) == len(ah)   # fs_hour counts rows
    assert fh[("fs2", 0)]["n_apps"] == 3
    assert fh[("fs2", 0)]["write_kb"] == 2048.0 and fh[("fs2", 0)]["open"] == 155
    assert fh[("fs2", 0)]["risk_mds"] == pytest.approx(sum(r.risk_mds for r in h0))
    assert fh[("fs2", 0)]["r_open"] == pytest.approx(sum(max(r.r_open, 0) for r in h0))
    assert fh[("fs2", 0)]["read_kb_ops"] == pytest.approx(12 * 1024 / 5120)


def _runs_with_slowdown(w, dates) -> dict:
    """app_run rows joined to their run_slowdown row (None columns when there is none)."""
    joined = w.read("app_run", dates).join(w.read("run_slowdown", dates),
                                           ["app_id", "source", "date"], "left")
    return {(r.app_id, r.source): r for r in joined.collect()}


def test_slowdown_by_hand(wh):
    w, _ = wh
    runs = _runs_with_slowdown(w, [PREV, D])
    keys = {(r.app_id, r.source, r.date) for r in w.read("run_slowdown", [PREV, D]).collect()}
    assert keys == {("A1", "alps", D), ("B1", "alps", D), ("102.sdb", "pbs", D),
                    ("Z0", "alps", PREV), ("H1", "alps", PREV), ("H2", "alps", PREV)}
    a1 = runs[("A1", "alps")]
    assert a1.runtime_s == 4800.0 and a1.group_runs == 3
    assert a1.group_mean_s == pytest.approx((4800 + 2400 + 2400) / 3)
    assert a1.slowdown == pytest.approx(1.5) and a1.slowed is True     # >= 1.5 flags
    h1 = runs[("H1", "alps")]
    assert h1.slowdown == pytest.approx(0.75) and h1.slowed is False
    assert h1.risk_oss_sum == 0.0                  # no app_hour on the day before
    ah = [r for r in w.read("app_hour", [D]).collect() if r.app_id == "A1"]
    assert a1.risk_oss_sum == pytest.approx(sum(r.risk_oss for r in ah))
    assert a1.risk_mds_sum == pytest.approx(sum(r.risk_mds for r in ah))
    assert runs[("100.sdb", "pbs")].slowdown is None          # a PBS job with apruns: no row
    pbs_only = runs[("102.sdb", "pbs")]
    assert pbs_only.runtime_s == 1800.0 and pbs_only.slowdown is None  # no launch command
    assert runs[("B1", "alps")].group_runs == 1 and runs[("B1", "alps")].slowdown == 1.0

    groups = {r.command: r for r in w.read("run_group", [D]).collect()}
    g = groups[X_CMD]
    assert (g.n_runs, g.n_slowed) == (3, 1)
    assert g.std_runtime_s == pytest.approx(statistics.stdev([4800, 2400, 2400]))
    if a1.risk_oss_sum > 0:
        want = statistics.correlation([4800, 2400, 2400], [a1.risk_oss_sum, 0.0, 0.0])
        assert g.corr_runtime_risk_oss == pytest.approx(want)
    assert groups["aprun -n 24 ./y.exe"].corr_runtime_risk_oss is None   # one run


def _sorted_frame(df):
    """A table as pandas, rows in a fixed order (every column a sort key)."""
    pdf = df.toPandas()
    return pdf.sort_values(list(pdf.columns), key=lambda c: c.astype(str)).reset_index(
        drop=True)


def test_stages_are_idempotent(wh):
    """A rerun gives the same rows. Floating-point sums (μ, σ, the risks) may differ in the
    last bit: Spark adds partial sums in whatever order the tasks finish."""
    import pandas as pd

    w, site = wh
    before = _sorted_frame(w.read("app_hour", [D]))
    slow = _sorted_frame(w.read("run_slowdown", [PREV, D]))
    build_app_hour(w, site, D)
    build_run_metrics(w, site, D)
    pd.testing.assert_frame_equal(_sorted_frame(w.read("app_hour", [D])), before,
                                  check_exact=False, rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(_sorted_frame(w.read("run_slowdown", [PREV, D])), slow,
                                  check_exact=False, rtol=1e-12, atol=1e-12)
    assert w.read("app_run", [PREV, D]).count() == len(RUNS)


def test_a_day_without_input_empties_its_partitions(wh):
    """No captures and no history: the risk stages clear the day (a stale partition from an
    earlier run goes) and write nothing. The day after D has no node windows, but D's
    app_hour is in its baseline period: fs_baseline is still computed from it."""
    from pyspark.sql import functions as F

    from lassi.risk.node_window import build_node_window

    w, site = wh
    early = D - dt.timedelta(days=60)
    for t in ("node_window", "app_hour", "fs_hour"):
        w.write(w.read(t, [D]).withColumn("date", F.lit(early)), t, [early])
    assert build_node_window(w, site, early) == 0
    assert build_app_hour(w, site, early) == 0
    assert build_fs_hour(w, site, early) == 0
    assert not [t for t in ("node_window", "app_hour", "fs_baseline", "fs_hour")
                if w.has(t, early)]
    after = D + dt.timedelta(days=1)
    assert build_app_hour(w, site, after) == 0
    base = w.read("fs_baseline", [after])
    assert base.count() == w.read("fs_baseline", [D]).count() > 0


# A Slurm day: 700.0 crosses midnight (80 min, the day before), 700.1 and 700.2 run the same
# command for 40 min each (group mean 53 min 20 s: 700.0 is slowed, 1.5x), 700.3 runs alone.
SACCT = """JobID|JobName|User|Start|End|NodeList|State|SubmitLine
700|x|alice|2017-10-09T22:00:00|2017-10-10T03:00:00|nid0000[1-2]|COMPLETED|sbatch x.sh
700.0|x.exe||2017-10-09T23:00:00|2017-10-10T00:20:00|nid00001|COMPLETED|srun ./x.exe
700.1|x.exe||2017-10-10T00:30:00|2017-10-10T01:10:00|nid00001|COMPLETED|srun ./x.exe
700.2|x.exe||2017-10-10T01:20:00|2017-10-10T02:00:00|nid00002|COMPLETED|srun ./x.exe
700.3|y.exe||2017-10-10T02:10:00|2017-10-10T02:30:00|nid00002|COMPLETED|srun ./y.exe
"""


def test_reingest_keeps_run_slowdown(spark, tmp_path):
    """app_run belongs to ingest (no analysis columns, on disk either); the slowdown stage
    writes run_slowdown, which re-ingesting the date's scheduler file leaves intact."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.warehouse import Warehouse

    w = Warehouse(spark, str(tmp_path / "wh"))
    site = load_site("archer", nodes=16)
    sacct = tmp_path / "sacct.txt"
    sacct.write_text(SACCT)
    ingest_cols = set(schema_of("app_run").fieldNames())
    analysis = set(schema_of("run_slowdown").fieldNames()) - {"app_id", "source", "date"}
    assert not ingest_cols & analysis

    def on_disk(d):     # the columns of app_run's Parquet files, as ingest wrote them
        return set(spark.read.parquet(w.partition_path("app_run", d)).columns) | {"date"}

    ingest_source(spark, w, site, "slurm", [str(sacct)], tz="UTC")
    assert on_disk(PREV) == on_disk(D) == ingest_cols
    build_run_metrics(w, site, D)
    before = sorted(map(tuple, w.read("run_slowdown", [PREV, D]).collect()))
    got = {(r.app_id, r.date): r for r in w.read("run_slowdown", [PREV, D]).collect()}
    assert set(got) == {("700.0", PREV), ("700.1", D), ("700.2", D), ("700.3", D)}
    assert got[("700.0", PREV)].slowdown == pytest.approx(1.5) and got[("700.0", PREV)].slowed
    assert got[("700.1", D)].group_mean_s == pytest.approx(3200.0)
    assert got[("700.3", D)].slowdown == 1.0

    assert not w.has("ingest_log", D)
    ingest_source(spark, w, site, "slurm", [str(sacct)], date=D, tz="UTC")   # re-ingest D
    assert w.read("ingest_log", [D]).first().lines_used > 0
    assert on_disk(D) == ingest_cols
    assert w.read("app_run", [PREV, D]).count() == 4
    assert sorted(map(tuple, w.read("run_slowdown", [PREV, D]).collect())) == before
    runs = _runs_with_slowdown(w, [PREV, D])
    assert {k: r.slowdown for k, r in runs.items()} == {
        ("700.0", "slurm"): pytest.approx(1.5), ("700.1", "slurm"): pytest.approx(0.75),
        ("700.2", "slurm"): pytest.approx(0.75), ("700.3", "slurm"): 1.0}


def test_a_day_without_commands_or_counters_has_no_slowdown_groups(warehouse):
    """A Beacon site's day: runs whose job log names no launch command and no app_hour in
    the period. The slowdown stage clears its partitions (a stale one goes) without
    computing; once one run has a command it computes again: every run of the day gets a
    row, and the commanded run alone is its group (slowdown 1)."""
    site = load_site("archer")
    runs = [run_row("J1", "J1", "beacon", [A], ts("01:00:00"), ts("02:00:00")),
            run_row("J2", "J2", "beacon", [B], ts("03:00:00"), ts("03:30:00"))]
    warehouse.write_rows(runs, "app_run", [D])
    stale = run_row("S", "S", "beacon", [A], ts("05:00:00"), ts("06:00:00"))
    warehouse.write_rows([{"app_id": "S", "source": "beacon", "runtime_s": 3600.0,
                           "group_runs": None, "group_mean_s": None, "slowdown": None,
                           "slowed": None, "risk_oss_sum": 0.0, "risk_mds_sum": 0.0,
                           "date": D}], "run_slowdown", [D])
    assert warehouse.has("run_slowdown", D)
    msg = build_run_metrics(warehouse, site, D)
    assert msg == "no launch commands and no LASSi counters for the day: no slowdown groups"
    assert not warehouse.has("run_slowdown", D) and not warehouse.has("run_group", D)
    warehouse.write_rows([*runs, {**stale, "command": "./s.exe -n 1"}], "app_run", [D])
    assert build_run_metrics(warehouse, site, D).startswith("1 runs with a slowdown factor")
    got = {r["app_id"]: r for r in warehouse.read("run_slowdown", [D]).collect()}
    assert set(got) == {"J1", "J2", "S"}
    assert got["S"]["slowdown"] == 1.0 and got["J1"]["slowdown"] is None
