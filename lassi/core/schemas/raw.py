"""Schemas of the tables ingest writes (raw_*, app_run, maps, TOKIO connectors, quarantine)."""

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

from lassi.core.schemas.common import BEACON_MDS_OPS, DATE, field

RAW_LUSTRE_STATS = StructType([
    field("server", StringType()),        # host the capture came from (OSS/MDS), if known
    field("target", StringType(), False),  # e.g. fs2-OST0003, fs2-MDT0000
    field("fs", StringType(), False),      # prefix of the target name
    field("kind", StringType(), False),    # export | target | job
    field("nid", StringType()),            # client NID for export stats
    field("node", StringType()),           # node name the NID maps to
    field("job_id", StringType()),         # job_stats only
    field("snapshot_time", TimestampType(), False),
    field("counter", StringType(), False),  # Lustre's own counter name (read_bytes, open, ...)
    field("samples", LongType(), False),
    field("unit", StringType()),
    field("min", LongType()),
    field("max", LongType()),
    field("sum", LongType()),
    field("sumsq", DoubleType()),
    field("start_time", TimestampType()),   # newer Lustre: when the counters were (re)started
    field("file", StringType()),
    DATE,
])

APP_RUN = StructType([
    field("app_id", StringType(), False),   # ALPS apid, Slurm step id, or the job id
    field("job_id", StringType(), False),
    field("user", StringType()),
    field("project", StringType()),
    field("job_name", StringType()),
    field("exe", StringType()),
    field("command", StringType()),         # exact launch command
    field("nodes", ArrayType(StringType())),
    field("n_nodes", IntegerType()),
    field("n_procs", IntegerType()),
    field("start", TimestampType()),
    field("end", TimestampType()),
    field("exit_status", IntegerType()),
    field("source", StringType(), False),   # alps | slurm | pbs | beacon-job
    # The slowdown analysis of a launch is in run_slowdown (risk), keyed (app_id, source, date).
    DATE,
])

QUARANTINE = StructType([
    field("source", StringType(), False),
    field("file", StringType(), False),
    field("line_no", IntegerType(), False),
    field("raw", StringType()),
    field("reason", StringType(), False),
    field("ingested_at", TimestampType(), False),
    DATE,
])

INGEST_LOG = StructType([
    field("source", StringType(), False),
    field("files", IntegerType(), False),
    field("lines_read", LongType(), False),
    field("lines_used", LongType(), False),
    field("lines_quarantined", LongType(), False),
    field("rows", LongType(), False),
    field("counter_resets", LongType(), False),
    field("ingested_at", TimestampType(), False),
    DATE,
])

DATA_CHECK = StructType([                      # ingest.data_checks: data against conf/
    field("source", StringType(), False),     # lwfs-client | lustre | scheduler
    field("check", StringType(), False),      # what n_bad counts
    field("n_bad", LongType(), False),
    field("n_total", LongType(), False),
    field("examples", StringType()),          # up to three offending identities
    field("warning", StringType()),           # the one-line warning, when most rows fail
    DATE,
])

RAW_LWFS_TRACE = StructType([
    field("node", StringType()),              # compute node name (from the IP through conf/)
    field("ip", StringType(), False),         # node identity in the trace
    field("ts", TimestampType(), False),      # UTC, millisecond precision
    field("op", StringType(), False),         # OPEN CLOSE READ WRITE STAT MKDIR UNLINK ...
    field("fd", StringType()),                # as written (hex handle)
    field("offset", LongType()),              # READ/WRITE: first byte
    field("size", LongType()),                # READ/WRITE: bytes per request
    field("count", LongType(), False),        # requests this line stands for (first pass), >= 1
    field("path", StringType()),              # metadata operations
    field("file", StringType()),
    DATE,
])

RAW_LWFS_SERVER = StructType([
    field("fwd", StringType()),               # forwarding node name (from the IP through conf/)
    field("ip", StringType(), False),
    field("ts", TimestampType(), False),      # the line's UTC time
    field("local_ts", TimestampType()),       # the bracketed local time, as written
    field("op_class", StringType(), False),   # Meta | Read | Write | Queue
    field("kind", StringType(), False),       # exe | wait | length
    field("hist", ArrayType(LongType())),     # cumulative latency histogram (8 buckets)
    field("hist_delta", ArrayType(LongType())),  # per-interval counts; null for a first sample
    field("requests", LongType()),            # sum of hist_delta
    field("queue_len", LongType()),           # Queue lines only (a gauge)
    field("reset", BooleanType(), False),     # a counter went down since the previous sample
    field("file", StringType()),
    DATE,
])

RAW_LUSTRE_CLIENT = StructType([
    field("fwd", StringType()),
    field("ip", StringType(), False),
    field("ts", TimestampType(), False),
    field("ost", StringType(), False),
    field("read_rpc", LongType(), False),     # cumulative
    field("write_rpc", LongType(), False),
    field("pages_per_rpc", LongType()),       # the interval's average, 4 KiB pages
    field("read_rpc_delta", LongType()),      # null for a first sample
    field("write_rpc_delta", LongType()),
    field("interval_s", DoubleType()),
    field("reset", BooleanType(), False),
    field("file", StringType()),
    # optional 7th field: cumulative osc req_waittime sum (µs); null when not collected
    field("rpc_wait_us", LongType()),
    field("rpc_wait_us_delta", LongType()),
    DATE,
])

RAW_OST = StructType([
    field("ost", StringType(), False),
    field("oss", StringType(), False),
    field("ts", TimestampType(), False),
    field("read_rpc", LongType(), False),     # cumulative
    field("write_rpc", LongType(), False),
    field("pages_per_rpc", LongType()),
    field("read_bytes", LongType(), False),   # cumulative
    field("write_bytes", LongType(), False),
    field("read_rpc_delta", LongType()),
    field("write_rpc_delta", LongType()),
    field("read_bytes_delta", LongType()),
    field("write_bytes_delta", LongType()),
    field("interval_s", DoubleType()),
    field("reset", BooleanType(), False),
    field("file", StringType()),
    DATE,
])

RAW_MDS = StructType(
    [
        field("mds", StringType(), False),    # the MDS host the file came from
        field("source", StringType(), False),  # requesting host or IP as written
        field("source_node", StringType()),    # its name through conf/ (forwarding node ...)
        field("source_kind", StringType(), False),  # forwarding | login | cluster | other
        field("ts", TimestampType(), False),
    ]
    + [field(op, LongType()) for op in BEACON_MDS_OPS]           # per-interval deltas
    + [
        field("ops", LongType()),             # sum of the deltas; null for a first sample
        field("cumulative", ArrayType(LongType())),  # the line's counters, BEACON_MDS_OPS order
        field("interval_s", DoubleType()),
        field("reset", BooleanType(), False),
        field("file", StringType()),
        DATE,
    ]
)

FWD_MAP = StructType([
    field("node", StringType(), False),       # compute node
    field("ip", StringType()),
    field("fwd", StringType(), False),
    field("fwd_ip", StringType()),
    field("fwd_peak_bw", DoubleType()),       # bytes/s, benchmarked
    DATE,
])

OST_MAP = StructType([
    field("ost", StringType(), False),
    field("oss", StringType(), False),
    field("fs", StringType(), False),
    field("ost_peak_bw", DoubleType()),       # bytes/s, benchmarked
    DATE,
])

# --- TOKIO: connectors to the tools centres already run (issue #6) -------------------------
# Darshan (PyDarshan): one row per log; partition = the job's UTC start day.
DARSHAN_JOB = StructType([
    field("log_path", StringType(), False),   # as given; the key of the log's rows
    field("job_id", StringType(), False),     # the scheduler job id Darshan recorded
    field("uid", LongType()),
    field("user", StringType()),              # from the repository file name when present
    field("exe", StringType()),               # the executable (full command line's first word)
    field("cmdline", StringType()),
    field("nprocs", LongType()),
    field("start", TimestampType()),          # UTC
    field("end", TimestampType()),
    field("runtime_s", DoubleType()),
    field("log_version", StringType()),
    field("lib_version", StringType()),
    field("hostname", StringType()),
    field("modules", ArrayType(StringType())),
    field("partial", BooleanType()),          # Darshan ran out of memory for some module
    field("n_files", LongType()),
    field("mounts", ArrayType(StringType())),  # the file systems the job touched
    field("bytes_read", LongType()),          # POSIX (+STDIO) bytes; MPI-IO rides on POSIX
    field("bytes_written", LongType()),
    field("posix_opens", LongType()),
    field("posix_reads", LongType()),
    field("posix_writes", LongType()),
    field("posix_stats", LongType()),
    field("read_time_s", DoubleType()),       # summed over ranks
    field("write_time_s", DoubleType()),
    field("meta_time_s", DoubleType()),
    field("io_time_slowest_s", DoubleType()),  # slowest rank's I/O time (darshan-parser --perf)
    field("agg_perf_mibs", DoubleType()),     # total bytes / slowest rank's I/O time, MiB/s
    DATE,
])

# Darshan per-file (per record and module) counters, with the LUSTRE module's OST list.
DARSHAN_FILE = StructType([
    field("log_path", StringType(), False),
    field("job_id", StringType(), False),
    field("module", StringType(), False),     # POSIX | MPI-IO | STDIO
    field("record_id", StringType(), False),  # Darshan's 64-bit record hash, as text
    field("file_name", StringType()),
    field("mount", StringType()),
    field("fs_type", StringType()),
    field("rank", LongType()),                # -1: shared by every rank
    field("opens", LongType()),
    field("reads", LongType()),
    field("writes", LongType()),
    field("bytes_read", LongType()),
    field("bytes_written", LongType()),
    field("read_time_s", DoubleType()),
    field("write_time_s", DoubleType()),
    field("meta_time_s", DoubleType()),
    field("stripe_size", LongType()),         # LUSTRE module (null without it)
    field("stripe_count", LongType()),
    field("ost_ids", ArrayType(IntegerType())),
    # access pattern (Drishti-style checks in job_diagnosis); null where not kept
    field("seq_reads", LongType()),           # POSIX: at a higher offset than the last
    field("seq_writes", LongType()),
    field("rw_switches", LongType()),         # POSIX/MPI-IO: read <-> write alternations
    field("file_not_aligned", LongType()),    # POSIX: accesses not on the file alignment
    field("mem_not_aligned", LongType()),
    field("coll_ops", LongType()),            # MPI-IO: collective reads + writes
    # access sizes: counts per Darshan bucket (DARSHAN_SIZE_EDGES: 0-100 B, 100 B-1 KiB,
    # ... 1 GiB+); POSIX: each call, MPI-IO: the aggregate request
    field("read_size_hist", ArrayType(LongType())),
    field("write_size_hist", ArrayType(LongType())),
    DATE,
])

# LMT (schema 1.1): cumulative counters and per-interval deltas, one row per OST per sample.
# Deltas are null for a series' first sample; a counter that goes down is a reset (delta =
# the new value, `reset` true); a gap keeps its length in interval_s (no invented samples).
LMT_OST = StructType([
    field("fs", StringType(), False),
    field("ost", StringType(), False),        # snx11025-OST0000
    field("oss", StringType()),
    field("ts", TimestampType(), False),      # UTC
    field("ts_id", LongType()),
    field("read_bytes", LongType()),
    field("write_bytes", LongType()),
    field("read_bytes_delta", LongType()),
    field("write_bytes_delta", LongType()),
    field("interval_s", DoubleType()),
    field("reset", BooleanType()),
    field("ost_cpu_pct", DoubleType()),
    field("oss_cpu_pct", DoubleType()),
    field("oss_mem_pct", DoubleType()),
    field("kbytes_free", LongType()),
    field("kbytes_used", LongType()),
    field("inodes_free", LongType()),
    field("inodes_used", LongType()),
    DATE,
])

# LMT MDS: one row per MDT per operation per sample (the cumulative SAMPLES and its delta).
LMT_MDS = StructType([
    field("fs", StringType(), False),
    field("mdt", StringType(), False),        # snx11025-MDT0000
    field("mds", StringType()),
    field("ts", TimestampType(), False),
    field("ts_id", LongType()),
    field("op", StringType(), False),         # OPERATION_INFO name: open, close, getattr, ...
    field("samples", LongType()),
    field("samples_delta", LongType()),
    field("interval_s", DoubleType()),
    field("reset", BooleanType()),
    field("mds_cpu_pct", DoubleType()),
    DATE,
])

# `lfs df` (fullness) and `lctl dl -t` (devices, failover) snapshots, one row per target.
OST_HEALTH = StructType([
    field("source", StringType(), False),     # lfs-df | lctl-dl
    field("host", StringType()),              # where the command ran, when known
    field("ts", TimestampType(), False),      # snapshot time (UTC)
    field("fs", StringType(), False),
    field("target", StringType(), False),     # snx11035-OST0000 / -MDT0000
    field("kind", StringType(), False),       # OST | MDT
    field("target_index", IntegerType()),
    field("mount", StringType()),             # lfs df
    field("total_kib", LongType()),
    field("used_kib", LongType()),
    field("avail_kib", LongType()),
    field("use_pct", DoubleType()),
    field("status", StringType()),            # lctl dl: UP, ...
    field("server_nid", StringType()),        # lctl dl -t: the NID serving the target
    field("failed_over", BooleanType()),      # served by a server that carries too many targets
    DATE,
])
