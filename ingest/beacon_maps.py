"""The static maps of a forwarding site, from `conf/` -> `fwd_map` and `ost_map` (one date).

`fwd_map`: every compute node -> its forwarding node (`site.fwd_of`), both IPs and the
forwarding node's benchmarked peak bandwidth (bytes/s). `ost_map`: every OST -> its OSS
and filesystem, and the OST's peak bandwidth. A site without a forwarding layer has an
empty `fwd_map` and still an `ost_map`. Written (`map_tables`, by `lassi.ingest.writer`)
whenever a Beacon layer is ingested, so each date carries the topology it was ingested with.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from lassi.ingest.contract import TableRows

from lassi.core.config import Site


def fwd_map_rows(site: Site, date: dt.date) -> list[tuple]:
    """(node, ip, fwd, fwd_ip, fwd_peak_bw, date) for every compute node."""
    if not site.has_forwarding:
        return []
    peak = site.fwd_peak_bw
    fwd_ips = {f: site.fwd_ip(f) for f in site.fwd_nodes}
    return [(node, ip, fwd, fwd_ips[fwd], peak, date)
            for node, ip, fwd in zip(site.compute_nodes, site.node_ips, site.node_fwds,
                                     strict=True)]


def ost_map_rows(site: Site, date: dt.date) -> list[tuple]:
    """(ost, oss, fs, ost_peak_bw, date) for every OST of every filesystem."""
    return [(ost, fs.oss_of[ost], fs.name, fs.ost_peak_bw, date)
            for fs in site.filesystems for ost in fs.osts]


def map_tables(site: Site, dates: Iterable[dt.date]) -> list[TableRows]:
    """`fwd_map` and `ost_map` of each of `dates`, replacing those whole partitions."""
    ds = sorted(set(dates))
    return [TableRows(table, [r for d in ds for r in make(site, d)], ds)
            for table, make in (("fwd_map", fwd_map_rows), ("ost_map", ost_map_rows))]
