"""Schemas of the SIOX tables: the site's I/O path model and the components' knowledge base.

- `path_component` / `path_edge` (SIOX §4.4, Figs. 5-7): the components data passes through,
  hardware and the software layers on it, with their capacities, and the links between them.
  A site without forwarding nodes (ARCHER) links its compute nodes to the filesystem directly.
- `component_minute`: what each component did per interval (bytes, ops, request size, how
  many clients it served, and at a forwarding node the LWFS service and queueing times).
- `component_baseline` (SIOX §4.1, the knowledge base): per component, metric, request-size
  class and load class, the percentiles of `component_minute` over the baseline period;
  what "slow" is measured against.
- `component_pinpoint` (SIOX §4.4, §6): per hour, the components whose slowness explains the
  forwarding nodes' excess service time (lassi.siox.pinpoint).
- `job_path`: each job's causal path per minute and hop, with the time it lost there.
- `job_diagnosis`: why each job of the day was slow (`lassi why`), ranked causes.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampType,
)

from lassi.core.schemas.common import DATE, field

PATH_COMPONENT = StructType([
    field("component", StringType(), False),  # its name in every other table: cn00001,
                                           # nid00008, fwd003, online1-OST0002, online1-oss01
    field("kind", StringType(), False),       # compute | fwd | filesystem | mdt | ost | mds | oss
    field("level", IntegerType(), False),     # 0 compute, 1 forwarding, 2 filesystem (client
                                           # striping), 3 targets (OST/MDT), 4 servers
    field("software", ArrayType(StringType()), False),  # the layers it runs on this path
    field("host", StringType()),              # the hardware it runs on (OST -> its OSS)
    field("fs", StringType()),                # filesystem of a target, server or mount
    field("peak_bw", DoubleType()),           # bytes/s, benchmarked (null: not known)
    field("peak_iops", DoubleType()),         # requests/s (MDT/MDS: metadata ops/s)
    field("threads", IntegerType()),          # service threads (LWFS server)
    field("source", StringType(), False),     # where the row comes from: site | fwd_map | ost_map
    DATE,
])

PATH_EDGE = StructType([
    field("src", StringType(), False),        # upstream component (nearer the application)
    field("dst", StringType(), False),
    field("relation", StringType(), False),   # forwards | mounts | stripes | metadata | hosted_on
    field("traffic", StringType()),           # data+metadata | data | metadata; hosted_on: null
    DATE,
])

COMPONENT_MINUTE = StructType([
    field("component", StringType(), False),
    field("kind", StringType(), False),       # fwd | ost | mdt
    field("ts", TimestampType(), False),      # start of the interval (UTC)
    field("interval_s", IntegerType(), False),  # 60 (Beacon layers) or the capture window
    field("read_bytes", DoubleType(), False),
    field("write_bytes", DoubleType(), False),
    field("read_ops", DoubleType(), False),   # requests (OST: RPCs; fwd: LWFS requests)
    field("write_ops", DoubleType(), False),
    field("md_ops", DoubleType(), False),
    field("bw", DoubleType(), False),         # (read + write bytes) / interval_s
    field("iops", DoubleType(), False),       # (read + write ops) / interval_s
    field("size_class", StringType()),        # REQUEST_SIZE_LABELS of bytes / ops; null: no data
    field("clients", IntegerType(), False),   # distinct upstream senders in the interval
    field("load_class", StringType(), False),  # LOAD_CLASSES label of `clients`
    field("exe_s", DoubleType()),             # fwd: mean LWFS execution time of a data request
    field("wait_s", DoubleType()),            # fwd: mean LWFS queueing time of a data request
    field("queue_len", DoubleType()),         # fwd: mean LWFS queue length
    field("rpc_s", DoubleType()),             # ost: its clients' mean wait per RPC (osc)
    field("util_class", StringType()),        # ost: UTIL_CLASSES label of its utilisation
                                           # (iops / peak iops + bw / peak bw); rpc_s's load
    DATE,
])

COMPONENT_BASELINE = StructType([
    field("component", StringType(), False),
    field("kind", StringType(), False),
    field("metric", StringType(), False),     # bw | iops | md_ops | exe_s | wait_s | rpc_s
    field("size_class", StringType(), False),  # a REQUEST_SIZE_LABELS label, or 'all'
    field("load_class", StringType(), False),  # a LOAD_CLASSES label, or 'all'
    field("n", LongType(), False),            # busy intervals the percentiles are over
    field("p10", DoubleType()),
    field("p50", DoubleType()),
    field("p90", DoubleType()),
    field("mean", DoubleType()),
    field("period_start", DateType(), False),  # first and last day of the period (UTC)
    field("period_end", DateType(), False),
    DATE,                                  # the day the baseline was computed for
])

# Load classes: how many distinct clients a component served in an interval.
LOAD_CLASSES = [(1, "1"), (2, "2-3"), (4, "4-7"), (8, "8-15"), (16, "16+")]
# an OST's utilisation of its benchmarked peak: what its clients' wait per RPC (queueing)
# depends on, so the knowledge base keeps rpc_s per utilisation class
UTIL_CLASSES = [(0.0, "u<10%"), (0.1, "u10-30%"), (0.3, "u30-60%"), (0.6, "u60-90%"),
                (0.9, "u90%+")]

COMPONENT_PINPOINT = StructType([
    field("hour", TimestampType(), False),    # the period the fit covers (UTC hour)
    field("component", StringType(), False),  # a forwarding node, OST or MDT
    field("kind", StringType(), False),       # fwd | ost | mdt
    field("beta", DoubleType(), False),       # excess service time of a request through it
                                           # (0.5: 50 % slower than its knowledge base);
                                           # slow_runs: excess runtime of the runs using it
    field("explained", DoubleType(), False),  # fraction of the hour's squared excess it removes
    field("n_obs", IntegerType(), False),     # forwarding-node minutes (slow_runs: runs) it
                                           # touched
    field("rank", IntegerType(), False),      # 1 = found first (explains most)
    field("evidence", StringType()),          # rpc_wait: its clients' wait for it; lwfs_fit:
                                           # fitted to the forwarding nodes' LWFS excess;
                                           # slow_runs: fitted to the runtimes of the runs
                                           # that used it (export statistics)
    DATE,
])

JOB_PATH = StructType([
    field("job_id", StringType(), False),
    field("ts", TimestampType(), False),      # minute (UTC); export statistics: window start
    field("layer", StringType(), False),      # compute | forwarding | ost | mds
    field("component", StringType(), False),  # node, forwarding node, OST, MDS or MDT name
    field("kind", StringType(), False),       # compute | fwd | ost | mds | mdt
    field("read_bytes", DoubleType(), False),  # the job's bytes through the hop
    field("write_bytes", DoubleType(), False),
    field("ops", DoubleType(), False),        # data requests (RPCs below the compute layer)
    field("md_ops", DoubleType(), False),
    field("share", DoubleType()),             # the job's share of the component's load
    field("attribution", StringType(), False),  # exact (own trace or export statistics)
                                             # | share (profiles' rule)
    field("comp_bw", DoubleType()),           # the component's bytes/s in the minute
    field("base_bw", DoubleType()),           # its knowledge base's median at that load
    field("comp_iops", DoubleType()),
    field("base_iops", DoubleType()),
    field("lat_s", DoubleType()),             # fwd: mean LWFS execution + queueing time;
                                           # OST: its clients' mean wait per RPC (if reported)
    field("base_lat_s", DoubleType()),        # knowledge base's median of the same
    field("rate_ratio", DoubleType()),        # observed / normal (base_lat / lat where lat_s
                                           # is known, else OST/MDS: bw / base bw, weak:
                                           # demand-limited)
    field("spent_s", DoubleType()),           # fwd: the job's requests x lat / threads
    field("expected_s", DoubleType()),        # fwd: the same at the baseline's median
    field("lost_s", DoubleType(), False),     # seconds lost to this component being at fault
                                           # (export statistics: the run's LASSi lost time
                                           # x the pinpoint's part, component_pinpoint)
    field("lost_load_s", DoubleType()),       # fwd: excess not explained by a fault (load)
    DATE,
])

JOB_DIAGNOSIS = StructType([
    field("job_id", StringType(), False),
    field("rank", IntegerType(), False),      # 1 = the cause that explains most
    field("kind", StringType(), False),       # component | neighbour | pattern | history
    field("name", StringType(), False),       # component name, neighbour job id, pattern code
    field("share", DoubleType(), False),      # fraction of the job's lost time it explains
    field("lost_s", DoubleType(), False),     # seconds it explains
    field("evidence", StringType(), False),   # one sentence
    field("recommendation", StringType()),    # one sentence, or null
    field("job_lost_s", DoubleType(), False),  # the job's lost time (history or causal path)
    field("slowdown", DoubleType()),          # runtime / command group mean (LASSi)
    field("runtime_s", DoubleType()),
    field("app", StringType()),
    field("user", StringType()),
    field("start", TimestampType()),
    field("notes", ArrayType(StringType()), False),  # where the evidence is weak
    DATE,                                  # the job's start day
])
