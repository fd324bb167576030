"""Every table's schema, declared once. Readers and writers use these; nothing is inferred.

The partition column `date` (UTC day, DateType) is part of every warehouse table and is
listed last. Column names are the contract in DESIGN.md.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
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

OSS_COUNTERS = ["read_kb", "read_ops", "write_kb", "write_ops", "other"]
MDS_COUNTERS = [
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "ren",
    "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "sdr", "cdr",
]
ALL_COUNTERS = OSS_COUNTERS + MDS_COUNTERS

# Lustre OSS ops summed into LASSi's "other" counter.
OSS_OTHER_OPS = [
    "get_info", "set_info_async", "disconnect", "destroy", "punch", "sync", "preprw", "commitrw",
]
# Lustre md_stats names -> LASSi MDS counter names.
MDS_OP_NAMES = {
    "open": "open", "close": "close", "mknod": "mknod", "link": "link", "unlink": "unlink",
    "mkdir": "mkdir", "rmdir": "rmdir", "rename": "ren", "getattr": "getattr",
    "setattr": "setattr", "getxattr": "getxattr", "setxattr": "setxattr", "statfs": "statfs",
    "sync": "sync", "samedir_rename": "sdr", "crossdir_rename": "cdr",
}


def _f(name: str, dtype, nullable: bool = True) -> StructField:
    return StructField(name, dtype, nullable)


DATE = _f("date", DateType(), False)

RAW_LUSTRE_STATS = StructType([
    _f("server", StringType()),        # host the capture came from (OSS/MDS), if known
    _f("target", StringType(), False),  # e.g. fs2-OST0003, fs2-MDT0000
    _f("fs", StringType(), False),      # prefix of the target name
    _f("kind", StringType(), False),    # export | target | job
    _f("nid", StringType()),            # client NID for export stats
    _f("node", StringType()),           # node name the NID maps to
    _f("job_id", StringType()),         # job_stats only
    _f("snapshot_time", TimestampType(), False),
    _f("counter", StringType(), False),  # Lustre's own counter name (read_bytes, open, ...)
    _f("samples", LongType(), False),
    _f("unit", StringType()),
    _f("min", LongType()),
    _f("max", LongType()),
    _f("sum", LongType()),
    _f("sumsq", DoubleType()),
    _f("start_time", TimestampType()),   # newer Lustre: when the counters were (re)started
    _f("file", StringType()),
    DATE,
])

NODE_WINDOW = StructType(
    [
        _f("node", StringType(), False),
        _f("fs", StringType(), False),
        _f("window_start", TimestampType(), False),
        _f("window_s", IntegerType(), False),
    ]
    + [_f(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]
    + [_f("resets", IntegerType(), False), DATE]
)

APP_RUN = StructType([
    _f("app_id", StringType(), False),   # ALPS apid, Slurm step id, or the job id
    _f("job_id", StringType(), False),
    _f("user", StringType()),
    _f("project", StringType()),
    _f("job_name", StringType()),
    _f("exe", StringType()),
    _f("command", StringType()),         # exact launch command
    _f("nodes", ArrayType(StringType())),
    _f("n_nodes", IntegerType()),
    _f("n_procs", IntegerType()),
    _f("start", TimestampType()),
    _f("end", TimestampType()),
    _f("exit_status", IntegerType()),
    _f("source", StringType(), False),   # alps | slurm | pbs | beacon-job
    # Filled by the daily `slowdown` stage (null until then): see sql/run_metrics.sql.
    _f("runtime_s", DoubleType()),
    _f("group_runs", IntegerType()),      # runs of the same exact command in the period
    _f("group_mean_s", DoubleType()),     # their mean runtime
    _f("slowdown", DoubleType()),         # runtime / group mean
    _f("slowed", BooleanType()),          # slowdown >= thresholds.slowdown_factor
    _f("risk_oss_sum", DoubleType()),     # sum of the run's app_hour risk_oss (paper Table 7)
    _f("risk_mds_sum", DoubleType()),
    DATE,
])

# app_run columns written by the analysis, not by ingest.
APP_RUN_ANALYSIS = ["runtime_s", "group_runs", "group_mean_s", "slowdown", "slowed",
                    "risk_oss_sum", "risk_mds_sum"]
# Ops whose risks make up risk_oss; the MDS op set is configurable (thresholds.risk.mds_ops).
RISK_COLS = [f"r_{c}" for c in ALL_COUNTERS]


def _counters() -> list[StructField]:
    return [_f(c, DoubleType() if c.endswith("_kb") else LongType(), False) for c in ALL_COUNTERS]


APP_HOUR = StructType(
    [
        _f("app_id", StringType(), False),
        _f("job_id", StringType()),
        _f("fs", StringType(), False),
        _f("hour", TimestampType(), False),
        _f("user", StringType()),
        _f("exe", StringType()),
        _f("command", StringType()),
        _f("n_nodes", IntegerType()),
        _f("node_windows", LongType(), False),   # node x window cells summed into this row
    ]
    + _counters()
    + [_f(r, DoubleType(), False) for r in RISK_COLS]   # r_x = (x - alpha*mu)/sigma, raw sign
    + [
        _f("risk_oss", DoubleType(), False),      # sum of positive r_x over the OSS ops
        _f("risk_mds", DoubleType(), False),      # sum of positive r_x over the MDS op set
        _f("read_kb_ops", DoubleType()),          # read_ops*1024/read_kb; null if no data read
        _f("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_HOUR = StructType(
    [_f("fs", StringType(), False), _f("hour", TimestampType(), False),
     _f("n_apps", LongType(), False)]
    + _counters()
    + [_f(r, DoubleType(), False) for r in RISK_COLS]   # sums of positive per-app risks
    + [
        _f("risk_oss", DoubleType(), False),
        _f("risk_mds", DoubleType(), False),
        _f("read_kb_ops", DoubleType()),
        _f("write_kb_ops", DoubleType()),
        DATE,
    ]
)

FS_BASELINE = StructType([
    _f("fs", StringType(), False),
    _f("op", StringType(), False),
    _f("mean", DoubleType()),
    _f("std", DoubleType()),            # sample standard deviation
    _f("rsd", DoubleType()),            # std / mean
    _f("n", LongType(), False),         # app_hour rows in the period
    _f("period_start", DateType(), False),
    _f("period_end", DateType(), False),
    DATE,
])

RUN_GROUP = StructType([
    _f("command", StringType(), False),
    _f("exe", StringType()),
    _f("user", StringType()),
    _f("n_runs", LongType(), False),
    _f("mean_runtime_s", DoubleType()),
    _f("std_runtime_s", DoubleType()),
    _f("n_slowed", LongType(), False),
    _f("corr_runtime_risk_oss", DoubleType()),   # Pearson r over the group's runs (Fig. 7)
    _f("corr_runtime_risk_mds", DoubleType()),
    _f("period_start", DateType(), False),
    _f("period_end", DateType(), False),
    DATE,
])

QUARANTINE = StructType([
    _f("source", StringType(), False),
    _f("file", StringType(), False),
    _f("line_no", IntegerType(), False),
    _f("raw", StringType()),
    _f("reason", StringType(), False),
    _f("ingested_at", TimestampType(), False),
    DATE,
])

INGEST_LOG = StructType([
    _f("source", StringType(), False),
    _f("files", IntegerType(), False),
    _f("lines_read", LongType(), False),
    _f("lines_used", LongType(), False),
    _f("lines_quarantined", LongType(), False),
    _f("rows", LongType(), False),
    _f("counter_resets", LongType(), False),
    _f("ingested_at", TimestampType(), False),
    DATE,
])

# --- Beacon layers (issue #4; FORMATS.md §4) ---------------------------------------------------
# Lustre MDS operation names of the Beacon MDS layer, in the order the simulator writes them.
BEACON_MDS_OPS = [
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr",
    "setattr", "getxattr", "setxattr", "statfs", "sync", "samedir_rename", "crossdir_rename",
]
LATENCY_BUCKETS = 8

RAW_LWFS_TRACE = StructType([
    _f("node", StringType()),              # compute node name (from the IP through conf/)
    _f("ip", StringType(), False),         # node identity in the trace
    _f("ts", TimestampType(), False),      # UTC, millisecond precision
    _f("op", StringType(), False),         # OPEN CLOSE READ WRITE STAT MKDIR UNLINK ...
    _f("fd", StringType()),                # as written (hex handle)
    _f("offset", LongType()),              # READ/WRITE: first byte
    _f("size", LongType()),                # READ/WRITE: bytes per request
    _f("count", LongType(), False),        # requests this line stands for (first pass), >= 1
    _f("path", StringType()),              # metadata operations
    _f("file", StringType()),
    DATE,
])

RAW_LWFS_SERVER = StructType([
    _f("fwd", StringType()),               # forwarding node name (from the IP through conf/)
    _f("ip", StringType(), False),
    _f("ts", TimestampType(), False),      # the line's UTC time
    _f("local_ts", TimestampType()),       # the bracketed local time, as written
    _f("op_class", StringType(), False),   # Meta | Read | Write | Queue
    _f("kind", StringType(), False),       # exe | wait | length
    _f("hist", ArrayType(LongType())),     # cumulative latency histogram (8 buckets)
    _f("hist_delta", ArrayType(LongType())),  # per-interval counts; null for a first sample
    _f("requests", LongType()),            # sum of hist_delta
    _f("queue_len", LongType()),           # Queue lines only (a gauge)
    _f("reset", BooleanType(), False),     # a counter went down since the previous sample
    _f("file", StringType()),
    DATE,
])

RAW_LUSTRE_CLIENT = StructType([
    _f("fwd", StringType()),
    _f("ip", StringType(), False),
    _f("ts", TimestampType(), False),
    _f("ost", StringType(), False),
    _f("read_rpc", LongType(), False),     # cumulative
    _f("write_rpc", LongType(), False),
    _f("pages_per_rpc", LongType()),       # the interval's average, 4 KiB pages
    _f("read_rpc_delta", LongType()),      # null for a first sample
    _f("write_rpc_delta", LongType()),
    _f("interval_s", DoubleType()),
    _f("reset", BooleanType(), False),
    _f("file", StringType()),
    DATE,
])

RAW_OST = StructType([
    _f("ost", StringType(), False),
    _f("oss", StringType(), False),
    _f("ts", TimestampType(), False),
    _f("read_rpc", LongType(), False),     # cumulative
    _f("write_rpc", LongType(), False),
    _f("pages_per_rpc", LongType()),
    _f("read_bytes", LongType(), False),   # cumulative
    _f("write_bytes", LongType(), False),
    _f("read_rpc_delta", LongType()),
    _f("write_rpc_delta", LongType()),
    _f("read_bytes_delta", LongType()),
    _f("write_bytes_delta", LongType()),
    _f("interval_s", DoubleType()),
    _f("reset", BooleanType(), False),
    _f("file", StringType()),
    DATE,
])

RAW_MDS = StructType(
    [
        _f("mds", StringType(), False),    # the MDS host the file came from
        _f("source", StringType(), False),  # requesting host or IP as written
        _f("source_node", StringType()),    # its name through conf/ (forwarding node ...)
        _f("source_kind", StringType(), False),  # forwarding | login | cluster | other
        _f("ts", TimestampType(), False),
    ]
    + [_f(op, LongType()) for op in BEACON_MDS_OPS]           # per-interval deltas
    + [
        _f("ops", LongType()),             # sum of the deltas; null for a first sample
        _f("cumulative", ArrayType(LongType())),  # the line's counters, BEACON_MDS_OPS order
        _f("interval_s", DoubleType()),
        _f("reset", BooleanType(), False),
        _f("file", StringType()),
        DATE,
    ]
)

FWD_MAP = StructType([
    _f("node", StringType(), False),       # compute node
    _f("ip", StringType()),
    _f("fwd", StringType(), False),
    _f("fwd_ip", StringType()),
    _f("fwd_peak_bw", DoubleType()),       # bytes/s, benchmarked
    DATE,
])

OST_MAP = StructType([
    _f("ost", StringType(), False),
    _f("oss", StringType(), False),
    _f("fs", StringType(), False),
    _f("ost_peak_bw", DoubleType()),       # bytes/s, benchmarked
    DATE,
])

TRACE_MERGED = StructType([
    _f("job_id", StringType(), False),
    _f("ts", LongType(), False),           # epoch second of the entries
    _f("op", StringType(), False),
    _f("fd", StringType()),
    _f("size", LongType()),
    _f("offset", LongType()),
    _f("count", LongType(), False),        # first-pass count of each node's entry
    _f("path", StringType()),              # metadata entries: part of the vector; else null
    _f("n_nodes", IntegerType(), False),   # nodes whose entry had exactly this vector
    _f("nodes", ArrayType(StringType()), False),
    DATE,
])

TRACE_COMPRESSION = StructType([
    _f("job_id", StringType(), False),
    _f("app", StringType()),               # executable / job name
    _f("n_nodes", IntegerType()),
    _f("raw_entries", LongType(), False),  # requests before the first pass (sum of counts)
    _f("first_pass_entries", LongType(), False),
    _f("merged_entries", LongType(), False),
    _f("first_pass_ratio", DoubleType()),
    _f("second_pass_ratio", DoubleType()),
    _f("total_ratio", DoubleType()),
    _f("lossless", BooleanType()),         # expanding trace_merged gave back the multiset
    DATE,
])

JOB_TIMESERIES = StructType([
    _f("job_id", StringType(), False),
    _f("layer", StringType(), False),      # compute | forwarding | ost | mds
    _f("component", StringType(), False),  # node, fwd, OST or MDS name
    _f("ts", TimestampType(), False),      # start of the interval
    _f("interval_s", IntegerType(), False),
    _f("read_bytes", DoubleType(), False),
    _f("write_bytes", DoubleType(), False),
    _f("read_ops", DoubleType(), False),
    _f("write_ops", DoubleType(), False),
    _f("md_ops", DoubleType(), False),
    _f("share", DoubleType()),             # the job's share of a shared component's load
    DATE,
])

JOB_SUMMARY = StructType([
    _f("job_id", StringType(), False),
    _f("app", StringType()),
    _f("user", StringType()),
    _f("start", TimestampType()),
    _f("end", TimestampType()),
    _f("runtime_s", DoubleType()),
    _f("n_nodes", IntegerType()),
    _f("n_io_nodes", IntegerType()),
    _f("n_files", IntegerType()),
    _f("read_bytes", LongType(), False),
    _f("write_bytes", LongType(), False),
    _f("io_seconds", LongType()),          # seconds with I/O
    _f("avg_read_bw", DoubleType()),       # bytes/s over the seconds with reads
    _f("avg_write_bw", DoubleType()),
    _f("avg_bw", DoubleType()),            # bytes / io_seconds
    _f("peak_read_bw", DoubleType()),
    _f("peak_write_bw", DoubleType()),
    _f("peak_bw", DoubleType()),           # largest per-second bytes
    _f("avg_iops", DoubleType()),          # data requests / io_seconds
    _f("io_mode", StringType()),           # 1:1 | N:1 | N:N | N:M
    _f("md_ops", LongType()),
    _f("avg_mdops", DoubleType()),         # metadata ops/s during the I/O phases
    _f("size_hist", ArrayType(LongType())),  # requests per REQUEST_SIZE_EDGES bucket
    _f("dominant_size", StringType()),     # label of the bucket with most bytes
    _f("fwd_nodes", ArrayType(StringType())),
    _f("osts", ArrayType(StringType())),
    _f("core_hours", DoubleType()),
    DATE,
])
IO_PHASE = StructType([
    _f("job_id", StringType(), False),
    _f("app", StringType()),               # job_summary.app (detection groups by it)
    _f("phase_no", IntegerType(), False),  # 0-based, in time order within the job
    _f("start", TimestampType(), False),   # first second with I/O of the burst
    _f("end", TimestampType(), False),     # exclusive: last second + 1
    _f("bytes", LongType(), False),        # exact: the original series over [start, end)
    _f("duration_s", DoubleType(), False),
    _f("mean_bw", DoubleType()),           # bytes / duration_s
    _f("peak_bw", DoubleType()),           # largest one-second volume
    _f("kind", StringType()),              # read | write | mixed (>= 90 % of the bytes)
    _f("io_mode", StringType()),           # the job's (job_summary.io_mode)
    _f("category", IntegerType()),         # stage-1 cluster within the app; -1 noise
    _f("perf_vector", ArrayType(DoubleType())),  # Algorithm 1 over the category's range
    _f("is_abnormal", BooleanType()),      # two-stage: stage-2 noise
    _f("is_abnormal_1stage", BooleanType()),  # IOSI baseline: noise on (duration, volume)
    _f("bw_series", ArrayType(DoubleType())),  # bytes per second over [start, end): history
    DATE,                                  # the job's start day
])

ANOMALY = StructType([
    _f("job_id", StringType(), False),
    _f("app", StringType()),
    _f("n_phases", LongType(), False),
    _f("n_abnormal", LongType(), False),
    _f("abnormal_phases", ArrayType(IntegerType())),  # phase_no of the abnormal phases
    _f("first_abnormal_start", TimestampType()),
    _f("worst_slowdown_est", DoubleType()),  # max over them of category normal bw / phase bw
    _f("method", StringType(), False),     # two-stage
    DATE,                                  # the job's start day
])

COMPONENT_ANOMALY = StructType([
    _f("kind", StringType(), False),       # fwd | ost
    _f("component", StringType(), False),  # forwarding node or OST name
    _f("rule", StringType(), False),       # system | straggler
    _f("job_id", StringType()),            # straggler: the job; null for the system rule
    _f("start", TimestampType(), False),
    _f("end", TimestampType(), False),
    _f("duration_min", IntegerType(), False),
    _f("max_bw_fraction", DoubleType()),   # the component's largest bandwidth / its peak
    _f("peak_bw", DoubleType()),           # bytes/s, the known peak
    _f("evidence", StringType()),          # short text: why
    _f("est_slowdown", DoubleType()),      # straggler: job's median component bw / its bw
    _f("ongoing", BooleanType(), False),   # still open at the day's end
    DATE,
])

# request-size buckets of job_summary.size_hist: [edge_k, edge_k+1) bytes, last open-ended
REQUEST_SIZE_EDGES = [0, 4096, 16384, 65536, 262144, 1048576, 4194304]
REQUEST_SIZE_LABELS = ["<4K", "4K-16K", "16K-64K", "64K-256K", "256K-1M", "1M-4M", ">=4M"]

INTERFERENCE = StructType([
    _f("job_id", StringType(), False),     # the abnormal job
    _f("app", StringType()),
    _f("cause", StringType(), False),      # N:1 | high MDOPS | high bandwidth | high IOPS |
                                           # mix | multiple jobs | system anomaly | unknown
    _f("neighbour", StringType()),         # a job sharing a forwarding node; null: none
    _f("neighbour_mode", StringType()),
    _f("bw", DoubleType()),                # the neighbour's bytes/s over the abnormal phase
    _f("iops", DoubleType()),
    _f("mdops", DoubleType()),
    _f("n1", BooleanType(), False),        # interference-prone features of the neighbour
    _f("high_mdops", BooleanType(), False),
    _f("high_bw", BooleanType(), False),
    _f("high_iops", BooleanType(), False),
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

# --- TOKIO: connectors to the tools centres already run (issue #6) -------------------------
# Darshan (PyDarshan): one row per log; partition = the job's UTC start day.
DARSHAN_JOB = StructType([
    _f("log_path", StringType(), False),   # as given; the key of the log's rows
    _f("job_id", StringType(), False),     # the scheduler job id Darshan recorded
    _f("uid", LongType()),
    _f("user", StringType()),              # from the repository file name when present
    _f("exe", StringType()),               # the executable (full command line's first word)
    _f("cmdline", StringType()),
    _f("nprocs", LongType()),
    _f("start", TimestampType()),          # UTC
    _f("end", TimestampType()),
    _f("runtime_s", DoubleType()),
    _f("log_version", StringType()),
    _f("lib_version", StringType()),
    _f("hostname", StringType()),
    _f("modules", ArrayType(StringType())),
    _f("partial", BooleanType()),          # Darshan ran out of memory for some module
    _f("n_files", LongType()),
    _f("mounts", ArrayType(StringType())),  # the file systems the job touched
    _f("bytes_read", LongType()),          # POSIX (+STDIO) bytes; MPI-IO rides on POSIX
    _f("bytes_written", LongType()),
    _f("posix_opens", LongType()),
    _f("posix_reads", LongType()),
    _f("posix_writes", LongType()),
    _f("posix_stats", LongType()),
    _f("read_time_s", DoubleType()),       # summed over ranks
    _f("write_time_s", DoubleType()),
    _f("meta_time_s", DoubleType()),
    _f("io_time_slowest_s", DoubleType()),  # I/O time of the slowest rank (darshan-parser --perf)
    _f("agg_perf_mibs", DoubleType()),     # total bytes / slowest rank's I/O time, MiB/s
    DATE,
])

# Darshan per-file (per record and module) counters, with the LUSTRE module's OST list.
DARSHAN_FILE = StructType([
    _f("log_path", StringType(), False),
    _f("job_id", StringType(), False),
    _f("module", StringType(), False),     # POSIX | MPI-IO | STDIO
    _f("record_id", StringType(), False),  # Darshan's 64-bit record hash, as text
    _f("file_name", StringType()),
    _f("mount", StringType()),
    _f("fs_type", StringType()),
    _f("rank", LongType()),                # -1: shared by every rank
    _f("opens", LongType()),
    _f("reads", LongType()),
    _f("writes", LongType()),
    _f("bytes_read", LongType()),
    _f("bytes_written", LongType()),
    _f("read_time_s", DoubleType()),
    _f("write_time_s", DoubleType()),
    _f("meta_time_s", DoubleType()),
    _f("stripe_size", LongType()),         # LUSTRE module (null without it)
    _f("stripe_count", LongType()),
    _f("ost_ids", ArrayType(IntegerType())),
    DATE,
])

# LMT (schema 1.1): cumulative counters and per-interval deltas, one row per OST per sample.
# Deltas are null for a series' first sample; a counter that goes down is a reset (delta =
# the new value, `reset` true); a gap keeps its length in interval_s (no invented samples).
LMT_OST = StructType([
    _f("fs", StringType(), False),
    _f("ost", StringType(), False),        # snx11025-OST0000
    _f("oss", StringType()),
    _f("ts", TimestampType(), False),      # UTC
    _f("ts_id", LongType()),
    _f("read_bytes", LongType()),
    _f("write_bytes", LongType()),
    _f("read_bytes_delta", LongType()),
    _f("write_bytes_delta", LongType()),
    _f("interval_s", DoubleType()),
    _f("reset", BooleanType()),
    _f("ost_cpu_pct", DoubleType()),
    _f("oss_cpu_pct", DoubleType()),
    _f("oss_mem_pct", DoubleType()),
    _f("kbytes_free", LongType()),
    _f("kbytes_used", LongType()),
    _f("inodes_free", LongType()),
    _f("inodes_used", LongType()),
    DATE,
])

# LMT MDS: one row per MDT per operation per sample (the cumulative SAMPLES and its delta).
LMT_MDS = StructType([
    _f("fs", StringType(), False),
    _f("mdt", StringType(), False),        # snx11025-MDT0000
    _f("mds", StringType()),
    _f("ts", TimestampType(), False),
    _f("ts_id", LongType()),
    _f("op", StringType(), False),         # OPERATION_INFO name: open, close, getattr, ...
    _f("samples", LongType()),
    _f("samples_delta", LongType()),
    _f("interval_s", DoubleType()),
    _f("reset", BooleanType()),
    _f("mds_cpu_pct", DoubleType()),
    DATE,
])

# `lfs df` (fullness) and `lctl dl -t` (devices, failover) snapshots, one row per target.
OST_HEALTH = StructType([
    _f("source", StringType(), False),     # lfs-df | lctl-dl
    _f("host", StringType()),              # where the command ran, when known
    _f("ts", TimestampType(), False),      # snapshot time (UTC)
    _f("fs", StringType(), False),
    _f("target", StringType(), False),     # snx11035-OST0000 / -MDT0000
    _f("kind", StringType(), False),       # OST | MDT
    _f("target_index", IntegerType()),
    _f("mount", StringType()),             # lfs df
    _f("total_kib", LongType()),
    _f("used_kib", LongType()),
    _f("avail_kib", LongType()),
    _f("use_pct", DoubleType()),
    _f("status", StringType()),            # lctl dl: UP, ...
    _f("server_nid", StringType()),        # lctl dl -t: the NID serving the target
    _f("failed_over", BooleanType()),      # served by a server that carries too many targets
    DATE,
])

# `lassi summarize-job`: one row per job, the metrics of every connector (TOKIO's
# summarize_job). Partition = the job's UTC start day. Nulls where a source has nothing.
JOB_METRICS = StructType([
    _f("job_id", StringType(), False),
    _f("jobinfo_source", StringType()),    # which configured source gave start/end/nodes
    _f("user", StringType()),
    _f("app", StringType()),
    _f("fs", StringType()),                # the file system the job used most
    _f("n_nodes", LongType()),
    _f("nprocs", LongType()),
    _f("start", TimestampType()),
    _f("end", TimestampType()),
    _f("runtime_s", DoubleType()),
    _f("darshan_logs", LongType()),
    _f("darshan_bytes_read", LongType()),
    _f("darshan_bytes_written", LongType()),
    _f("darshan_opens", LongType()),
    _f("darshan_io_time_s", DoubleType()),
    _f("darshan_agg_perf_mibs", DoubleType()),
    _f("lmt_bytes_read", LongType()),      # the file system, during the job
    _f("lmt_bytes_written", LongType()),
    _f("lmt_opens_closes", LongType()),
    _f("lmt_md_ops", LongType()),
    _f("lmt_oss_cpu_mean", DoubleType()),
    _f("lmt_oss_cpu_max", DoubleType()),
    _f("lmt_mds_cpu_mean", DoubleType()),
    _f("lmt_mds_cpu_max", DoubleType()),
    _f("lmt_missing_fraction", DoubleType()),  # share of expected LMT samples absent
    _f("coverage_bw", DoubleType()),       # job bytes / file-system bytes during the job
    _f("coverage_opens", DoubleType()),    # job opens (Darshan) / file-system opens (LMT)
    _f("ost_fullest_pct", DoubleType()),
    _f("ost_mean_pct", DoubleType()),
    _f("ost_failed_over", LongType()),     # targets failed over at the nearest snapshot
    _f("concurrent_jobs", LongType()),
    _f("perf_mibs", DoubleType()),         # the job's I/O performance (Darshan, else bytes/s)
    _f("job_bytes", LongType()),           # bytes the job moved, by `bytes_source`
    _f("bytes_source", StringType()),      # darshan | lassi (export stats) | beacon (traces)
    DATE,
])

VIEW_TABLES: dict[str, StructType] = {
    "view_ost_util": VIEW_OST_UTIL,
    "view_layer_volume": VIEW_LAYER_VOLUME,
    "view_fwd_load": VIEW_FWD_LOAD,
    "view_mds_source": VIEW_MDS_SOURCE,
    "view_io_mode": VIEW_IO_MODE,
}


TABLES: dict[str, StructType] = {
    "raw_lustre_stats": RAW_LUSTRE_STATS,
    "node_window": NODE_WINDOW,
    "app_run": APP_RUN,
    "app_hour": APP_HOUR,
    "fs_hour": FS_HOUR,
    "fs_baseline": FS_BASELINE,
    "run_group": RUN_GROUP,
    "quarantine": QUARANTINE,
    "ingest_log": INGEST_LOG,
    "raw_lwfs_trace": RAW_LWFS_TRACE,
    "raw_lwfs_server": RAW_LWFS_SERVER,
    "raw_lustre_client": RAW_LUSTRE_CLIENT,
    "raw_ost": RAW_OST,
    "raw_mds": RAW_MDS,
    "fwd_map": FWD_MAP,
    "ost_map": OST_MAP,
    "trace_merged": TRACE_MERGED,
    "trace_compression": TRACE_COMPRESSION,
    "job_timeseries": JOB_TIMESERIES,
    "job_summary": JOB_SUMMARY,
    **VIEW_TABLES,
    "component_anomaly": COMPONENT_ANOMALY,
    "io_phase": IO_PHASE,
    "anomaly": ANOMALY,
    "interference": INTERFERENCE,
    "darshan_job": DARSHAN_JOB,
    "darshan_file": DARSHAN_FILE,
    "lmt_ost": LMT_OST,
    "lmt_mds": LMT_MDS,
    "ost_health": OST_HEALTH,
    "job_metrics": JOB_METRICS,
}


def schema_of(table: str) -> StructType:
    """The declared schema of a warehouse table; KeyError names unknown tables."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known: {', '.join(sorted(TABLES))}") from None


def without_date(schema: StructType) -> StructType:
    """The schema minus the partition column (what a parser produces)."""
    return StructType([f for f in schema.fields if f.name != "date"])
