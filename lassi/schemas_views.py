"""Schemas of the Beacon system views (issue #4, item 4), built by `lassi.system_views`.

Declared like `lassi.schemas` (partition column `date` last); `VIEW_TABLES` is merged into
`lassi.schemas.TABLES`. Every view holds one UTC day of the whole system:

- `view_ost_util` (Beacon Fig. 7): per OST and minute, the largest sampled bandwidth as a
  fraction of the OST's benchmarked peak.
- `view_layer_volume` (Figs. 8-9): the day's read and write volume of the compute,
  forwarding and OST layers, with the cache-thrashing and write-amplification flags.
- `view_fwd_load` (Fig. 10): per forwarding node and hour, the peak per-minute load as a
  fraction of the node's peak bandwidth, and its band (high / mid / low / idle).
- `view_mds_source` (Fig. 18): MDS operations per source kind and hour.
- `view_io_mode` (Tables 3, 4, 6): jobs and volume per I/O mode and core-hour bucket.
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _f(name: str, dtype, nullable: bool = True) -> StructField:
    return StructField(name, dtype, nullable)


DATE = _f("date", DateType(), False)

VIEW_OST_UTIL = StructType([
    _f("ost", StringType(), False),
    _f("oss", StringType()),
    _f("fs", StringType()),               # ost_map, else the OST name's prefix
    _f("minute", TimestampType(), False),  # minute of the samples' interval midpoints (UTC)
    _f("samples", IntegerType(), False),   # raw_ost samples with deltas in the minute
    _f("read_bytes", LongType(), False),   # exact (OST counters), summed over the samples
    _f("write_bytes", LongType(), False),
    _f("max_bw", DoubleType(), False),     # bytes/s: max over the samples of delta / interval_s
    _f("peak_bw", DoubleType()),           # bytes/s: ost_map.ost_peak_bw, else the site's
    _f("util", DoubleType()),              # max_bw / peak_bw (null when no peak is known)
    DATE,
])

VIEW_LAYER_VOLUME = StructType([
    _f("layer", StringType(), False),      # compute | forwarding | ost
    _f("source", StringType(), False),     # what the layer's numbers are measured from
    # compute: traced clients only (count x size); forwarding: Lustre-client RPCs x pages x
    # 4 KiB, a sample's read/write split by the OST's bytes per RPC that minute; ost: exact
    _f("read_bytes", LongType(), False),
    _f("write_bytes", LongType(), False),
    _f("read_ops", LongType(), False),     # compute: requests; forwarding and ost: RPCs
    _f("write_ops", LongType(), False),
    # compute: traced share of the data requests the forwarding nodes served (LWFS server
    # Read+Write request counts), null without LWFS server data; forwarding, ost: 1
    _f("coverage", DoubleType()),
    _f("read_bytes_est", DoubleType()),    # the layer scaled to all clients (bytes / coverage)
    _f("write_bytes_est", DoubleType()),
    _f("read_ratio", DoubleType()),        # read_bytes_est / the compute layer's
    _f("write_ratio", DoubleType()),
    # day-level flags (the same on every row; null when a layer they compare is missing):
    _f("cache_thrashing", BooleanType()),      # forwarding reads > factor x compute reads
    _f("write_amplification", BooleanType()),  # OST writes > factor x compute writes
    _f("thrashing_factor", DoubleType(), False),
    _f("amplification_factor", DoubleType(), False),
    DATE,
])

VIEW_FWD_LOAD = StructType([
    _f("fwd", StringType(), False),
    _f("hour", TimestampType(), False),    # every hour of the day for every known fwd node
    _f("minutes", IntegerType(), False),   # minutes with Lustre-client samples in the hour
    _f("read_bytes", LongType(), False),   # Lustre client estimate (RPCs x pages x 4 KiB)
    _f("write_bytes", LongType(), False),
    _f("peak_bw", DoubleType(), False),    # bytes/s of the busiest minute (0 when none)
    _f("peak_minute", TimestampType()),
    _f("fwd_peak_bw", DoubleType()),       # bytes/s: fwd_map.fwd_peak_bw, else the site's
    _f("load", DoubleType()),              # peak_bw / fwd_peak_bw
    _f("band", StringType(), False),       # high | mid | low | idle (cut-offs: system_views)
    DATE,
])

VIEW_MDS_SOURCE = StructType([
    _f("source_kind", StringType(), False),  # forwarding | login | cluster | other
    _f("hour", TimestampType(), False),      # hour of the samples' interval midpoints
    _f("sources", IntegerType(), False),     # distinct requesting hosts of the kind
    _f("ops", LongType(), False),            # MDS operations (sum of raw_mds.ops deltas)
    _f("ops_per_s", DoubleType(), False),    # sum over (mds, source) of ops / sampled seconds
    _f("share", DoubleType(), False),        # of all sources' ops in that hour
    DATE,
])

VIEW_IO_MODE = StructType([
    _f("io_mode", StringType(), False),    # N:N | N:M | N:1 | 1:1 | all
    _f("ch_bucket", StringType(), False),  # core-hour bucket label, or all
    _f("bucket_no", IntegerType(), False),  # 0.. in ascending order; all = -1
    _f("ch_lo", DoubleType()),             # bucket (ch_lo, ch_hi] in core-hours; null = open
    _f("ch_hi", DoubleType()),
    _f("jobs", LongType(), False),         # jobs with non-trivial I/O (system_views)
    _f("read_jobs", LongType(), False),    # ... of them that read (paper Table 6)
    _f("write_jobs", LongType(), False),
    _f("read_bytes", LongType(), False),
    _f("write_bytes", LongType(), False),
    _f("avg_read_bytes", DoubleType()),    # per job of the cell (paper Tables 3, 4)
    _f("avg_write_bytes", DoubleType()),
    _f("core_hours", DoubleType(), False),
    DATE,
])

VIEW_TABLES: dict[str, StructType] = {
    "view_ost_util": VIEW_OST_UTIL,
    "view_layer_volume": VIEW_LAYER_VOLUME,
    "view_fwd_load": VIEW_FWD_LOAD,
    "view_mds_source": VIEW_MDS_SOURCE,
    "view_io_mode": VIEW_IO_MODE,
}
