"""Loud mismatches between a day's data and the site's configuration (`data_check` rows).

A site whose configuration does not describe its machine gets tables that parse cleanly
and attribute nothing: a Beacon site whose compute IPs differ from `conf/` saw "0 jobs with
I/O" and nothing else. After every ingest of a date, three checks read the tables just
written (only the columns named; one aggregate counts all three):

- `lwfs-client`: trace lines whose IP the site maps to no compute or forwarding node;
- `lustre`: export statistics rows whose client NID is no compute node of the site;
- `scheduler`: runs of the date none of whose nodes is one of the site's compute nodes
  (a job log of another machine, or node names in another format);
- per scheduler source (`pbs`, `alps`, `slurm`, `beacon-job`): I/O outside every run of
  that source, in 10-minute node buckets (a node's trace lines, or its export counters
  moving). When most of it is, the check tries the job log's times shifted by whole hours
  (-14..+14, on a sample of at most SHIFT_NODES nodes) and names the shift that would
  place it in runs: a time zone off by hours in `timezones`.

Each check gives one `data_check` row (counts, up to three examples, and a warning when
most rows fail: more than WARN_SHARE); `lassi ingest` and `lassi run daily --raw` print the
warnings, one line each, and the daily report's data-quality box shows every check.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from lassi.ingest import writer
from lassi.ingest.contract import TableRows
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lassi.core.frames import local_frame

if TYPE_CHECKING:
    from lassi.core.config import Site
    from lassi.core.warehouse import Warehouse

WARN_SHARE = 0.5          # more than this share of a source's rows unattributable: a warning
EXAMPLES = 3
BUCKET_S = 600            # node activity against runs, in 10-minute buckets
MAX_SHIFT_H = 14          # time zones span UTC-12..UTC+14
SHIFT_NODES = 256         # the shift diagnosis samples at most this many active nodes
OUTSIDE_RUNS = "10-minute node buckets with I/O outside every run"   # the run-time checks


@dataclass(frozen=True)
class Check:
    """One check's result for a date."""

    source: str
    check: str
    n_bad: int
    n_total: int
    examples: list[str]
    cause: str

    @property
    def warning(self) -> str | None:
        """One line with the counts and the likely cause, when most rows fail."""
        if self.n_total == 0 or self.n_bad / self.n_total <= WARN_SHARE:
            return None
        eg = f" (e.g. {', '.join(self.examples)})" if self.examples else ""
        return (f"warning: {self.source}: {self.n_bad:,} of {self.n_total:,} "
                f"{self.check}{eg}: {self.cause}")


def run_checks(wh: Warehouse, site: Site, date: dt.date) -> list[Check]:
    """Every check whose table has the date; their rows replace `data_check` of the date."""
    out = _counted([c for c in (_trace_ips(wh, site, date), _export_nids(wh, site, date),
                                _run_nodes(wh, site, date)) if c is not None])
    out += _run_times(wh, site, date)
    rows = [(c.source, c.check, c.n_bad, c.n_total, ", ".join(c.examples) or None,
             c.warning, date) for c in out]
    writer.write_table(wh, TableRows("data_check", rows, [date]))
    return out


@dataclass(frozen=True)
class _RowCheck:
    """A check over a table's rows, not yet counted: `df` has the rows, `bad` says which
    fail, `example` names a failing row in the warning."""

    source: str
    check: str
    cause: str
    df: DataFrame
    bad: Column
    example: str


def _counted(pending: list[_RowCheck]) -> list[Check]:
    """Count every pending check's rows and failing rows in one Spark query (a union of
    their flags grouped by check); the examples of a check that has failing rows: up to
    EXAMPLES distinct `example` values of them, sorted."""
    if not pending:
        return []
    flags = [p.df.select(F.lit(i).alias("k"), p.bad.alias("bad"))
             for i, p in enumerate(pending)]
    counts = {r["k"]: (int(r["n"]), int(r["bad"])) for r in
              reduce(DataFrame.unionByName, flags).groupBy("k")
              .agg(F.count(F.lit(1)).alias("n"), F.count(F.when(F.col("bad"), 1)).alias("bad"))
              .collect()}                                   # one row per check
    out = []
    for i, p in enumerate(pending):
        n, bad = counts.get(i, (0, 0))
        eg = [] if not bad else [
            str(x[0]) for x in p.df.filter(p.bad).select(p.example).distinct()
            .orderBy(p.example).limit(EXAMPLES).collect()]
        out.append(Check(p.source, p.check, bad, n, eg, p.cause))
    return out


def _trace_ips(wh: Warehouse, site: Site, date: dt.date) -> _RowCheck | None:
    if not wh.has("raw_lwfs_trace", date):
        return None
    df = wh.read("raw_lwfs_trace", date).select("node", "ip")
    return _RowCheck("lwfs-client", "trace lines from IPs the site does not know",
                     f"the compute IPs of {site.source} (compute.ip_format, ip_offset) are not "
                     "this machine's: these lines belong to no node, so to no job",
                     df, F.col("node").isNull(), "ip")


def _export_nids(wh: Warehouse, site: Site, date: dt.date) -> _RowCheck | None:
    if not wh.has("raw_lustre_stats", date):
        return None
    df = (wh.read("raw_lustre_stats", date).filter(F.col("kind") == "export")
          .select("node", "nid")
          .join(_compute_nodes(wh, site).withColumn("known", F.lit(True)), "node", "left"))
    return _RowCheck("lustre", "export statistics rows from clients that are no compute "
                     "node of the site", f"the client NIDs of {site.source} "
                     "(compute.nid_format, first_nid, nid_map) are not this machine's: their "
                     "I/O is attributed to no job", df, F.col("known").isNull(), "nid")


def _compute_nodes(wh: Warehouse, site: Site):
    """The site's compute node names as a one-column DataFrame (`node`), broadcast."""
    return F.broadcast(local_frame(wh.spark, [(n,) for n in site.compute_nodes],
                                   StructType([StructField("node", StringType(), False)])))


def _run_nodes(wh: Warehouse, site: Site, date: dt.date) -> _RowCheck | None:
    if not wh.has("app_run", date):
        return None
    runs = (wh.read("app_run", date).filter(F.size("nodes") > 0)
            .select("app_id", "source", "nodes"))
    placed = (runs.select("app_id", "source", F.explode("nodes").alias("node"))
              .join(_compute_nodes(wh, site), "node", "left_semi")
              .select("app_id", "source").distinct().withColumn("placed", F.lit(True)))
    df = runs.join(placed, ["app_id", "source"], "left").select(
        "placed", F.concat_ws(",", F.slice("nodes", 1, 2)).alias("nodes"))
    return _RowCheck("scheduler", "runs on no compute node of the site",
                     f"the job log names nodes that {site.source} (compute.name_format, "
                     "nodes) does not: a job log of another machine, or another node naming",
                     df, F.col("placed").isNull(), "nodes")


# --- I/O outside every run: a job log whose times are off ----------------------------------

def _run_times(wh: Warehouse, site: Site, date: dt.date) -> list[Check]:
    """Per scheduler source of the date, active node buckets that no run of it covers (one
    Spark query for every source; examples and the shift diagnosis only when one warns)."""
    from lassi.core.period import day_bounds

    start, end = day_bounds(date)
    active = _active_buckets(wh, date, start, end)
    if active is None or not wh.has("app_run", date):
        return []
    dates = [d for d in (date - dt.timedelta(days=1), date) if wh.has("app_run", d)]
    lo, hi = (start // BUCKET_S - MAX_SHIFT_H * 6) * BUCKET_S, \
        (end // BUCKET_S + MAX_SHIFT_H * 6) * BUCKET_S
    runs = (wh.read("app_run", dates).filter(F.size("nodes") > 0)
            .filter((F.unix_seconds("end") >= lo) & (F.unix_seconds("start") < hi))
            .select("source", "nodes", "start", "end"))
    covered = (active.join(_run_buckets(runs, keep="source"), ["node", "b"])
               .groupBy("source").agg(F.count(F.lit(1)).alias("covered")))
    # per source of the runs: the buckets it covers, beside the number of active buckets
    rows = (runs.select("source").distinct().join(covered, "source", "left")
            .crossJoin(active.agg(F.count(F.lit(1)).alias("n")))
            .collect())                                     # one row per scheduler source
    # kept for a source that warns (examples, shift diagnosis read it again); cache() is
    # lazy, so a day without warnings computes the active buckets only once, above
    active = active.cache()
    try:
        return [_covered(active, r["n"], r["n"] - (r["covered"] or 0),
                         runs.filter(F.col("source") == r["source"]), r["source"], site)
                for r in sorted(rows, key=lambda r: r["source"]) if r["n"]]
    finally:
        active.unpersist()


def _active_buckets(wh: Warehouse, date: dt.date, start: int, end: int):
    """Distinct (node, bucket) of the date with I/O, or None without activity tables:
    trace lines of known nodes; export counters that moved since their previous capture."""
    from pyspark.sql import Window

    parts = []
    if wh.has("raw_lwfs_trace", date):
        parts.append(wh.read("raw_lwfs_trace", date).filter(F.col("node").isNotNull())
                     .select("node", _bucket(F.col("ts"))))
    if wh.has("raw_lustre_stats", date):
        w = Window.partitionBy("node", "target", "counter").orderBy("snapshot_time")
        moved = (wh.read("raw_lustre_stats", date)
                 .filter((F.col("kind") == "export") & F.col("node").isNotNull())
                 .select("node", "target", "counter", "samples", "snapshot_time")
                 .withColumn("before", F.lag("samples").over(w))
                 .filter(F.col("samples") != F.col("before")))
        parts.append(moved.select("node", _bucket(F.col("snapshot_time"))))
    if not parts:
        return None
    df = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    lo, hi = start // BUCKET_S, end // BUCKET_S
    return df.filter((F.col("b") >= lo) & (F.col("b") < hi)).distinct()


def _bucket(ts):
    return F.floor(F.unix_micros(ts) / (BUCKET_S * 1_000_000)).cast("long").alias("b")


def _run_buckets(runs, shift_s: int = 0, keep: str | None = None):
    """(node, bucket) of every run, its times shifted by `shift_s` seconds (with the
    column `keep` of the run when given)."""
    b0 = F.floor((F.unix_seconds("start") + shift_s) / BUCKET_S).cast("long")
    b1 = F.floor((F.unix_seconds("end") + shift_s) / BUCKET_S).cast("long")
    cols = [keep] if keep else []
    return (runs.filter(F.col("start").isNotNull() & F.col("end").isNotNull()
                        & (F.col("end") >= F.col("start")))
            .select(*cols, F.explode("nodes").alias("node"),
                    F.explode(F.sequence(b0, b1)).alias("b"))
            .distinct())


def _covered(active, n: int, bad: int, runs, src: str, site: Site) -> Check:
    """The check of one scheduler source (`bad` of the `n` active buckets outside its
    runs); when most are, examples and the likely cause."""
    key = "timezones." + src.replace("-", "_")
    cause = (f"most I/O happened on nodes while no {src} run was there: a job log of "
             "another day or machine, or missing job records")
    eg: list[str] = []
    if bad / n > WARN_SHARE:
        outside = active.join(_run_buckets(runs), ["node", "b"], "left_anti")
        eg = [f"{r['node']} "
              f"{dt.datetime.fromtimestamp(r['b'] * BUCKET_S, dt.timezone.utc):%H:%M}"
              for r in outside.orderBy("node", "b").limit(EXAMPLES).collect()]
        shift, share = _best_shift(active, runs)
        if shift and share > WARN_SHARE and share >= 2 * (1 - bad / n):
            cause = (f"the {src} times look {abs(shift)} h {'late' if shift < 0 else 'early'}"
                     f" ({share:.0%} of the sampled I/O falls in runs moved {shift:+d} h, "
                     f"{1 - bad / n:.0%} as read): check {key} in {site.source}")
    return Check(src, OUTSIDE_RUNS, bad, n, eg, cause)


def _best_shift(active, runs) -> tuple[int, float]:
    """The whole-hour shift of the runs' times that covers most of a sample of the active
    buckets, and the share it covers (shift 0 included)."""
    nodes = (active.select("node").distinct()
             .orderBy(F.xxhash64("node")).limit(SHIFT_NODES))
    sample = active.join(F.broadcast(nodes), "node", "left_semi").cache()
    try:
        total = sample.count()
        if not total:
            return 0, 0.0
        mine = runs.join(F.broadcast(nodes), F.array_contains("nodes", F.col("node")),
                         "left_semi")
        shifts = [_run_buckets(mine, h * 3600).withColumn("h", F.lit(h))
                  for h in range(-MAX_SHIFT_H, MAX_SHIFT_H + 1)]
        allb = shifts[0]
        for df in shifts[1:]:
            allb = allb.unionByName(df)
        hit = (sample.join(allb, ["node", "b"]).groupBy("h").count()
               .orderBy(F.desc("count"), F.abs("h")).first())
        return (int(hit["h"]), hit["count"] / total) if hit else (0, 0.0)
    finally:
        sample.unpersist()
