"""Ingest a simulated ARCHER day into the warehouse; node_window equals the simulator's truth."""

import collections
import datetime as dt
import json
import shutil

import pandas as pd
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lassi.core.config import load_site
from lassi.core.schemas import ALL_COUNTERS
from lassi.risk.node_window import build_node_window
from tests.conftest import plan_nodes, schema_row

DATE = dt.date(2017, 10, 10)
COLS = ["read_kb", "read_ops", "write_kb", "write_ops", "other", "open", "close", "mknod"]


@pytest.fixture(scope="module")
def day(archer_day, spark, tmp_path_factory):
    """(site, a copy of the shared 4-node ARCHER day's warehouse (conftest.archer_day:
    ingested, every daily stage run), its truth, its ingest's ParseStats)."""
    from lassi.core.warehouse import Warehouse

    site = load_site(archer_day.site_name, nodes=archer_day.nodes)
    root = tmp_path_factory.mktemp("wh") / "wh"
    shutil.copytree(archer_day.warehouse, root)
    wh = Warehouse(spark, str(root))
    return (site, wh, json.loads((archer_day.raw / "truth.json").read_text()),
            archer_day.ingest_stats)


def test_ingest_conserves_lines(day):
    _, wh, truth, stats = day
    assert all(s.conserved and s.lines_quarantined == 0 for s in stats)
    # one ingest_log row per source, written once at the end of the run (writer.Ledger)
    log = {r["source"]: (r["lines_read"], r["rows"]) for r in wh.read("ingest_log", [DATE])
           .collect()}
    assert log == {s.source: (s.lines_read, s.rows) for s in stats}
    assert {"lustre", "pbs", "alps"} <= set(log)
    runs = wh.read("app_run", [DATE])
    started = sum(1 for r in truth["runs"] if r["start"].startswith(DATE.isoformat()))
    assert runs.filter(F.col("source") == "alps").count() == started


def test_a_family_with_nothing_to_do_starts_no_spark_session(day, spark):
    """The Beacon family on an ARCHER day (no Beacon layers) learns that it has nothing to
    do through the warehouse's filesystem alone: a deferred session is never built, so
    `lassi run daily --family beacon` asks a cluster for no executors. A stage with work
    builds it at its first query and writes what it wrote on a started session."""
    from lassi.core.warehouse import Warehouse
    from lassi.pipeline.daily import FAMILIES, run_daily

    site, shared, _, _ = day
    idle = Warehouse(lambda: pytest.fail("a Beacon stage started the Spark session"),
                     shared.root)
    lines = list(run_daily(idle, site, DATE, FAMILIES["beacon"]))
    assert [line.split(":")[0] for line in lines] == FAMILIES["beacon"]
    assert not idle.session_started
    cols = ["fs", "hour", "read_kb", "write_kb", "open", "risk_oss", "risk_mds"]
    before = shared.read("fs_hour", [DATE]).toPandas()[cols].sort_values(["fs", "hour"])
    assert len(before) > 0
    busy = Warehouse(lambda: spark, shared.root)
    assert not busy.session_started
    list(run_daily(busy, site, DATE, ["fs_hour"]))
    assert busy.session_started
    after = busy.read("fs_hour", [DATE]).toPandas()[cols].sort_values(["fs", "hour"])
    pd.testing.assert_frame_equal(before.reset_index(drop=True), after.reset_index(drop=True),
                                  check_exact=False, rtol=1e-12)   # sums in any order


def test_tokio_sources_of_a_simulated_day_conserve_lines(spark, warehouse, tmp_path):
    """The TOKIO sources of a simulated day (LMT, lfs df, lctl dl) and its schedulers
    ingest with every line used and one ingest_log row each (the shared day has none; its
    Lustre captures are left out here, test_ingest_conserves_lines covers them)."""
    from lassi.ingest.runner import ingest_raw

    from lassi.sim.runner import simulate

    site = load_site("archer", nodes=4)
    simulate(site, DATE, 1, 3, tmp_path / "raw")
    shutil.rmtree(tmp_path / "raw" / "lustre")
    stats = ingest_raw(spark, warehouse, site, tmp_path / "raw", DATE)
    assert all(s.conserved and s.lines_quarantined == 0 and s.rows > 0 for s in stats), stats
    log = {r["source"]: (r["lines_read"], r["rows"]) for r in
           warehouse.read("ingest_log", [DATE]).collect()}
    assert log == {s.source: (s.lines_read, s.rows) for s in stats}
    assert {"pbs", "alps", "lmt", "lfs-df", "lctl-dl"} <= set(log), log


@pytest.mark.parametrize("by_target", [False, True])
def test_capture_deltas_plan_no_window_over_the_whole_day(day, by_target):
    """node_window's deltas (and SIOX's per-target ones) window only within partitions: a
    window without one moves every row to one task, and Spark logs "No Partition Defined
    for Window operation!" at every run (56 lines per daily run of the 4-node day before
    session 31). Read from the physical plan's windows."""
    from lassi.core.captures import node_windows

    site, wh, _, _ = day
    plan = json.loads(node_windows(wh, site, DATE, by_target=by_target)._jdf
                      .queryExecution().sparkPlan().toJSON())
    specs = [len(n["partitionSpec"]) for n in plan if n["class"].endswith(".WindowExec")]
    assert specs and min(specs) > 0, specs


@pytest.mark.parametrize("by_target", [False, True])
def test_capture_deltas_read_and_shuffle_the_capture_rows_once(day, by_target):
    """The captures' series values come from one scan of raw_lustre_stats (not one per
    kind of counter: the plan read it nine times before session 51) and are shuffled once,
    by node: their window (per target, node and series) and the sums per node, filesystem
    and window need no other exchange, and the capture slots are broadcast to them. The
    dense ARCHER day's node_window 60-66 -> 33-39 s warm (README, Scale, session 51)."""
    from lassi.core.captures import node_windows

    site, wh, _, _ = day
    nodes = plan_nodes(node_windows(wh, site, DATE, by_target=by_target))
    leaf = next(i for i, n in enumerate(nodes) if n["num-children"] == 0)
    spine = [n["class"].rsplit(".", 1)[1] for n in nodes[:leaf + 1]]   # the rows' own path
    assert spine[-1] == "FileSourceScanExec" and "WindowExec" in spine, spine
    assert spine.count("ShuffleExchangeExec") == 1, spine
    assert "SortMergeJoinExec" not in spine, spine
    scans = [n for n in nodes if n["class"].endswith("FileSourceScanExec")]
    assert len(scans) == 3, len(scans)         # the series values, the site's and servers' slots


def test_node_window_hours_equal_truth(day):
    site, wh, truth, _ = day
    assert build_node_window(wh, site, DATE) > 0
    build_node_window(wh, site, DATE)                       # a rerun replaces, not appends
    got = {r["h"]: r for r in wh.read("node_window", [DATE])
           .groupBy(F.hour("window_start").alias("h")).agg(*[F.sum(c).alias(c) for c in COLS])
           .collect()}
    want: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in truth["runs"]:
        for hour, v in r["lassi_hours"].items():
            if hour.startswith(DATE.isoformat()):
                want[int(hour[11:13])].update({c: v[c] for c in COLS})
    assert sum(w["write_kb"] for w in want.values()) > 0
    for h in range(24):
        for c in COLS:
            assert (got[h][c] if h in got else 0) == want[h][c], (h, c)


def test_node_window_files_hold_their_rows_by_node_then_time(day):
    """Every file of the partition is sorted by (node, window_start): the order the
    attribution join probes in (Spark's partitioned write would drop a sort that does not
    begin with `date`)."""
    import pyarrow.parquet as pq

    site, wh, _, _ = day
    build_node_window(wh, site, DATE)
    files = sorted((wh.local / "node_window" / f"date={DATE}").glob("*.parquet"))
    assert files
    for f in files:
        t = pq.read_table(f, columns=["node", "window_start"]).to_pandas()
        keys = list(zip(t["node"], t["window_start"], strict=True))
        assert len(keys) > 1 and keys == sorted(keys)


def test_app_hour_equals_truth(day):
    """Every (run, filesystem, hour) of the truth with I/O is one app_hour row, exactly."""
    _, wh, truth, _ = day
    got = {(r["app_id"], r["fs"], r["hour"].hour): r for r in wh.read("app_hour", [DATE])
           .select("app_id", "fs", "hour", *ALL_COUNTERS).collect()}
    seen = set()
    for r in truth["runs"]:
        for hour, v in r["lassi_hours"].items():
            if not hour.startswith(DATE.isoformat()) or not any(v[c] for c in ALL_COUNTERS):
                continue
            key = (r["app_id"], r["fs"], int(hour[11:13]))
            seen.add(key)
            assert {c: got[key][c] for c in ALL_COUNTERS} == {c: v[c] for c in ALL_COUNTERS}, key
    assert len(seen) >= 30          # the 4-node day: 39 (run, filesystem, hour) cells
    # other rows are hours whose windows the app's nodes saw with nothing moved: zeros
    assert all(not any(row[c] for c in ALL_COUNTERS) for k, row in got.items() if k not in seen)


def test_aggressors_lead_their_hours(day):
    """In every hour an aggressor runs for at least half of, it has the hour's top risk."""
    _, wh, truth, _ = day
    kind = {r["app_id"]: r["aggressor"] for r in truth["runs"]}
    ah = wh.read("app_hour", [DATE]).select(
        "app_id", "fs", "hour", "n_nodes", "node_windows", "risk_oss", "risk_mds").collect()
    by_hour: dict = collections.defaultdict(list)
    for r in ah:
        by_hour[(r.fs, r.hour)].append(r)
    checked = 0
    for rows in by_hour.values():
        for r in rows:
            agg = kind.get(r.app_id)
            if not agg or r.node_windows < 10 * r.n_nodes:
                continue
            col = f"risk_{agg}"
            top = max(rows, key=lambda x: x[col])
            assert kind.get(top.app_id) == agg and top[col] > 0, (r.app_id, r.hour, col)
            checked += 1
    assert checked >= 4


def test_slowdown_flags_follow_runtime(day):
    """run_slowdown's slowdown = runtime / mean runtime of the same command, from the truth."""
    site, wh, truth, _ = day
    runs = {r.app_id: r for r in wh.read("run_slowdown", [DATE]).filter("source = 'alps'")
            .collect()}
    groups: dict = collections.defaultdict(list)
    for t in truth["runs"]:
        groups[t["command"]].append(t["runtime_s"])
    for t in truth["runs"]:
        if t["app_id"] not in runs or not t["start"].startswith(DATE.isoformat()):
            continue
        mean = sum(groups[t["command"]]) / len(groups[t["command"]])
        got = runs[t["app_id"]]
        assert got.slowdown == pytest.approx(t["runtime_s"] / mean, rel=1e-3)
        assert got.slowed == (t["runtime_s"] >= 1.5 * mean)


def test_lustre_ingest_writes_rows_quarantine_and_log_in_one_pass(spark, warehouse, tmp_path):
    """The executors' rows are written while their accounting is observed; the quarantine
    comes from re-parsing only the files that had bad lines, equal to the line parser's."""
    from lassi.ingest import lustre_stats
    from lassi.ingest.runner import ingest_source

    good = "obdfilter.fs2-OST0000.exports.7@gni.stats=\nsnapshot_time 1507593600.5 secs.usecs\n" \
           "read_bytes 3 samples [bytes] 1 4096 8192\n"
    bad = good + "write_bytes x samples [bytes]\nno snapshot here\n"
    (tmp_path / "oss1").mkdir()
    (tmp_path / "oss2").mkdir()
    (tmp_path / "oss1" / "2017-10-10.txt").write_text(good)
    (tmp_path / "oss2" / "2017-10-10.txt").write_text(bad)
    st = ingest_source(spark, warehouse, load_site("archer", nodes=8), "lustre",
                       [str(tmp_path)], DATE)
    assert (st.files, st.lines_read, st.lines_used, st.lines_quarantined, st.rows) == \
        (2, 8, 6, 2, 2)
    rows = warehouse.read("raw_lustre_stats", [DATE]).collect()
    assert sorted((r["server"], r["node"], r["sum"]) for r in rows) == \
        [("oss1", "nid00007", 8192), ("oss2", "nid00007", 8192)]
    q = warehouse.read("quarantine", [DATE]).collect()
    want = lustre_stats.parse_file(tmp_path / "oss2" / "2017-10-10.txt")[1]
    assert sorted((r["line_no"], r["raw"], r["reason"]) for r in q) == \
        sorted((w.line_no, w.raw, w.reason) for w in want) and len(want) == 2
    log = warehouse.read("ingest_log", [DATE]).collect()
    assert [(r["lines_read"], r["lines_quarantined"]) for r in log] == [(8, 2)]


def test_clean_rerun_clears_the_quarantine_and_a_clean_day_writes_none(spark, warehouse,
                                                                         tmp_path):
    """A clean ingest on a day without quarantine starts no quarantine write; a clean
    rerun of a day that had bad lines removes them."""
    from lassi.ingest.runner import ingest_source

    site = load_site("archer", nodes=8)
    f = tmp_path / "in" / "oss1" / "2017-10-10.txt"       # not beside the warehouse
    f.parent.mkdir(parents=True)
    good = "obdfilter.fs2-OST0000.stats=\nsnapshot_time 1507593600.5 secs.usecs\n" \
           "read_bytes 3 samples [bytes] 1 4096 8192\n"
    f.write_text(good)
    ingest_source(spark, warehouse, site, "lustre", [str(tmp_path / "in")], DATE)
    assert not warehouse.has("quarantine", DATE) and warehouse.has("ingest_log", DATE)
    f.write_text(good + "bad line\n")
    ingest_source(spark, warehouse, site, "lustre", [str(tmp_path / "in")], DATE)
    assert warehouse.read("quarantine", [DATE]).count() == 1
    f.write_text(good)
    ingest_source(spark, warehouse, site, "lustre", [str(tmp_path / "in")], DATE)
    assert warehouse.read("quarantine", [DATE]).count() == 0


def test_a_reconnected_client_counts_from_zero(spark, warehouse, tmp_path):
    """An export block holding only snapshot_time (a client that reconnected: Lustre prints
    no zero counters, and this old Lustre no start_time) is a capture of zeros: the next
    delta is the whole new value, even when it passes the value before the reconnect."""
    from lassi.ingest.runner import ingest_source

    from lassi.core.captures import node_windows

    site = load_site("archer", nodes=8)
    w, t0 = site.window_s, 1507593600                  # 2017-10-10 00:00 UTC
    export = "obdfilter.fs2-OST0000.exports.7@gni.stats="
    reads = [(10, 1 << 20), (20, 2 << 20), None, (30, 3 << 20), (30, 3 << 20)]
    text = []
    for k, r in enumerate(reads):
        text += ["obdfilter.fs2-OST0000.stats=", f"snapshot_time {t0 + k * w}.000001 secs.usecs",
                 "statfs 1 samples [reqs]", export, f"snapshot_time {t0 + k * w}.5 secs.usecs"]
        if r is not None:
            text.append(f"read_bytes {r[0]} samples [bytes] 4096 1048576 {r[1]}")
    (tmp_path / "oss1").mkdir()
    (tmp_path / "oss1" / "2017-10-10.txt").write_text("\n".join(text) + "\n")
    st = ingest_source(spark, warehouse, site, "lustre", [str(tmp_path)], DATE)
    assert st.rows == 5 + 4 + 1                        # targets, counters, one zero marker
    got = sorted((r["window_start"], r["read_kb"], r["read_ops"], r["resets"])
                 for r in node_windows(warehouse, site, DATE).collect()
                 if r["node"] == "nid00007")
    at = [dt.datetime(2017, 10, 10) + dt.timedelta(seconds=k * w) for k in range(4)]
    assert got == [(at[0], 1024.0, 10, 0),             # 1 MiB -> 2 MiB
                   (at[1], 0.0, 0, 2),                 # reconnected: both series reset
                   (at[2], 3072.0, 30, 0),             # from zero, not 3 MiB - 2 MiB
                   (at[3], 0.0, 0, 0)]


def test_launches_sharing_a_node_window_split_it_by_their_seconds(spark, tmp_path):
    """One job's next launch starts on the same nodes in the capture window its previous
    launch ended in: that node-window is split between the two by their seconds in it (1/3
    and 2/3, worked out by hand) in app_hour and in SIOX's export hops, instead of going
    whole to both; every other window, and another job's launch, keep their counters."""
    from lassi.core.captures import register_launch_cells
    from lassi.core.schemas import schema_of
    from lassi.core.sqltext import sql
    from lassi.core.warehouse import Warehouse
    from lassi.risk.metrics import build_app_hour

    site = load_site("archer", nodes=8)
    w = site.window_s                                       # 180 s
    t0 = dt.datetime(2017, 10, 10, 1, 0)
    n0, n1, n2 = site.compute_nodes[:3]
    # A: 01:00:30-01:10:00 on n0, n1; B (same job) 01:10:00-01:20:00 on n0, n1: window
    # 01:09-01:12 holds 60 s of A and 120 s of B. C: another job on n2, 01:00:30-01:20:00.
    wins = [t0 + dt.timedelta(seconds=k * w) for k in range(7)]     # 01:00 .. 01:18
    rows = [schema_row(schema_of("node_window"), node=n, fs="fs2", window_start=ws, window_s=w,
                       **{c: (300.0 if c.endswith("_kb") else 30) for c in ALL_COUNTERS},
                       resets=0, date=DATE)
            for n in (n0, n1, n2) for ws in wins]
    wh = Warehouse(spark, str(tmp_path / "wh"))
    wh.write_rows(rows, "node_window", [DATE])

    def launch(app, job, on, a, b):
        return (app, job, "u1", "p1", "run", "a.out", f"aprun -n {len(on)} ./a.out", on,
                len(on), 24 * len(on), t0 + dt.timedelta(seconds=a),
                t0 + dt.timedelta(seconds=b), 0, "alps", DATE)

    wh.write_rows([launch("A", "7.sdb", [n0, n1], 30, 600),
                   launch("B", "7.sdb", [n0, n1], 600, 1200),
                   launch("C", "8.sdb", [n2], 30, 1200)], "app_run", [DATE])
    assert build_app_hour(wh, site, DATE) > 0
    got = (wh.read("app_hour", [DATE]).groupBy("app_id")
           .agg(F.sum("read_kb").alias("kb"), F.sum("read_ops").alias("ops"),
                F.sum("node_windows").alias("cells"))
           .toPandas().set_index("app_id"))
    # A: windows 01:00-01:06 whole, 01:09 a third; B: 01:09 two thirds, 01:12-01:18 whole
    for app, windows in (("A", 3 + 1 / 3), ("B", 3 + 2 / 3), ("C", 7)):
        per_node = 1 if app == "C" else 2
        assert got.loc[app, "kb"] == pytest.approx(300.0 * windows * per_node, rel=1e-12), app
        assert got.loc[app, "ops"] == round(30 * windows * per_node), app
    assert got.loc[["A", "B"], "kb"].sum() == pytest.approx(300.0 * 7 * 2)
    assert got.loc["A", "cells"] == 8 and got.loc["B", "cells"] == 8   # the shared cell twice

    # SIOX's export hops read the same shares (per target: one OST here)
    register_launch_cells(wh, site, DATE)
    (wh.read("node_window", [DATE]).withColumn("target", F.lit("fs2-OST0000"))
     .createOrReplaceTempView("xp_target_window"))
    hops = (spark.sql(sql("siox/steps/export_hops", md_sum="w.open"))
            .groupBy("app_id").agg(F.sum("read_bytes").alias("b")).toPandas().set_index("app_id"))
    for app, windows, per_node in (("A", 3 + 1 / 3, 2), ("B", 3 + 2 / 3, 2), ("C", 7, 1)):
        assert hops.loc[app, "b"] == pytest.approx(300.0 * 1024 * windows * per_node), app


def test_app_launch_keeps_a_pbs_job_only_where_no_finer_row_shares_its_id(spark):
    """app_launch: ALPS rows are launches and take user, project and job name from their
    PBS job where their own are missing (a non-null one among the job's PBS rows); a
    PBS job is a launch only when no finer row shares its job_id. Worked by hand."""
    from lassi.core.schemas import schema_of
    from lassi.core.sqltext import sql

    t0 = dt.datetime(2017, 10, 10, 1, 0)

    def run(app, job, source, user=None, project=None, name=None):
        return schema_row(schema_of("app_run"), app_id=app, job_id=job, user=user,
                          project=project, job_name=name, nodes=["nid00001"], n_nodes=1,
                          start=t0, end=t0 + dt.timedelta(hours=1), source=source, date=DATE)

    rows = [run("1.sdb", "1.sdb", "pbs", "pu", "pp", "pj"),
            run("a1", "1.sdb", "alps", project="ap"),         # user, name from PBS job 1
            run("a2", "1.sdb", "alps", "au", "ap2", "an"),    # its own all through
            run("2.sdb", "2.sdb", "pbs", "qu", "qp", "qj"),   # no finer row: a launch
            run("4.sdb", "4.sdb", "pbs", None, "rp", None),   # job 4's first PBS row...
            run("4.sdb", "4.sdb", "pbs", "ru", None, None),   # ...and its second
            run("a4", "4.sdb", "alps"),
            run("a5", "5.sdb", "alps", "su")]                  # no PBS job: nothing to take
    spark.createDataFrame(rows, schema_of("app_run")).createOrReplaceTempView("app_run_in")
    launches = spark.sql(sql("risk/steps/app_launch")).collect()
    got = {r.app_id: (r.job_id, r.user, r.project, r.job_name, r.source) for r in launches}
    assert len(launches) == 5                   # one row each, none twice
    assert got == {"a1": ("1.sdb", "pu", "ap", "pj", "alps"),
                   "a2": ("1.sdb", "au", "ap2", "an", "alps"),
                   "2.sdb": ("2.sdb", "qu", "qp", "qj", "pbs"),
                   "a4": ("4.sdb", "ru", "rp", None, "alps"),
                   "a5": ("5.sdb", "su", None, None, "alps")}


# launch_claims' columns, on a day with claims and on one without
CLAIMS_COLUMNS = [("app_id", T.StringType()), ("node", T.StringType()),
                  ("window_start", T.TimestampType()), ("share", T.DoubleType())]


def test_launch_claims_equal_brute_force_on_random_launches(spark, tmp_path):
    """launch_claims (only the cells whose window ranges meet are exploded) equals every
    node-window's claims and shares enumerated in Python, on 60 random launches of 5 nodes
    whose ends often fall in or exactly on the window the next one starts in."""
    import random

    from lassi.core.captures import register_launch_cells
    from lassi.core.schemas import schema_of
    from lassi.core.warehouse import Warehouse

    site = load_site("archer", nodes=8)
    w = site.window_s
    nodes = site.compute_nodes[:5]
    day0 = dt.datetime(2017, 10, 10)
    rng = random.Random(15)
    launches = []
    for k in range(60):
        a = rng.choice([rng.randrange(-3600, 86400), rng.randrange(0, 480) * w])
        b = a + rng.choice([rng.randrange(1, 3 * 3600), w, 2 * w, rng.randrange(1, w)])
        end = None if k % 13 == 0 else day0 + dt.timedelta(seconds=b)
        on = rng.sample(nodes, rng.randint(1, 3))
        launches.append((f"a{k}", f"{k % 7}.sdb", on, day0 + dt.timedelta(seconds=a), end))
    wh = Warehouse(spark, str(tmp_path / "wh"))
    wh.write_rows([schema_row(schema_of("app_run"), app_id=app, job_id=job, user="u",
                              exe="a.out", command="aprun ./a.out", nodes=on, n_nodes=len(on),
                              n_procs=24, start=s, end=e, source="alps", date=DATE)
                   for app, job, on, s, e in launches], "app_run", [DATE])

    day_s, day_e = 0, 86400
    claims = collections.defaultdict(list)         # (node, slot s) -> [(app, weight µs)]
    for app, _, on, s, e in launches:
        t0 = round((s - day0).total_seconds())
        t1 = day_e if e is None else round((e - day0).total_seconds())
        if not (t0 < day_e and t1 > day_s):
            continue
        first = max(t0 // w * w, day_s)
        last = min(-(-t1 // w) * w - w, day_e - w)
        for node in on:
            for slot in range(first, last + 1, w):
                weight = max(min(t1, slot + w) * 10**6 - max(t0, slot) * 10**6, 1)
                claims[node, slot].append((app, weight))
    want = sorted((app, node, slot, weight / sum(x for _, x in held))
                  for (node, slot), held in claims.items() if len(held) > 1
                  for app, weight in held)
    assert len(want) > 20                          # the draw does share windows

    assert register_launch_cells(wh, site, DATE)       # some cells are shared
    assert ([(f.name, f.dataType) for f in spark.table("launch_claims").schema]
            == CLAIMS_COLUMNS)
    got = sorted((r["app_id"], r["node"], round((r["window_start"] - day0).total_seconds()),
                  r["share"]) for r in spark.table("launch_claims").collect())
    assert [g[:3] for g in got] == [x[:3] for x in want]
    assert [g[3] for g in got] == pytest.approx([x[3] for x in want], rel=1e-12)


def test_a_day_whose_launches_share_no_window_plans_no_claims(spark, tmp_path):
    """One job's second launch starts on the same nodes in the hour, but in the window
    after the first one's last: no node-window is claimed twice, so `launch_claims` is an
    empty relation the optimizer prunes (no query of its own), and each launch keeps its
    windows whole in app_hour (counted by hand)."""
    from lassi.core.captures import register_launch_cells
    from lassi.core.schemas import schema_of
    from lassi.core.sqltext import sql
    from lassi.core.warehouse import Warehouse
    from lassi.risk.metrics import build_app_hour, plain_sums, share_sums

    site = load_site("archer", nodes=8)
    w = site.window_s                                       # 180 s
    t0 = dt.datetime(2017, 10, 10, 1, 0)
    n0, n1 = site.compute_nodes[:2]
    wins = [t0 + dt.timedelta(seconds=k * w) for k in range(6)]     # 01:00 .. 01:15
    wh = Warehouse(spark, str(tmp_path / "wh"))
    wh.write_rows([schema_row(schema_of("node_window"), node=n, fs="fs2", window_start=ws,
                              window_s=w, **{c: (300.0 if c.endswith("_kb") else 30)
                                             for c in ALL_COUNTERS}, resets=0, date=DATE)
                   for n in (n0, n1) for ws in wins], "node_window", [DATE])
    # A: 01:00:30-01:08:00 (windows 01:00-01:06), B: 01:09:10-01:18:00 (01:09-01:15)
    wh.write_rows([schema_row(schema_of("app_run"), app_id=app, job_id="7.sdb", user="u1",
                              exe="a.out", command="aprun ./a.out", nodes=[n0, n1], n_nodes=2,
                              n_procs=48, start=t0 + dt.timedelta(seconds=a),
                              end=t0 + dt.timedelta(seconds=b), source="alps", date=DATE)
                   for app, a, b in (("A", 30, 480), ("B", 550, 1080))], "app_run", [DATE])
    assert not register_launch_cells(wh, site, DATE)
    assert spark.table("launch_cells").filter("shared").count() == 0
    claims = spark.table("launch_claims")
    assert [(f.name, f.dataType) for f in claims.schema] == CLAIMS_COLUMNS
    assert claims.count() == 0
    assert "LocalRelation <empty>" in claims._jdf.queryExecution().optimizedPlan().toString()
    # the plain sums of a day without claims equal the share-weighted query's
    wh.read("node_window", [DATE]).createOrReplaceTempView("nw")
    whole = spark.sql(sql("risk/steps/node_counts_whole",
                          counter_sums=plain_sums("w."))).collect()
    weighted = spark.sql(sql("risk/steps/node_counts", share_counters=share_sums())).collect()
    assert len(whole) == 2 and sorted(whole) == sorted(weighted)
    assert build_app_hour(wh, site, DATE) == 2
    got = (wh.read("app_hour", [DATE]).toPandas().set_index("app_id"))
    assert got.loc["A", "read_kb"] == 300.0 * 3 * 2 and got.loc["B", "read_kb"] == 300.0 * 3 * 2
    assert list(got.loc[["A", "B"], "node_windows"]) == [6, 6]
