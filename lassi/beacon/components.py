"""Beacon stage `component_anomaly`: failing forwarding nodes and OSTs (issue #5, item 4).

Beacon §4.3.3-4.3.4 (Table 2, Figs. 14-15) finds components that are alive but slow in two
ways; both write rows of `component_anomaly` for the date (SQL in sql/component_*.sql):

- rule `system`: a component whose largest bandwidth in every minute stays under
  `anomaly_peak_fraction` (0.3) x its known peak for at least `anomaly_min_minutes` (60)
  while it is asked to serve. Per component and minute (a sample belongs to the minute of
  its interval's midpoint, as in the system views):

  * forwarding node: bandwidth = the largest Lustre client sample (bytes summed over the
    node's OSTs / interval, sql/beacon/steps/component_fwd_minute.sql); it serves when its
    LWFS server handled Read/Write requests in the minute; the demand evidence is the LWFS
    server queue: on average at least FWD_MIN_QUEUE (1) request waiting in the minute. A lightly
    used node serves every request at once, its queue stays empty: low bandwidth there is
    low demand, not low capability.
  * OST: bandwidth and peak from sql/beacon/view_ost_util.sql (the system view, reused); it
    serves when it moved bytes in the minute; the demand evidence
    (sql/beacon/steps/component_ost_minute.sql) is that every sample of the minute moved
    bytes (the OST never went idle, so requests were waiting all the time), or that at least
    OST_CEILING_SAMPLES (2) of its samples ran at its ceiling — within 5 % of its fastest
    sample of the surrounding hour: a capped OST serves every burst at the same rate even
    when it goes idle between bursts (a lightly used one at a site of small jobs), while
    one limited by its clients' demand follows that varying demand. The OST counters have
    no queue or latency, and comparing an OST's bandwidth with the OSTs serving the same
    jobs does not work: a job progresses at the pace of its slowest target, so its healthy
    OSTs serve it no faster than the slow one (the simulator shows exactly that).

  A serving minute with bandwidth >= the threshold is `high` (the component showed it can
  serve), a low serving minute with demand evidence is `low`; other minutes give no
  verdict. Gaps and islands (window functions, sql/beacon/steps/component_islands.sql): a
  run of `low` minutes with no `high` minute between them and no gap longer than MAX_GAP_MIN (15)
  minutes is an anomaly when it lasts >= anomaly_min_minutes (first low minute to the end
  of the last). Consequences are dropped (sql/beacon/steps/component_system.sql): a slow component
  throttles the jobs using it, whose other components then serve little although their
  clients queue. An island covered by another component's island is attributed to that
  one when the other began CONSEQUENCE_LEAD_MIN (10) minutes or more earlier, or is of the
  same kind and clearly slower (90th percentile of the bandwidth fraction over the low
  minutes < CONSEQUENCE_SLOWER (0.8) x its own: the slow one is pinned under its reduced
  capacity, a victim reaches higher whenever its jobs' demand comes back), or is of the
  other kind and carried at least CONSEQUENCE_SHARE (0.5) of its traffic meanwhile
  (forwarding node -> OST bytes of sql/beacon/steps/fwd_ost_minute.sql, reused) — unless it explains
  the other in turn (then both stay).
  `ongoing`: the island reaches the last MAX_GAP_MIN minutes of the day; summaries and
  alerts (the next stage, `alerts`: lassi.beacon.alerts) join it with the next day's
  island of the component that starts at 00:00 (sql/beacon/steps/component_chains.sql).

- rule `straggler`: within each job of at least `large_job_nodes` nodes, DBSCAN
  (`thresholds.dbscan_straggler` eps / min_samples, applyInPandas per job) over the
  bandwidth its forwarding nodes and, separately, its OSTs gave it, as log2(rate / the
  layer's median). The rate is per forwarding-node/OST pair
  (sql/beacon/steps/component_straggler_input.sql): the job's bytes through each pair over
  the seconds of the Lustre-client samples (about 10 s) that moved them, and per component the
  median over its main pairs (>= STRAGGLER_MAIN_PAIR_FRACTION (0.2) x
  the bytes of its largest pair). An OST's rate for a job grows with the number of the
  job's forwarding nodes that feed it, and another job's traffic that the per-minute job
  shares attribute to this one adds small pairs: per pair, peers compare. Only components
  that carried at least STRAGGLER_MIN_BYTES_SHARE (0.5) x the layer's median bytes of the
  job take part: a slow component still moves its whole share of the job's data, one with
  a small part is not a peer. (A job without Lustre-client samples uses the component's
  own bandwidth from job_timeseries.) A noise point whose rate is below
  STRAGGLER_MAX_RATIO (0.5) x the median of the largest cluster is a
  straggler; `est_slowdown` = that median / its rate (the job's I/O through it took that
  many times longer than through its peers). Consequences are dropped: a slow forwarding
  node delays the job's data on the OSTs it feeds, a slow OST the forwarding nodes
  feeding it; a straggler that moved >= STRAGGLER_CONSEQUENCE_SHARE (0.5) of its bytes
  over the job's minutes to or from stragglers of the other layer of the same job
  (forwarding node -> OST traffic, sql/beacon/steps/fwd_ost_minute.sql) is attributed to
  them, unless it explains one of them in turn (then both stay).

`component_anomaly_summary` counts the joined system anomalies per kind in the paper's
Table 2 duration buckets. The alerts these anomalies call for are the next stage's
(`alerts`, lassi.beacon.alerts). Thresholds: `site.settings.thresholds`.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lassi.beacon import system_views as sv
from lassi.core.config import Site
from lassi.core.frames import empty_frame
from lassi.core.gc_tuning import frozen_imports
from lassi.core.schemas import COMPONENT_ANOMALY
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, as_date, days

FWD_MIN_QUEUE = 1.0            # LWFS requests waiting on average: demand evidence
MAX_GAP_MIN = 15               # minutes without a verdict an anomaly bridges
CONSEQUENCE_LEAD_MIN = 10      # a later island inside an earlier one is its consequence
CONSEQUENCE_SLOWER = 0.8       # ... so is one inside a clearly slower island of its kind
CONSEQUENCE_SHARE = 0.5        # ... or inside one of the other kind that carried its traffic
OST_CEILING_SAMPLES = 2         # OST demand evidence: busy samples at its hour's ceiling
OST_PRESSURED = f"(busy_samples = samples OR ceiling_samples >= {OST_CEILING_SAMPLES!r})"
STRAGGLER_MAX_RATIO = 0.5      # straggler: bandwidth below this x its peers' median
STRAGGLER_ACTIVE_FRACTION = 0.2    # busy sample: >= this x the component's busiest (job)
STRAGGLER_CONSEQUENCE_SHARE = 0.5  # traffic share with the other layer's stragglers
STRAGGLER_MIN_BYTES_SHARE = 0.5    # peers: components with >= this x the layer's median bytes
STRAGGLER_MAIN_PAIR_FRACTION = 0.2  # a component's main pairs: >= this x its largest's bytes
# the paper's Table 2 buckets (hours): [lo, hi), None = open
TABLE2_BUCKETS: tuple[tuple[str, float, float | None], ...] = (
    ("(0, 1) h", 0.0, 1.0), ("[1, 4) h", 1.0, 4.0), ("[4, 12) h", 4.0, 12.0),
    ("[12, 96) h", 12.0, 96.0), (">= 96 h", 96.0, None),
)

_STRAGGLER_OUT = StructType([
    StructField("job_id", StringType(), False), StructField("kind", StringType(), False),
    StructField("component", StringType(), False), StructField("start", TimestampType()),
    StructField("end", TimestampType()), StructField("minutes", IntegerType()),
    StructField("bw", DoubleType()), StructField("max_bw", DoubleType()),
    StructField("peak_bw", DoubleType()), StructField("peer_bw", DoubleType()),
    StructField("peers", IntegerType()), StructField("per_pair", BooleanType()),
])


def _day_end(date: dt.date) -> str:
    return f"{dt.datetime.combine(date + dt.timedelta(days=1), dt.time()):%Y-%m-%d %H:%M:%S}"


# --- system rule ------------------------------------------------------------------------


def component_minutes(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """View `cmp_minute`: per component and minute its bandwidth, peak and verdict inputs."""
    spark = wh.spark
    have = sv.register_inputs(wh, site, date)
    p = sv._day_params(date)
    parts = []
    if have["raw_lustre_client"] or have["raw_lwfs_server"]:
        spark.sql(sql("beacon/steps/component_fwd_minute", **p)).createOrReplaceTempView("cmp_fwd")
        parts.append("SELECT kind, component, minute, max_bw, peak_bw, requests > 0 AS serving, "
                     f"COALESCE(queue_avg, 0) >= {FWD_MIN_QUEUE!r} AS pressured, "
                     "queue_avg AS evidence_value FROM cmp_fwd")
    if have["raw_ost"]:
        spark.sql(sql("beacon/view_ost_util", **p)).createOrReplaceTempView("cmp_ost_util")
        spark.sql(sql("beacon/steps/component_ost_minute", **p)).createOrReplaceTempView("cmp_ost")
        parts.append("SELECT kind, component, minute, max_bw, peak_bw, bytes > 0 AS serving, "
                     f"{OST_PRESSURED} AS pressured, "
                     "CAST(busy_samples AS DOUBLE) AS evidence_value FROM cmp_ost")
    if not parts:
        parts.append("SELECT CAST(NULL AS STRING) AS kind, CAST(NULL AS STRING) AS component, "
                     "CAST(NULL AS TIMESTAMP) AS minute, CAST(NULL AS DOUBLE) AS max_bw, "
                     "CAST(NULL AS DOUBLE) AS peak_bw, FALSE AS serving, FALSE AS pressured, "
                     "CAST(NULL AS DOUBLE) AS evidence_value WHERE FALSE")
    df = spark.sql(" UNION ALL ".join(parts))
    df.createOrReplaceTempView("cmp_minute")
    return df


def system_anomalies(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """The day's system-rule rows of component_anomaly (COMPONENT_ANOMALY columns)."""
    date = as_date(date)
    th = site.settings.thresholds
    spark = wh.spark
    component_minutes(wh, site, date)
    islands = spark.sql(sql("beacon/steps/component_islands",
                            fraction=repr(th.anomaly_peak_fraction),
                            min_minutes=th.anomaly_min_minutes, max_gap=MAX_GAP_MIN,
                            day_end=_day_end(date), date=date.isoformat())).localCheckpoint()
    islands.createOrReplaceTempView("cmp_islands")
    spark.table("sv_client").createOrReplaceTempView("lustre_client")
    spark.sql(sql("beacon/steps/fwd_ost_minute")).createOrReplaceTempView("cmp_fwd_ost")
    return spark.sql(sql("beacon/steps/component_system", lead=CONSEQUENCE_LEAD_MIN,
                         max_gap=MAX_GAP_MIN, slower=repr(CONSEQUENCE_SLOWER),
                         min_share=repr(CONSEQUENCE_SHARE), date=date.isoformat()))


# --- stragglers -------------------------------------------------------------------------


def _dbscan_stragglers(eps: float, min_samples: int):
    """The per-job applyInPandas function: straggler rows of one job (both layers)."""

    def find(pdf: pd.DataFrame) -> pd.DataFrame:
        from sklearn.cluster import DBSCAN

        out = []
        for _kind, g in pdf.groupby("kind"):
            g = g[g["bw"] > 0]
            if len(g):      # a straggler is slow, not small: it carries its full share
                g = g[g["bytes"] >= STRAGGLER_MIN_BYTES_SHARE * float(np.median(g["bytes"]))]
            if len(g) < min_samples + 1:
                continue
            # per pair where the job has Lustre-client samples, else the component's own
            per_pair = g["pair_bw"].notna().all()
            rate = (g["pair_bw"] if per_pair else g["bw"]).to_numpy(dtype=float)
            if (rate <= 0).any():
                continue
            x = np.log2(rate / float(np.median(rate))).reshape(-1, 1)
            labels = DBSCAN(eps=eps, min_samples=min_samples).fit(x).labels_
            clustered = labels[labels >= 0]
            if len(clustered) == 0:
                continue
            major = np.bincount(clustered).argmax()
            peer = float(np.median(rate[labels == major]))
            slow = (labels == -1) & (rate < STRAGGLER_MAX_RATIO * peer)
            for i in np.flatnonzero(slow):
                r = g.iloc[i]
                out.append({"job_id": r["job_id"], "kind": r["kind"],
                            "component": r["component"], "start": r["start"],
                            "end": r["end"], "minutes": int(r["minutes"]),
                            "bw": float(rate[i]), "max_bw": float(r["max_bw"]),
                            "peak_bw": None if pd.isna(r["peak_bw"]) else float(r["peak_bw"]),
                            "peer_bw": peer, "peers": int((labels == major).sum()),
                            "per_pair": bool(per_pair)})
        return pd.DataFrame(out, columns=_STRAGGLER_OUT.fieldNames())

    return find


def _register_peaks(wh: Warehouse, site: Site) -> None:
    """View `cmp_peaks` (kind, component, peak_bw); needs system_views.register_inputs."""
    wh.spark.sql(
        "SELECT 'fwd' AS kind, fwd AS component, MAX(fwd_peak_bw) AS peak_bw FROM sv_fwds "
        "GROUP BY fwd UNION ALL "
        "SELECT 'ost', m.ost, MAX(COALESCE(m.ost_peak_bw, f.ost_peak_bw)) FROM sv_ost_map m "
        "LEFT JOIN sv_site_fs f ON m.fs = f.fs GROUP BY m.ost"
    ).createOrReplaceTempView("cmp_peaks_known")
    fs_peaks = [(f"{f.name}-", f.ost_peak_bw) for f in site.filesystems]
    cases = " ".join(f"WHEN startswith(component, '{pre}') THEN {peak!r}"
                     for pre, peak in fs_peaks)
    fwd_peak = repr(site.fwd_peak_bw) if site.has_forwarding else "NULL"
    # components of the job data without a map row: the site's peaks
    wh.spark.sql(
        "SELECT kind, component, MAX(peak_bw) AS peak_bw FROM ("
        "SELECT kind, component, peak_bw FROM cmp_peaks_known UNION ALL "
        "SELECT DISTINCT CASE layer WHEN 'forwarding' THEN 'fwd' ELSE 'ost' END, component, "
        f"CASE WHEN layer = 'forwarding' THEN CAST({fwd_peak} AS DOUBLE) "
        f"ELSE CAST(CASE {cases} END AS DOUBLE) END "
        "FROM cmp_ts WHERE layer IN ('forwarding', 'ost')) GROUP BY kind, component"
    ).createOrReplaceTempView("cmp_peaks")


def stragglers(wh: Warehouse, site: Site, date: dt.date) -> DataFrame:
    """The day's straggler rows of component_anomaly (jobs started on `date`)."""
    date = as_date(date)
    th = site.settings.thresholds
    spark = wh.spark
    if not (wh.has("job_summary", date) and wh.has("job_timeseries", date)):
        return empty_frame(spark, COMPONENT_ANOMALY)
    sv.register_inputs(wh, site, date)
    wh.read("job_summary", date).createOrReplaceTempView("cmp_jobs")
    wh.read("job_timeseries", date).createOrReplaceTempView("cmp_ts")
    _register_peaks(wh, site)
    per = spark.sql(sql("beacon/steps/component_straggler_input",
                        large_job_nodes=th.large_job_nodes,
                        active_fraction=repr(STRAGGLER_ACTIVE_FRACTION),
                        main_pair_fraction=repr(STRAGGLER_MAIN_PAIR_FRACTION)))
    found = per.groupBy("job_id").applyInPandas(
        frozen_imports(_dbscan_stragglers(th.dbscan_straggler.eps,
                                          th.dbscan_straggler.min_samples)),
        _STRAGGLER_OUT).localCheckpoint()
    found.createOrReplaceTempView("cmp_cand")
    _drop_consequences(wh, found).createOrReplaceTempView("cmp_stragglers")
    return spark.sql(f"""
        SELECT kind, component, 'straggler' AS rule, job_id, start, `end`,
               CAST((unix_timestamp(`end`) - unix_timestamp(start)) / 60 AS INT) AS duration_min,
               CASE WHEN peak_bw > 0 THEN max_bw / peak_bw END AS max_bw_fraction, peak_bw,
               format_string('%.3g MB/s%s vs %.3g MB/s median of %d peer %s over %d minutes',
                             bw / 1e6, IF(per_pair, ' per forwarding-node/OST pair', ''),
                             peer_bw / 1e6, peers,
                             CASE kind WHEN 'fwd' THEN 'forwarding nodes' ELSE 'OSTs' END,
                             minutes) AS evidence,
               peer_bw / bw AS est_slowdown, FALSE AS ongoing, DATE '{date.isoformat()}' AS date
        FROM cmp_stragglers""")


def _straggler_shares(wh: Warehouse) -> DataFrame:
    """Per candidate (view `cmp_cand`): its bytes over the job's minutes with the job's
    components of the other layer (`total`) and with the other layer's candidates of the
    job (`via`), from forwarding node -> OST traffic (needs views cmp_ts, sv_client)."""
    spark = wh.spark
    spark.table("sv_client").createOrReplaceTempView("lustre_client")
    spark.sql(sql("beacon/steps/fwd_ost_minute")).createOrReplaceTempView("cmp_fwd_ost")
    return spark.sql("""
        WITH jm AS (
          SELECT DISTINCT t.job_id,
                 CASE t.layer WHEN 'forwarding' THEN 'fwd' ELSE 'ost' END AS kind,
                 t.component, t.ts AS minute
          FROM cmp_ts t JOIN (SELECT DISTINCT job_id FROM cmp_cand) j ON t.job_id = j.job_id
          WHERE t.layer IN ('forwarding', 'ost') AND t.read_bytes + t.write_bytes > 0),
        pair AS (   -- candidate, minute, the other-layer component, bytes between them
          SELECT c.job_id, c.kind, c.component, o.component AS other,
                 f.read_bytes + f.write_bytes AS b
          FROM cmp_cand c
          JOIN jm ON jm.job_id = c.job_id AND jm.kind = c.kind AND jm.component = c.component
          JOIN cmp_fwd_ost f ON f.minute = jm.minute
               AND ((c.kind = 'fwd' AND f.fwd = c.component)
                    OR (c.kind = 'ost' AND f.ost = c.component))
          JOIN (SELECT DISTINCT job_id, kind, component FROM jm) o
               ON o.job_id = c.job_id AND o.kind <> c.kind
               AND o.component = CASE c.kind WHEN 'fwd' THEN f.ost ELSE f.fwd END)
        SELECT p.job_id, p.kind, p.component, p.other, SUM(p.b) AS b
        FROM pair p GROUP BY p.job_id, p.kind, p.component, p.other""")


def _drop_consequences(wh: Warehouse, found: DataFrame) -> DataFrame:
    """The candidates that are not consequences of the other layer's stragglers."""
    cand = found.toPandas()
    if cand.empty or cand["kind"].nunique() < 2:
        return found
    shares = _straggler_shares(wh).toPandas()
    keys = set(zip(cand["job_id"], cand["kind"], cand["component"], strict=True))
    other = {"fwd": "ost", "ost": "fwd"}
    explains: dict[tuple, set] = {}     # candidate -> the candidates it is explained by
    for (job, kind, comp), g in shares.groupby(["job_id", "kind", "component"]):
        total = float(g["b"].sum())
        strag = g[[(job, other[kind], o) in keys for o in g["other"]]]
        if total > 0 and float(strag["b"].sum()) >= STRAGGLER_CONSEQUENCE_SHARE * total:
            explains[(job, kind, comp)] = {(job, other[kind], o) for o in strag["other"]}
    drop = {k for k, by in explains.items()
            if not any(k in explains.get(b, set()) for b in by)}
    if not drop:
        return found
    keep = cand[[k not in drop for k in zip(cand["job_id"], cand["kind"], cand["component"],
                                            strict=True)]]
    return wh.spark.createDataFrame(keep, _STRAGGLER_OUT)


# --- the stage --------------------------------------------------------------------------


@scoped
def build_component_anomaly(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `component_anomaly`: write the date's system and straggler anomalies; returns a
    one-line summary. (Their alerts: the next stage, `alerts`.)"""
    date = as_date(date)
    if not sv.has_beacon_data(wh, date):
        wh.clear("component_anomaly", [date])
        return "no Beacon data for the day"
    rows = system_anomalies(wh, site, date).localCheckpoint()
    strag = stragglers(wh, site, date).localCheckpoint()
    wh.write(rows.unionByName(strag), "component_anomaly", [date])
    n = wh.read("component_anomaly", date).selectExpr(
        "count_if(rule = 'system' AND kind = 'fwd') AS fwd",
        "count_if(rule = 'system' AND kind = 'ost') AS ost",
        "count_if(rule = 'straggler') AS strag",
        "count(DISTINCT CASE WHEN rule = 'straggler' THEN job_id END) AS jobs").first()
    return (f"{n['fwd']} forwarding-node and {n['ost']} OST anomalies, {n['strag']} stragglers "
            f"in {n['jobs']} large jobs")


# --- history ------------------------------------------------------------------------------


def joined_anomalies(wh: Warehouse, first: dt.date, last: dt.date) -> DataFrame:
    """System-rule anomalies of [first, last] with the pieces of one anomaly that crosses
    midnight joined (columns of sql/beacon/steps/component_chains.sql)."""
    first, last = as_date(first), as_date(last)
    wh.read("component_anomaly", days(first, last)).filter("rule = 'system'") \
        .createOrReplaceTempView("cmp_hist")
    return wh.spark.sql(sql("beacon/steps/component_chains", max_gap=MAX_GAP_MIN))


def component_anomaly_summary(wh: Warehouse, first: dt.date, last: dt.date) -> pd.DataFrame:
    """Beacon Table 2: joined system anomalies of [first, last] per duration bucket and kind
    (columns bucket, fwd, ost; one row per TABLE2_BUCKETS entry, in order)."""
    chains = joined_anomalies(wh, first, last)
    whens = " ".join(
        f"WHEN duration_min >= {lo * 60!r}" + (f" AND duration_min < {hi * 60!r}" if hi else "")
        + f" THEN {i}" for i, (_, lo, hi) in enumerate(TABLE2_BUCKETS))
    counts = (chains.selectExpr("kind", f"CASE {whens} END AS b")
              .groupBy("b").pivot("kind", ["fwd", "ost"]).count().toPandas())
    got = {int(r["b"]): r for _, r in counts.iterrows() if not pd.isna(r["b"])}
    rows = []
    for i, (label, _, _) in enumerate(TABLE2_BUCKETS):
        r = got.get(i)
        rows.append({"bucket": label,
                     "fwd": 0 if r is None or pd.isna(r["fwd"]) else int(r["fwd"]),
                     "ost": 0 if r is None or pd.isna(r["ost"]) else int(r["ost"])})
    return pd.DataFrame(rows, columns=["bucket", "fwd", "ost"])
