"""Schemas of the TOKIO tables: job_metrics (`lassi summarize-job`)."""

from __future__ import annotations

from pyspark.sql.types import (
    DoubleType,
    LongType,
    StringType,
    StructType,
    TimestampType,
)

from lassi.core.schemas.common import DATE, field

# `lassi summarize-job`: one row per job, the metrics of every connector (TOKIO's
# summarize_job). Partition = the job's UTC start day. Nulls where a source has nothing.
JOB_METRICS = StructType([
    field("job_id", StringType(), False),
    field("jobinfo_source", StringType()),    # which configured source gave start/end/nodes
    field("user", StringType()),
    field("app", StringType()),
    field("fs", StringType()),                # the file system the job used most
    field("n_nodes", LongType()),
    field("nprocs", LongType()),
    field("start", TimestampType()),
    field("end", TimestampType()),
    field("runtime_s", DoubleType()),
    field("darshan_logs", LongType()),
    field("darshan_bytes_read", LongType()),
    field("darshan_bytes_written", LongType()),
    field("darshan_opens", LongType()),
    field("darshan_io_time_s", DoubleType()),
    field("darshan_agg_perf_mibs", DoubleType()),
    field("lmt_bytes_read", LongType()),      # the file system, during the job
    field("lmt_bytes_written", LongType()),
    field("lmt_opens_closes", LongType()),
    field("lmt_md_ops", LongType()),
    field("lmt_oss_cpu_mean", DoubleType()),
    field("lmt_oss_cpu_max", DoubleType()),
    field("lmt_mds_cpu_mean", DoubleType()),
    field("lmt_mds_cpu_max", DoubleType()),
    field("lmt_missing_fraction", DoubleType()),  # share of expected LMT samples absent
    field("coverage_bw", DoubleType()),       # job bytes / file-system bytes during the job
    field("coverage_opens", DoubleType()),    # job opens (Darshan) / file-system opens (LMT)
    field("ost_fullest_pct", DoubleType()),
    field("ost_mean_pct", DoubleType()),
    field("ost_failed_over", LongType()),     # targets failed over at the nearest snapshot
    field("concurrent_jobs", LongType()),
    field("perf_mibs", DoubleType()),         # the job's I/O performance (Darshan, else bytes/s)
    field("job_bytes", LongType()),           # bytes the job moved, by `bytes_source`
    field("bytes_source", StringType()),      # darshan | lustre_stats (LASSi, export
                                              # statistics) | lustre_job_stats | beacon
    DATE,
])
