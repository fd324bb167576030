"""Beacon stage `interference`: why each abnormal job was slow (Beacon §3.3.1, Fig. 12).

Runs after `io_phase` and `component_anomaly`. For every job of the date in `anomaly`, its
neighbours are the jobs that shared one of its forwarding nodes and did I/O during one of
its abnormal phases (sql/beacon/interference.sql). Each neighbour's interference-prone features
are its run's: N:1 mode, MDOPS above `thresholds.high_mdops`, peak bandwidth at least
`interference.high_bw_fraction` of a forwarding node's peak, peak IOPS at least
`interference.high_iops_fraction` of its peak IOPS; its weight is the load it put on the
shared forwarding nodes during the phases. One cause per abnormal job among N:1, high
MDOPS, high bandwidth, high IOPS, mix, multiple jobs, system anomaly, unknown: a failing
component first, then the features of the neighbours that made at least
`interference.significant_share` of that load (sql/beacon/steps/interference_cause.sql says the
order). Writes `interference`: one row per (abnormal job, neighbour), a job without
neighbours once with a null neighbour.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse

# a forwarding node's peaks when the site has no forwarding layer (TaihuLight's)
FWD_PEAK_BW, FWD_PEAK_IOPS = 2.5e9, 4e4
# the time bucket on which the abnormal phases meet the per-second series: most phases
# last under a minute (median 22 s, longest 18 minutes on the 4,096-node bench day)
BUCKET_S = 60


def _sql_params(site: Site) -> dict[str, float]:
    """The SQL parameters from `site.settings` (`interference:`, thresholds.high_mdops) and
    the forwarding peaks: high_mdops (ops/s), high_bw (bytes/s), high_iops (requests/s), a
    forwarding node's peak_bw and peak_iops, the `significant` share of the neighbours' load
    and the `mdops_weight` of a metadata op in it."""
    conf = site.settings.interference
    fwd = site.data.get("forwarding") or {}      # topology, validated by lassi.core.config
    peak_bw = float(fwd.get("peak_bw", FWD_PEAK_BW))
    peak_iops = float(fwd.get("peak_iops", FWD_PEAK_IOPS))
    return {"high_mdops": site.settings.thresholds.high_mdops,
            "high_bw": conf.high_bw_fraction * peak_bw,
            "high_iops": conf.high_iops_fraction * peak_iops,
            "peak_bw": peak_bw, "peak_iops": peak_iops,
            "significant": conf.significant_share, "mdops_weight": conf.mdops_weight}


def neighbours(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """Per abnormal phase of `date`'s abnormal jobs, the neighbours that did I/O during it
    on a shared forwarding node, with their features and load (sql/beacon/interference.sql;
    its inputs registered as views, `comp` too for the causes)."""
    period = [date - dt.timedelta(days=1), date]
    ab = wh.read("anomaly", [date]).select("job_id", "app")
    ab.createOrReplaceTempView("ab_job")
    (wh.read("io_phase", [date]).where("is_abnormal").join(ab.select("job_id"), "job_id")
     .select("job_id", "phase_no", "start", "end").createOrReplaceTempView("ab_phase"))
    wh.read("job_summary", period).createOrReplaceTempView("js")
    (wh.read("job_timeseries", period).where("layer = 'compute' AND component = '*'")
     .createOrReplaceTempView("jts"))
    wh.read("component_anomaly", period).createOrReplaceTempView("comp")
    return wh.spark.sql(sql("beacon/interference", bucket_us=BUCKET_S * 1_000_000,
                            **_sql_params(site)))


@scoped
def build_interference(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `interference` for the abnormal jobs that started on `date`."""
    if not wh.has("anomaly", date):
        wh.clear("interference", [date])
        return "no abnormal jobs (io_phase found none or has not run)"
    neighbours(wh, site, date).createOrReplaceTempView("nb")
    out = wh.spark.sql(sql("beacon/steps/interference_cause", date=date.isoformat(),
                           **_sql_params(site))).localCheckpoint()
    wh.write(out, "interference", [date])
    causes = (out.select("job_id", "cause").distinct().groupBy("cause").count()
              .orderBy(F.desc("count")).collect())          # at most eight causes
    text = ", ".join(f"{r['cause']} {r['count']}" for r in causes)
    return f"{sum(r['count'] for r in causes)} abnormal jobs: {text or 'none'}"
