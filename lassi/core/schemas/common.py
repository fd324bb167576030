"""Shared schema pieces: LASSi counter names, the `date` partition field, request-size and
latency buckets."""

from __future__ import annotations

from pyspark.sql.types import (
    DateType,
    DoubleType,
    LongType,
    StructField,
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

def field(name: str, dtype, nullable: bool = True) -> StructField:
    """A StructField, nullable unless said otherwise."""
    return StructField(name, dtype, nullable)

DATE = field("date", DateType(), False)

# Ops whose risks make up risk_oss; the MDS op set is configurable (thresholds.risk.mds_ops).
RISK_COLS = [f"r_{c}" for c in ALL_COUNTERS]

def counter_fields() -> list[StructField]:
    """The LASSi counters as non-null fields (kB as doubles, ops as longs)."""
    return [field(c, DoubleType() if c.endswith("_kb") else LongType(), False)
            for c in ALL_COUNTERS]

# --- Beacon layers (issue #4; FORMATS.md §4) ---------------------------------------------------
# Lustre MDS operation names of the Beacon MDS layer, in the order the simulator writes them.
BEACON_MDS_OPS = [
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr",
    "setattr", "getxattr", "setxattr", "statfs", "sync", "samedir_rename", "crossdir_rename",
]

LATENCY_BUCKETS = 8

# request-size buckets of job_summary.size_hist: [edge_k, edge_k+1) bytes, last open-ended
REQUEST_SIZE_EDGES = [0, 4096, 16384, 65536, 262144, 1048576, 4194304]

REQUEST_SIZE_LABELS = ["<4K", "4K-16K", "16K-64K", "64K-256K", "256K-1M", "1M-4M", ">=4M"]

# Darshan's access-size buckets of darshan_file.read/write_size_hist (lower edges, bytes;
# Darshan's 0_100, 100_1K, 1K_10K, ..., 1G_PLUS with 1K = 1024)
DARSHAN_SIZE_EDGES = [0, 100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600,
                      1073741824]
