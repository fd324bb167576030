"""Beacon stage `system_views`: whole-system views of one day (issue #4, item 4).

Beacon's §4.2-4.4 look at the system rather than at one job: how busy the OSTs are
(Fig. 7), how the volume of the compute, forwarding and OST layers compare (Figs. 8-9,
cache thrashing and write amplification), how loaded each forwarding node is hour by hour
(Fig. 10), who sends the MDS its operations (Fig. 18) and which I/O modes jobs use
(Tables 3, 4, 6). This stage writes one table per view for the date (schemas in
`lassi.core.schemas`, SQL in sql/view_*.sql); `lassi.report.beacon` draws them.

Thresholds (the first three from `site.settings.thresholds`: `cache_thrashing_factor`,
`write_amplification_factor`, `fwd_load_bands`, defaults in conf/defaults.yaml; the others
module constants):

- cache thrashing: forwarding-layer reads > cache_thrashing_factor (2) x compute reads;
  write amplification: OST writes > write_amplification_factor (1.2) x compute writes.
  The compute layer is the trace, which may hold only some jobs: both compare the compute
  volume scaled to all clients (see sql/beacon/view_layer_volume.sql, `coverage`). The forwarding
  layer's read/write split uses the OST counters' bytes per RPC (the Lustre client format
  has one pages-per-RPC average for both), so the flags do not follow that average's bias.
- forwarding load bands (`fwd_load_bands` as {high: x, mid: y, low: z}),
  the paper's Fig. 10 cut-offs: high >= 90 % of the node's peak bandwidth, mid >= 50 %,
  low >= 10 %, idle below. A cell is the hour's busiest minute.
- jobs count in `view_io_mode` when they moved at least NONTRIVIAL_BYTES (1 MiB): the
  paper's tables are of jobs "with non-trivial I/O".
- core-hour buckets: the paper's (0, 1K], (1K, 10K], (10K, 100K], (100K, 1000K],
  (1000K, inf) for TaihuLight's 40,960 nodes x 4 core groups, scaled by the power of ten
  nearest to this site's share of those cores (a 1,024-node site: 10, 100, 1K, 10K).
"""

from __future__ import annotations

import datetime as dt
import math

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType

from lassi.core.config import Site
from lassi.core.frames import empty_frame
from lassi.core.period import minute_bounds
from lassi.core.schemas import VIEW_TABLES
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, as_date

BAND_ORDER = ("high", "mid", "low", "idle", "unknown")   # unknown: node without a peak
NONTRIVIAL_BYTES = 1 << 20
# paper Table 3 bucket edges (core-hours) and the machine they were measured on
CORE_HOUR_EDGES = (1e3, 1e4, 1e5, 1e6)
REFERENCE_CORES = 40960 * 4
IO_MODES = ("N:N", "N:M", "N:1", "1:1")
MDS_SOURCE_KINDS = ("forwarding", "login", "cluster", "other")

# raw layers whose partition for a date means "this date has Beacon data"
BEACON_RAW = ("raw_lwfs_trace", "raw_lwfs_server", "raw_lustre_client", "raw_ost", "raw_mds")

_SITE_FS = StructType([StructField("fs", StringType(), False),
                       StructField("ost_peak_bw", DoubleType())])
_SITE_FWD = StructType([StructField("fwd", StringType(), False),
                        StructField("fwd_peak_bw", DoubleType())])
_BUCKETS = StructType([StructField("bucket_no", IntegerType(), False),
                       StructField("ch_bucket", StringType(), False),
                       StructField("ch_lo", DoubleType()), StructField("ch_hi", DoubleType())])


# --- load bands and core-hour buckets ------------------------------------------------------


def band_expr(bands: tuple[tuple[str, float], ...]) -> str:
    """The SQL CASE that names the band of `load` (null load: unknown); `bands` as
    `Settings.thresholds.fwd_load_bands`: (band, lowest load), highest first."""
    whens = " ".join(f"WHEN load >= {cut!r} THEN '{name}'" for name, cut in bands)
    return f"CASE WHEN load IS NULL THEN 'unknown' {whens} ELSE 'idle' END"


def band_legend(bands: tuple[tuple[str, float], ...]) -> dict[str, str]:
    """band -> its range in words, e.g. {'high': '≥ 90 %', 'mid': '50–90 %', ...}."""
    out, upper = {}, None
    for name, cut in bands:
        out[name] = f"≥ {cut:.0%}" if upper is None else f"{cut:.0%}–{upper:.0%}"
        upper = cut
    out["idle"] = f"< {bands[-1][1]:.0%}"
    return {k: v.replace("%", " %") for k, v in out.items()}


def core_hour_scale(site: Site) -> int:
    """k <= 0: 10**k is the power of ten nearest to the site's cores over TaihuLight's."""
    c = site.data["compute"]
    cores = int(c["nodes"]) * int(c.get("procs_per_node", 1))
    return min(0, round(math.log10(max(cores, 1) / REFERENCE_CORES)))


def _num_label(v: float) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def core_hour_buckets(site: Site) -> list[tuple[int, str, float | None, float | None]]:
    """(bucket_no, label, lo, hi): core-hours in (lo, hi]; None = open."""
    edges = [e / 10 ** -core_hour_scale(site) for e in CORE_HOUR_EDGES]
    out = [(0, f"(0, {_num_label(edges[0])}]", None, edges[0])]
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True), start=1):
        out.append((i, f"({_num_label(lo)}, {_num_label(hi)}]", lo, hi))
    out.append((len(edges), f"> {_num_label(edges[-1])}", edges[-1], None))
    return out


# --- the stage --------------------------------------------------------------------------


def has_beacon_data(wh: Warehouse, date: dt.date) -> bool:
    """Does the date have any Beacon raw layer or job_summary partition?"""
    return any(wh.has(t, date) for t in BEACON_RAW + ("job_summary",))


def _day_params(date: dt.date) -> dict[str, str]:
    start = dt.datetime.combine(date, dt.time())
    first, last = minute_bounds(date)
    return {"day_start": first, "last_minute": last,
            "last_hour": f"{start + dt.timedelta(hours=23):%Y-%m-%d %H:%M:%S}",
            "date": date.isoformat()}


def register_inputs(wh: Warehouse, site: Site, date: dt.date) -> dict[str, bool]:
    """Temp views sv_* over the day's inputs; returns which raw tables have the date."""
    spark = wh.spark
    have = {t: wh.has(t, date) for t in BEACON_RAW + ("job_summary", "ost_map", "fwd_map")}
    for table, view in (("raw_lwfs_trace", "sv_trace"), ("raw_lwfs_server", "sv_server"),
                        ("raw_lustre_client", "sv_client"), ("raw_ost", "sv_ost"),
                        ("raw_mds", "sv_mds"), ("job_summary", "sv_jobs"),
                        ("ost_map", "sv_ost_map")):
        wh.read(table, date).createOrReplaceTempView(view)
    spark.sql(sql("beacon/steps/fwd_sample")).createOrReplaceTempView("sv_fwd_sample")
    spark.createDataFrame([(f.name, f.ost_peak_bw) for f in site.filesystems], _SITE_FS) \
        .createOrReplaceTempView("sv_site_fs")
    # forwarding nodes: the day's fwd_map (its peaks, else the site's), else the site's list
    site_peak = site.fwd_peak_bw if site.has_forwarding else None
    if have["fwd_map"]:
        fallback = F.lit(site_peak).cast("double")
        fwds = (wh.read("fwd_map", date).groupBy("fwd")
                .agg(F.coalesce(F.max("fwd_peak_bw"), fallback).alias("fwd_peak_bw")))
    else:
        fwds = spark.createDataFrame([(f, site_peak) for f in site.fwd_nodes], _SITE_FWD)
    fwds.createOrReplaceTempView("sv_fwds")
    spark.createDataFrame(core_hour_buckets(site), _BUCKETS).createOrReplaceTempView("sv_buckets")
    return have


def view_frames(wh: Warehouse, site: Site, date: dt.date,
                have: dict[str, bool]) -> dict[str, DataFrame]:
    """The five views of the date as DataFrames (needs register_inputs)."""
    spark = wh.spark
    p = _day_params(date)
    th = site.settings.thresholds
    empty = {t: empty_frame(spark, s) for t, s in VIEW_TABLES.items()}
    out = {
        "view_ost_util": spark.sql(sql("beacon/view_ost_util", **p)) if have["raw_ost"]
        else empty["view_ost_util"],
        "view_fwd_load": spark.sql(sql("beacon/view_fwd_load", band=band_expr(th.fwd_load_bands),
                                       **p)) if have["raw_lustre_client"]
        else empty["view_fwd_load"],
        "view_mds_source": spark.sql(sql("beacon/view_mds_source", **p)) if have["raw_mds"]
        else empty["view_mds_source"],
        "view_io_mode": spark.sql(sql("beacon/view_io_mode", min_bytes=NONTRIVIAL_BYTES,
                                      date=p["date"])) if have["job_summary"]
        else empty["view_io_mode"],
    }
    layers = {"has_compute": have["raw_lwfs_trace"], "has_forwarding": have["raw_lustre_client"],
              "has_ost": have["raw_ost"]}
    out["view_layer_volume"] = (
        spark.sql(sql("beacon/view_layer_volume", factor_read=repr(th.cache_thrashing_factor),
                      factor_write=repr(th.write_amplification_factor), date=p["date"],
                      **{k: "TRUE" if v else "FALSE" for k, v in layers.items()}))
        if any(layers.values()) else empty["view_layer_volume"])
    return out


@scoped
def build_system_views(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `system_views`: write the five view tables of `date`; a one-line summary.

    A date without Beacon data (e.g. an ARCHER warehouse) writes nothing and removes any
    view partitions a previous run left for it.
    """
    date = as_date(date)
    if not has_beacon_data(wh, date):
        for table in VIEW_TABLES:
            wh.clear(table, [date])
        return "no Beacon data for the day"
    have = register_inputs(wh, site, date)
    frames = view_frames(wh, site, date, have)
    for table, df in frames.items():
        wh.write(df, table, [date])
    return _summary(wh, site, date)


def _summary(wh: Warehouse, site: Site, date: dt.date) -> str:
    parts = []
    ost = wh.read("view_ost_util", date).selectExpr(
        "count(DISTINCT ost) AS n", "avg(util) AS mean", "count_if(util < 0.01) AS idle",
        "count(*) AS cells").first()
    if ost["n"]:
        parts.append(f"{ost['n']} OSTs at {ost['mean']:.1%} of peak on average "
                     f"({ost['idle'] / ost['cells']:.0%} of OST-minutes < 1 %)")
    lv = wh.read("view_layer_volume", date).select("cache_thrashing", "write_amplification") \
        .limit(1).collect()
    if lv:
        flags = [name for name, v in (("cache thrashing", lv[0][0]),
                                      ("write amplification", lv[0][1])) if v]
        parts.append("flags: " + (", ".join(flags) if flags else "none"))
    fwd = wh.read("view_fwd_load", date).selectExpr(
        "count(DISTINCT fwd) AS n", "count_if(band IN ('high', 'mid')) AS busy",
        "count(*) AS cells").first()
    if fwd["n"]:
        parts.append(f"{fwd['n']} forwarding nodes, {fwd['busy']} of {fwd['cells']} "
                     f"node-hours at >= "
                     f"{dict(site.settings.thresholds.fwd_load_bands)['mid']:.0%} of peak")
    mds = wh.read("view_mds_source", date).groupBy("source_kind").sum("ops").collect()
    if mds:
        total = sum(r[1] for r in mds) or 1
        top = max(mds, key=lambda r: r[1])
        parts.append(f"MDS ops {total:,} ({top[0]} {top[1] / total:.0%})")
    io = wh.read("view_io_mode", date).filter("io_mode = 'all' AND ch_bucket = 'all'") \
        .select("jobs").collect()
    if io:
        parts.append(f"{io[0][0]} jobs with non-trivial I/O")
    return "; ".join(parts) if parts else "Beacon data without system views"
