"""Ingest a simulated ARCHER day into the warehouse; node_window equals the simulator's truth."""

import collections
import datetime as dt
import json

import pytest
from pyspark.sql import functions as F

from ingest.runner import ingest_raw
from lassi.config import load_site
from lassi.node_window import build_node_window
from lassi.sim.runner import simulate

DATE = dt.date(2017, 10, 10)
COLS = ["read_kb", "read_ops", "write_kb", "write_ops", "other", "open", "close", "mknod"]


@pytest.fixture(scope="module")
def day(spark, tmp_path_factory):
    from lassi.warehouse import Warehouse

    site = load_site("archer", nodes=32)
    raw = tmp_path_factory.mktemp("raw")
    simulate(site, DATE, 1, 11, raw)
    wh = Warehouse(spark, str(tmp_path_factory.mktemp("wh")))
    stats = ingest_raw(spark, wh, site, raw, DATE)
    return site, wh, json.loads((raw / "truth.json").read_text()), stats


def test_ingest_conserves_lines(day):
    _, wh, truth, stats = day
    assert all(s.conserved and s.lines_quarantined == 0 for s in stats)
    runs = wh.read("app_run", [DATE])
    started = sum(1 for r in truth["runs"] if r["start"].startswith(DATE.isoformat()))
    assert runs.filter(F.col("source") == "alps").count() == started


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
