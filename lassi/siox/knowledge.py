"""SIOX stage `component_baseline`: the components' knowledge base (SIOX §4.1).

Per day, `component_minute` records what every forwarding node, OST, MDT and MDS did in
each interval (a minute; a capture window for Lustre statistics): bytes and requests
moved, the mean request size (its class), how many clients it served (its load class),
at a forwarding node the LWFS server's mean execution and queueing time of a data request
and its queue length, and at an OST its clients' mean wait per RPC (where the Lustre
client layer reports it) with the OST's utilisation class (that wait grows with it).
`component_baseline` then holds, per component, metric (bw, iops, md_ops, exe_s, wait_s,
rpc_s), request-size class and load class (rpc_s: utilisation class), the 10th/50th/90th
percentiles and the mean over the busy intervals of the baseline period (`baseline_days`
ending with the date) outside the component's own anomaly windows (component_anomaly,
system rule): what the component normally achieves at that load, the yardstick a job's
causal path is measured against. OSTs' rpc_s is pooled per file system (`<fs>-OST*`), the
forwarding nodes' exe_s / wait_s also over all of them (`FWD_POOL`), so that one component
slow for long cannot become its own normal. Both are rewritten per date.

Observations come from the Beacon layers per minute (raw_ost, raw_lustre_client,
raw_lwfs_server, raw_mds) and, per capture window, from the OSTs' and MDTs' own Lustre
statistics with their exports as clients (raw_lustre_stats). SQL:
sql/siox/component_minute.sql, siox/steps/lwfs_minute.sql,
siox/steps/lustre_target_window.sql, siox/component_baseline.sql.
"""

from __future__ import annotations

import datetime as dt
import math

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.period import MAX_RUN_DAYS, day_bounds, minute_bounds
from lassi.core.schemas import LOAD_CLASSES, REQUEST_SIZE_EDGES, REQUEST_SIZE_LABELS, UTIL_CLASSES
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, days

INPUTS = ("raw_ost", "raw_lustre_client", "raw_lwfs_server", "raw_mds", "raw_lustre_stats")


def bucket_mids(edges: list[float]) -> list[float]:
    """A representative value per latency bucket [edge_i, edge_i+1): the geometric middle,
    half the upper edge for a bucket starting at 0, twice the lower edge for the last."""
    out = []
    for lo, hi in zip(edges, [*edges[1:], None], strict=True):
        if hi is None:
            out.append(2.0 * lo)
        else:
            out.append(hi / 2.0 if lo <= 0 else math.sqrt(lo * hi))
    return out


def size_class_sql(size: str) -> str:
    """CASE expression: the REQUEST_SIZE_LABELS label of the byte count `size`."""
    cases = [f"WHEN {size} < {hi} THEN '{lab}'"
             for hi, lab in zip(REQUEST_SIZE_EDGES[1:], REQUEST_SIZE_LABELS, strict=False)]
    return f"CASE {' '.join(cases)} ELSE '{REQUEST_SIZE_LABELS[-1]}' END"


def load_class_sql(clients: str) -> str:
    """CASE expression: the LOAD_CLASSES label of a client count (0 counts as the lowest)."""
    cases = [f"WHEN {clients} >= {lo} THEN '{lab}'" for lo, lab in reversed(LOAD_CLASSES)]
    return f"CASE {' '.join(cases)} ELSE '{LOAD_CLASSES[0][1]}' END"


def util_class_sql(util: str) -> str:
    """CASE expression: the UTIL_CLASSES label of a utilisation (null stays null)."""
    cases = [f"WHEN {util} >= {lo} THEN '{lab}'" for lo, lab in reversed(UTIL_CLASSES)]
    return f"CASE {' '.join(cases)} END"


def ost_pool_sql(component: str) -> str:
    """SQL: the pool an OST's rpc_s baseline is kept under, `<fs>-OST*` (null for other
    components), used where the knowledge base is written and where it is read."""
    return (f"CASE WHEN {component} LIKE '%-OST%' "
            f"THEN concat(regexp_extract({component}, '^(.*)-OST', 1), '-OST*') END")


FWD_POOL = "fwd*"
"""The component name under which component_baseline pools the forwarding nodes' LWFS
execution and queueing times (component_state reads it before a node's own)."""


def has_observations(wh: Warehouse, date: dt.date) -> bool:
    """Does `date` hold any layer the knowledge base observes?"""
    return any(wh.has(t, date) for t in INPUTS)


def register_inputs(wh: Warehouse, site: Site, date: dt.date) -> None:
    """The views component_minute.sql reads, over the day's raw layers."""
    spark = wh.spark
    first, last = minute_bounds(date)
    wh.read("raw_ost", [date]).createOrReplaceTempView("cm_ost")
    wh.read("raw_lustre_client", [date]).createOrReplaceTempView("lustre_client")
    spark.sql(sql("beacon/steps/fwd_ost_minute")).createOrReplaceTempView("cm_fwd_ost")
    wh.read("raw_lwfs_server", [date]).createOrReplaceTempView("cm_lwfs")
    mids = "array(" + ", ".join(f"CAST({m!r} AS DOUBLE)"
                                for m in bucket_mids(list(site.settings.latency_buckets_s))) + ")"
    spark.sql(sql("siox/steps/lwfs_minute", bucket_mid=mids, day_start=first,
                  last_minute=last)).createOrReplaceTempView("cm_lwfs_minute")
    wh.read("raw_mds", [date]).createOrReplaceTempView("mds")
    spark.sql(sql("beacon/steps/mds_minute")).createOrReplaceTempView("cm_mds_minute")
    wh.read("app_run", days(date - dt.timedelta(days=MAX_RUN_DAYS), date)) \
        .createOrReplaceTempView("cm_runs")
    wh.read("fwd_map", [date]).createOrReplaceTempView("cm_fwd_map")
    (wh.read("path_component", [date]).filter("kind = 'ost'")
     .selectExpr("component AS ost", "peak_bw", "peak_iops").createOrReplaceTempView("cm_peaks"))
    start, end = day_bounds(date)
    (wh.read("raw_lustre_stats", [date, date + dt.timedelta(days=1)])
     .filter(F.col("kind").isin("export", "target"))
     .filter(F.col("snapshot_time") < F.timestamp_seconds(F.lit(end + site.window_s)))
     .createOrReplaceTempView("cm_capture"))
    spark.sql(sql("siox/steps/lustre_target_window", window_s=site.window_s, day_start=start,
                  day_end=end)).createOrReplaceTempView("cm_targets")


def component_minute(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """component_minute rows of `date` (registers its input views)."""
    register_inputs(wh, site, date)
    first, last = minute_bounds(date)
    size = "(rb + wb) / (ro + wo)"
    return wh.spark.sql(sql("siox/component_minute", size_class=size_class_sql(size),
                            load_class=load_class_sql("clients"),
                            util_class=util_class_sql("util"), window_s=site.window_s,
                            day_start=first, last_minute=last, date=date.isoformat()))


def component_baseline(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """component_baseline rows of `date` from component_minute of its baseline period."""
    first, last = site.settings.baseline_period(date)
    wh.read("component_minute", days(first, last)).createOrReplaceTempView("cb_minutes")
    (wh.read("component_anomaly", days(first, last)).filter("rule = 'system'")
     .createOrReplaceTempView("cb_anomaly"))
    return wh.spark.sql(sql("siox/component_baseline", ost_pool=ost_pool_sql("component"),
                            fwd_pool=FWD_POOL,
                            period_start=first.isoformat(),
                            period_end=last.isoformat(), date=date.isoformat()))


@scoped
def build_component_baseline(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `component_baseline`: component_minute of `date`, then the knowledge base over
    the baseline period ending with it; a one-line summary."""
    if not has_observations(wh, date):
        wh.clear("component_minute", [date])
        wh.clear("component_baseline", [date])
        return "no forwarding-node, OST or MDS observations for the day"
    minutes = component_minute(wh, site, date).localCheckpoint()
    wh.write(minutes, "component_minute", [date])
    base = component_baseline(wh, site, date).localCheckpoint()
    wh.write(base, "component_baseline", [date])
    n = minutes.selectExpr("count(DISTINCT component) AS c", "count(*) AS m").first()
    return (f"{n['m']} component-minutes of {n['c']} components; "
            f"{base.count()} baseline rows")
