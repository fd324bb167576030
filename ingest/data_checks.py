"""Loud mismatches between a day's data and the site's configuration (`data_check` rows).

A site whose configuration does not describe its machine gets tables that parse cleanly
and attribute nothing: a Beacon site whose compute IPs differ from `conf/` saw "0 jobs with
I/O" and nothing else. After every ingest of a date, three checks read the tables just
written (one aggregate each, only the columns named):

- `lwfs-client`: trace lines whose IP the site maps to no compute or forwarding node;
- `lustre`: export statistics rows whose client NID is no compute node of the site;
- `scheduler`: runs of the date none of whose nodes is one of the site's compute nodes
  (a job log of another machine, or node names in another format).

Each check gives one `data_check` row (counts, up to three examples, and a warning when
most rows fail: more than WARN_SHARE); `lassi ingest` and `lassi run daily --raw` print the
warnings, one line each, and the daily report's data-quality box shows every check.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lassi.ingest import writer
from lassi.ingest.contract import TableRows
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lassi.core.frames import local_frame

if TYPE_CHECKING:
    from lassi.core.config import Site
    from lassi.core.warehouse import Warehouse

WARN_SHARE = 0.5          # more than this share of a source's rows unattributable: a warning
EXAMPLES = 3


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
    out = [c for c in (_trace_ips(wh, site, date), _export_nids(wh, site, date),
                       _run_nodes(wh, site, date)) if c is not None]
    rows = [(c.source, c.check, c.n_bad, c.n_total, ", ".join(c.examples) or None,
             c.warning, date) for c in out]
    writer.write_table(wh, TableRows("data_check", rows, [date]))
    return out


def _counted(df, bad, example) -> tuple[int, int, list[str]]:
    """(rows where `bad`, all rows, up to EXAMPLES distinct `example` values of bad rows)."""
    r = df.agg(F.count(F.lit(1)).alias("n"), F.count(F.when(bad, 1)).alias("bad")).first()
    if not r["bad"]:
        return 0, int(r["n"]), []
    eg = [x[0] for x in df.filter(bad).select(example).distinct()
          .orderBy(example).limit(EXAMPLES).collect()]
    return int(r["bad"]), int(r["n"]), [str(x) for x in eg]


def _trace_ips(wh: Warehouse, site: Site, date: dt.date) -> Check | None:
    if not wh.has("raw_lwfs_trace", date):
        return None
    df = wh.read("raw_lwfs_trace", date).select("node", "ip")
    bad, n, eg = _counted(df, F.col("node").isNull(), "ip")
    return Check("lwfs-client", "trace lines from IPs the site does not know", bad, n, eg,
                 f"the compute IPs of {site.source} (compute.ip_format, ip_offset) are not "
                 "this machine's: these lines belong to no node, so to no job")


def _export_nids(wh: Warehouse, site: Site, date: dt.date) -> Check | None:
    if not wh.has("raw_lustre_stats", date):
        return None
    df = (wh.read("raw_lustre_stats", date).filter(F.col("kind") == "export")
          .select("node", "nid")
          .join(_compute_nodes(wh, site).withColumn("known", F.lit(True)), "node", "left"))
    bad, n, eg = _counted(df, F.col("known").isNull(), "nid")
    return Check("lustre", "export statistics rows from clients that are no compute node of "
                 "the site", bad, n, eg, f"the client NIDs of {site.source} "
                 "(compute.nid_format, first_nid, nid_map) are not this machine's: their I/O "
                 "is attributed to no job")


def _compute_nodes(wh: Warehouse, site: Site):
    """The site's compute node names as a one-column DataFrame (`node`), broadcast."""
    return F.broadcast(local_frame(wh.spark, [(n,) for n in site.compute_nodes],
                                   StructType([StructField("node", StringType(), False)])))


def _run_nodes(wh: Warehouse, site: Site, date: dt.date) -> Check | None:
    if not wh.has("app_run", date):
        return None
    runs = (wh.read("app_run", date).filter(F.size("nodes") > 0)
            .select("app_id", "source", "nodes"))
    placed = (runs.select("app_id", "source", F.explode("nodes").alias("node"))
              .join(_compute_nodes(wh, site), "node", "left_semi")
              .select("app_id", "source").distinct().withColumn("placed", F.lit(True)))
    df = runs.join(placed, ["app_id", "source"], "left").select(
        "placed", F.concat_ws(",", F.slice("nodes", 1, 2)).alias("nodes"))
    bad, n, eg = _counted(df, F.col("placed").isNull(), "nodes")
    return Check("scheduler", "runs on no compute node of the site", bad, n, eg,
                 f"the job log names nodes that {site.source} (compute.name_format, nodes) "
                 "does not: a job log of another machine, or another node naming")
