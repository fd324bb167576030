"""SIOX stage `io_path`: the site's I/O path model (SIOX §4.4, Figs. 5-7) for one date.

Every component data passes through, from the application down to the disks, and the
software layers on it:

    compute node (application, LWFS or Lustre client)
      -> forwarding node (LWFS server, Lustre client)          [forwarding sites only]
      -> filesystem (the Lustre client's striping over targets)
      -> OST (obdfilter) / MDT (mdt)  -> hosted on their OSS / MDS

A site without forwarding nodes (ARCHER) mounts the filesystems on its compute nodes, so
its compute nodes link to the filesystem directly. Components and capacities come from the
site configuration; where ingest wrote the static maps for the date (`fwd_map`, `ost_map`)
their node -> forwarding-node links and benchmarked peaks win. Writes `path_component` and
`path_edge` (sql/siox/path_component.sql, sql/siox/path_edge.sql).
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame

from lassi.core.config import Site
from lassi.core.schemas import without_date
from lassi.core.schemas.siox import PATH_COMPONENT, PATH_EDGE
from lassi.core.sqltext import sql
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse

LWFS_CLIENT, LUSTRE_CLIENT = "LWFS client", "Lustre client"
SOFTWARE = {
    "fwd": ["LWFS server", LUSTRE_CLIENT],
    "filesystem": ["Lustre striping (LOV)"],
    "ost": ["OST service (obdfilter)"],
    "mdt": ["MDT service (mdt)"],
    "oss": ["OSS"],
    "mds": ["MDS"],
}
LEVEL = {"compute": 0, "fwd": 1, "filesystem": 2, "ost": 3, "mdt": 3, "oss": 4, "mds": 4}


def _component(name: str, kind: str, *, host: str | None = None, fs: str | None = None,
               bw: float | None = None, iops: float | None = None,
               threads: int | None = None, software: list[str] | None = None) -> tuple:
    """One path_component row (without date) of the site configuration."""
    return (name, kind, LEVEL[kind], software or SOFTWARE[kind], host or name, fs, bw, iops,
            threads, "site")


def site_components(site: Site) -> list[tuple]:
    """path_component rows (no date) of the site configuration, compute nodes first."""
    client = ["application", LWFS_CLIENT if site.has_forwarding else LUSTRE_CLIENT]
    rows = [_component(n, "compute", software=client) for n in site.compute_nodes]
    fwd = site.data.get("forwarding") or {}
    rows += [_component(f, "fwd", bw=site.fwd_peak_bw, iops=float(fwd["peak_iops"]),
                        threads=int(fwd.get("threads", 0)) or None) for f in site.fwd_nodes]
    for fs in site.filesystems:
        rows.append(_component(fs.name, "filesystem", fs=fs.name,
                               bw=fs.ost_peak_bw * len(fs.osts),
                               iops=fs.ost_peak_iops * len(fs.osts)))
        rows += [_component(o, "ost", host=fs.oss_of[o], fs=fs.name, bw=fs.ost_peak_bw,
                            iops=fs.ost_peak_iops) for o in fs.osts]
        rows += [_component(m, "mdt", host=fs.mds, fs=fs.name, iops=fs.mds_peak_ops)
                 for m in fs.mdts]
        for oss in fs.osses:
            n = sum(1 for o in fs.osts if fs.oss_of[o] == oss)
            rows.append(_component(oss, "oss", fs=fs.name, bw=fs.ost_peak_bw * n,
                                   iops=fs.ost_peak_iops * n))
        rows.append(_component(fs.mds, "mds", fs=fs.name, iops=fs.mds_peak_ops))
    return rows


def site_edges(site: Site) -> list[tuple]:
    """path_edge rows (no date) of the site configuration."""
    rows: list[tuple] = []
    clients = site.fwd_nodes if site.has_forwarding else site.compute_nodes
    if site.has_forwarding:
        rows += [(n, site.fwd_of(n), "forwards", "data+metadata") for n in site.compute_nodes]
    for fs in site.filesystems:
        rows += [(c, fs.name, "mounts", "data+metadata") for c in clients]
        rows += [(fs.name, o, "stripes", "data") for o in fs.osts]
        rows += [(fs.name, m, "metadata", "metadata") for m in fs.mdts]
        rows += [(o, fs.oss_of[o], "hosted_on", None) for o in fs.osts]
        rows += [(m, fs.mds, "hosted_on", None) for m in fs.mdts]
    return rows


def register_inputs(wh: Warehouse, site: Site, date: dt.date) -> None:
    """Views `site_component`, `site_edge` (configuration), `fwd_map`, `ost_map` (the date's
    static maps, possibly empty) and `site_fwd` (the forwarding peaks of the configuration)."""
    spark = wh.spark
    spark.createDataFrame(site_components(site), without_date(PATH_COMPONENT)) \
        .createOrReplaceTempView("site_component")
    spark.createDataFrame(site_edges(site), without_date(PATH_EDGE)) \
        .createOrReplaceTempView("site_edge")
    wh.read("fwd_map", [date]).createOrReplaceTempView("fwd_map")
    wh.read("ost_map", [date]).createOrReplaceTempView("ost_map")


def path_tables(wh: Warehouse, site: Site, date: dt.date) -> tuple[DataFrame, DataFrame]:
    """(path_component, path_edge) of `date` (needs `register_inputs`)."""
    d = date.isoformat()
    comps = wh.spark.sql(sql("siox/path_component", date=d))
    edges = wh.spark.sql(sql("siox/path_edge", date=d))
    return comps, edges


@scoped
def build_io_path(wh: Warehouse, site: Site, date: dt.date) -> str:
    """Stage `io_path`: write path_component and path_edge of `date`; one-line summary."""
    register_inputs(wh, site, date)
    comps, edges = (df.localCheckpoint() for df in path_tables(wh, site, date))
    wh.write(comps, "path_component", [date])
    wh.write(edges, "path_edge", [date])
    n = comps.groupBy("kind").count().collect()          # one row per kind: bounded
    order = list(LEVEL)
    kinds = ", ".join(f"{r['count']} {r['kind']}"
                      for r in sorted(n, key=lambda r: order.index(r["kind"])))
    return f"{kinds}; {edges.count()} links"
