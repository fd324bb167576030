"""Schemas of the Beacon tables: merged traces, job profiles, phases, anomalies,
component anomalies and their alerts, interference and the system views."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampType,
)

from lassi.core.schemas.common import DATE, field

TRACE_MERGED = StructType([
    field("job_id", StringType(), False),
    field("ts", LongType(), False),           # epoch second of the entries
    field("op", StringType(), False),
    field("fd", StringType()),
    field("size", LongType()),
    field("offset", LongType()),
    field("count", LongType(), False),        # first-pass count of each node's entry
    field("path", StringType()),              # metadata entries: part of the vector; else null
    field("n_nodes", IntegerType(), False),   # nodes whose entry had exactly this vector
    field("nodes", ArrayType(StringType()), False),
    DATE,
])

TRACE_COMPRESSION = StructType([
    field("job_id", StringType(), False),
    field("app", StringType()),               # executable / job name
    field("n_nodes", IntegerType()),
    field("raw_entries", LongType(), False),  # requests before the first pass (sum of counts)
    field("first_pass_entries", LongType(), False),
    field("merged_entries", LongType(), False),
    field("first_pass_ratio", DoubleType()),
    field("second_pass_ratio", DoubleType()),
    field("total_ratio", DoubleType()),
    field("lossless", BooleanType()),         # expanding trace_merged gave back the multiset
    DATE,
])

JOB_TIMESERIES = StructType([
    field("job_id", StringType(), False),
    field("layer", StringType(), False),      # compute | forwarding | ost | mds
    field("component", StringType(), False),  # node, fwd, OST or MDS name
    field("ts", TimestampType(), False),      # start of the interval
    field("interval_s", IntegerType(), False),
    field("read_bytes", DoubleType(), False),
    field("write_bytes", DoubleType(), False),
    field("read_ops", DoubleType(), False),
    field("write_ops", DoubleType(), False),
    field("md_ops", DoubleType(), False),
    field("share", DoubleType()),             # the job's share of a shared component's load
    DATE,
])

JOB_SUMMARY = StructType([
    field("job_id", StringType(), False),
    field("app", StringType()),
    field("user", StringType()),
    field("start", TimestampType()),
    field("end", TimestampType()),
    field("runtime_s", DoubleType()),
    field("n_nodes", IntegerType()),
    field("n_io_nodes", IntegerType()),
    field("n_files", IntegerType()),
    field("read_bytes", LongType(), False),
    field("write_bytes", LongType(), False),
    field("io_seconds", LongType()),          # seconds with I/O
    field("avg_read_bw", DoubleType()),       # bytes/s over the seconds with reads
    field("avg_write_bw", DoubleType()),
    field("avg_bw", DoubleType()),            # bytes / io_seconds
    field("peak_read_bw", DoubleType()),
    field("peak_write_bw", DoubleType()),
    field("peak_bw", DoubleType()),           # largest per-second bytes
    field("avg_iops", DoubleType()),          # data requests / io_seconds
    field("io_mode", StringType()),           # 1:1 | N:1 | N:N | N:M
    field("md_ops", LongType()),
    field("avg_mdops", DoubleType()),         # metadata ops/s during the I/O phases
    field("size_hist", ArrayType(LongType())),  # requests per REQUEST_SIZE_EDGES bucket
    field("dominant_size", StringType()),     # label of the bucket with most bytes
    field("fwd_nodes", ArrayType(StringType())),
    field("osts", ArrayType(StringType())),
    field("core_hours", DoubleType()),
    DATE,
])

IO_PHASE = StructType([
    field("job_id", StringType(), False),
    field("app", StringType()),               # job_summary.app (detection groups by it)
    field("phase_no", IntegerType(), False),  # 0-based, in time order within the job
    field("start", TimestampType(), False),   # first second with I/O of the burst
    field("end", TimestampType(), False),     # exclusive: last second + 1
    field("bytes", LongType(), False),        # exact: the original series over [start, end)
    field("duration_s", DoubleType(), False),
    field("mean_bw", DoubleType()),           # bytes / duration_s
    field("peak_bw", DoubleType()),           # largest one-second volume
    field("kind", StringType()),              # read | write | mixed (>= 90 % of the bytes)
    field("io_mode", StringType()),           # the job's (job_summary.io_mode)
    field("category", IntegerType()),         # stage-1 cluster within the app; -1 noise
    field("perf_vector", ArrayType(DoubleType())),  # Algorithm 1 over the category's range
    field("is_abnormal", BooleanType()),      # two-stage: stage-2 noise
    field("is_abnormal_1stage", BooleanType()),  # IOSI baseline: noise on (duration, volume)
    field("bw_series", ArrayType(DoubleType())),  # bytes per second over [start, end): history
    DATE,                                  # the job's start day
])

ANOMALY = StructType([
    field("job_id", StringType(), False),
    field("app", StringType()),
    field("n_phases", LongType(), False),
    field("n_abnormal", LongType(), False),
    field("abnormal_phases", ArrayType(IntegerType())),  # phase_no of the abnormal phases
    field("first_abnormal_start", TimestampType()),
    field("worst_slowdown_est", DoubleType()),  # max over them of category normal bw / phase bw
    field("method", StringType(), False),     # two-stage
    DATE,                                  # the job's start day
])

COMPONENT_ANOMALY = StructType([
    field("kind", StringType(), False),       # fwd | ost
    field("component", StringType(), False),  # forwarding node or OST name
    field("rule", StringType(), False),       # system | straggler
    field("job_id", StringType()),            # straggler: the job; null for the system rule
    field("start", TimestampType(), False),
    field("end", TimestampType(), False),
    field("duration_min", IntegerType(), False),
    field("max_bw_fraction", DoubleType()),   # the component's largest bandwidth / its peak
    field("peak_bw", DoubleType()),           # bytes/s, the known peak
    field("evidence", StringType()),          # short text: why
    field("est_slowdown", DoubleType()),      # straggler: job's median component bw / its bw
    field("ongoing", BooleanType(), False),   # still open at the day's end
    DATE,
])

ALERT = StructType([                          # stage `alerts`: every alert the date calls for
    field("key", StringType(), False),        # system:<kind>:<component>:<start of the joined
                                           # anomaly> | straggler:<job>:<kind>:<component>
    field("kind", StringType(), False),       # system | straggler
    field("component_kind", StringType(), False),   # fwd | ost
    field("component", StringType(), False),
    field("job_id", StringType()),            # straggler: the job; null for the system rule
    field("subject", StringType(), False),
    field("body", StringType(), False),
    field("status", StringType(), False),     # sent | already sent | not sent: backfill
    field("sent_at", TimestampType()),        # delivery time (already sent: the first one)
    DATE,
])

INTERFERENCE = StructType([
    field("job_id", StringType(), False),     # the abnormal job
    field("app", StringType()),
    field("cause", StringType(), False),      # N:1 | high MDOPS | high bandwidth | high IOPS |
                                           # mix | multiple jobs | system anomaly | unknown
    field("neighbour", StringType()),         # a job sharing a forwarding node; null: none
    field("neighbour_mode", StringType()),
    field("bw", DoubleType()),                # the neighbour's bytes/s over the abnormal phase
    field("iops", DoubleType()),
    field("mdops", DoubleType()),
    field("n1", BooleanType(), False),        # interference-prone features of the neighbour
    field("high_mdops", BooleanType(), False),
    field("high_bw", BooleanType(), False),
    field("high_iops", BooleanType(), False),
    DATE,                                  # the abnormal job's start day
])

# --- Beacon system views (issue #4, item 4), built by `lassi.beacon.system_views` -----------------
# Every view holds one UTC day of the whole system:
#
# - `view_ost_util` (Beacon Fig. 7): per OST and minute, the largest sampled bandwidth as a
#   fraction of the OST's benchmarked peak.
# - `view_layer_volume` (Figs. 8-9): the day's read and write volume of the compute,
#   forwarding and OST layers, with the cache-thrashing and write-amplification flags.
# - `view_fwd_load` (Fig. 10): per forwarding node and hour, the peak per-minute load as a
#   fraction of the node's peak bandwidth, and its band (high / mid / low / idle).
# - `view_mds_source` (Fig. 18): MDS operations per source kind and hour.
# - `view_io_mode` (Tables 3, 4, 6): jobs and volume per I/O mode and core-hour bucket.
VIEW_OST_UTIL = StructType([
    field("ost", StringType(), False),
    field("oss", StringType()),
    field("fs", StringType()),               # ost_map, else the OST name's prefix
    field("minute", TimestampType(), False),  # minute of the samples' interval midpoints (UTC)
    field("samples", IntegerType(), False),   # raw_ost samples with deltas in the minute
    field("read_bytes", LongType(), False),   # exact (OST counters), summed over the samples
    field("write_bytes", LongType(), False),
    field("max_bw", DoubleType(), False),     # bytes/s: max over the samples of delta / interval_s
    field("peak_bw", DoubleType()),           # bytes/s: ost_map.ost_peak_bw, else the site's
    field("util", DoubleType()),              # max_bw / peak_bw (null when no peak is known)
    DATE,
])

VIEW_LAYER_VOLUME = StructType([
    field("layer", StringType(), False),      # compute | forwarding | ost
    field("source", StringType(), False),     # what the layer's numbers are measured from
    # compute: traced clients only (count x size); forwarding: Lustre-client RPCs x pages x
    # 4 KiB, a sample's read/write split by the OST's bytes per RPC that minute; ost: exact
    field("read_bytes", LongType(), False),
    field("write_bytes", LongType(), False),
    field("read_ops", LongType(), False),     # compute: requests; forwarding and ost: RPCs
    field("write_ops", LongType(), False),
    # compute: traced share of the data requests the forwarding nodes served (LWFS server
    # Read+Write request counts), null without LWFS server data; forwarding, ost: 1
    field("coverage", DoubleType()),
    field("read_bytes_est", DoubleType()),    # the layer scaled to all clients (bytes / coverage)
    field("write_bytes_est", DoubleType()),
    field("read_ratio", DoubleType()),        # read_bytes_est / the compute layer's
    field("write_ratio", DoubleType()),
    # day-level flags (the same on every row; null when a layer they compare is missing):
    field("cache_thrashing", BooleanType()),      # forwarding reads > factor x compute reads
    field("write_amplification", BooleanType()),  # OST writes > factor x compute writes
    field("thrashing_factor", DoubleType(), False),
    field("amplification_factor", DoubleType(), False),
    DATE,
])

VIEW_FWD_LOAD = StructType([
    field("fwd", StringType(), False),
    field("hour", TimestampType(), False),    # every hour of the day for every known fwd node
    field("minutes", IntegerType(), False),   # minutes with Lustre-client samples in the hour
    field("read_bytes", LongType(), False),   # Lustre client estimate (RPCs x pages x 4 KiB)
    field("write_bytes", LongType(), False),
    field("peak_bw", DoubleType(), False),    # bytes/s of the busiest minute (0 when none)
    field("peak_minute", TimestampType()),
    field("fwd_peak_bw", DoubleType()),       # bytes/s: fwd_map.fwd_peak_bw, else the site's
    field("load", DoubleType()),              # peak_bw / fwd_peak_bw
    field("band", StringType(), False),       # high | mid | low | idle (cut-offs: system_views)
    DATE,
])

VIEW_MDS_SOURCE = StructType([
    field("source_kind", StringType(), False),  # forwarding | login | cluster | other
    field("hour", TimestampType(), False),      # hour of the samples' interval midpoints
    field("sources", IntegerType(), False),     # distinct requesting hosts of the kind
    field("ops", LongType(), False),            # MDS operations (sum of raw_mds.ops deltas)
    field("ops_per_s", DoubleType(), False),    # sum over (mds, source) of ops / sampled seconds
    field("share", DoubleType(), False),        # of all sources' ops in that hour
    DATE,
])

VIEW_IO_MODE = StructType([
    field("io_mode", StringType(), False),    # N:N | N:M | N:1 | 1:1 | all
    field("ch_bucket", StringType(), False),  # core-hour bucket label, or all
    field("bucket_no", IntegerType(), False),  # 0.. in ascending order; all = -1
    field("ch_lo", DoubleType()),             # bucket (ch_lo, ch_hi] in core-hours; null = open
    field("ch_hi", DoubleType()),
    field("jobs", LongType(), False),         # jobs with non-trivial I/O (system_views)
    field("read_jobs", LongType(), False),    # ... of them that read (paper Table 6)
    field("write_jobs", LongType(), False),
    field("read_bytes", LongType(), False),
    field("write_bytes", LongType(), False),
    field("avg_read_bytes", DoubleType()),    # per job of the cell (paper Tables 3, 4)
    field("avg_write_bytes", DoubleType()),
    field("core_hours", DoubleType(), False),
    DATE,
])

VIEW_TABLES: dict[str, StructType] = {
    "view_ost_util": VIEW_OST_UTIL,
    "view_layer_volume": VIEW_LAYER_VOLUME,
    "view_fwd_load": VIEW_FWD_LOAD,
    "view_mds_source": VIEW_MDS_SOURCE,
    "view_io_mode": VIEW_IO_MODE,
}
