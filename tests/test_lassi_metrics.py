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

    oss, mds = site.data["risk"]["oss_ops"], site.data["risk"]["mds_ops"]
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
    assert fh[("fs2", 0)]["n_apps"] == 3
    assert fh[("fs2", 0)]["write_kb"] == 2048.0 and fh[("fs2", 0)]["open"] == 155
    assert fh[("fs2", 0)]["risk_mds"] == pytest.approx(sum(r.risk_mds for r in h0))
    assert fh[("fs2", 0)]["r_open"] == pytest.approx(sum(max(r.r_open, 0) for r in h0))
    assert fh[("fs2", 0)]["read_kb_ops"] == pytest.approx(12 * 1024 / 5120)


def test_slowdown_by_hand(wh):
    w, _ = wh
    runs = {(r.app_id, r.source): r for r in w.read("app_run", [PREV, D]).collect()}
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
    assert runs[("100.sdb", "pbs")].slowdown is None          # a PBS job with apruns
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


def test_stages_are_idempotent(wh):
    w, site = wh
    before = sorted(map(tuple, w.read("app_hour", [D]).collect()))
    build_app_hour(w, site, D)
    build_run_metrics(w, site, D)
    assert sorted(map(tuple, w.read("app_hour", [D]).collect())) == before
    assert w.read("app_run", [PREV, D]).count() == len(RUNS)
