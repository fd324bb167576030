"""Site configuration: load `conf/sites/<name>.yaml` over `conf/defaults.yaml`, validate, expand.

Validation errors are `ConfigError` with the file and the dotted key, e.g.
`conf/sites/x.yaml: thresholds.alpha: expected a positive number, got 'two'`. This module
checks and expands the topology; the analysis settings are `Site.settings`
(lassi.core.settings), built and validated by `load_site` too.
"""

from __future__ import annotations

import copy
import math
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lassi.core.settings import ConfigError, Settings, build_settings, need, number

__all__ = ["ConfigError", "Filesystem", "Site", "conf_dir", "load_site", "spark_defaults"]


def conf_dir() -> Traversable:
    """The configuration folder: $LASSI_CONF, else the package `lassi.conf` (read as a
    resource: lassi may be imported from a zip, e.g. `spark-submit --py-files lassi.zip`)."""
    env = os.environ.get("LASSI_CONF")
    return Path(env) if env else files("lassi.conf")


def conf_file(name: str) -> Path:
    """A configuration file as a path on the local disk (for the JVM): extracted to a
    temporary folder when lassi is imported from a zip."""
    res = conf_dir() / name
    if isinstance(res, Path):
        return res
    try:
        return Path(str(res)) if Path(str(res)).is_file() else _extracted(name, res)
    except OSError:
        return _extracted(name, res)


def _extracted(name: str, res: Traversable) -> Path:
    out = Path(tempfile.gettempdir()) / f"lassi-conf-{os.getuid()}" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(res.read_bytes())
    return out


def _load_yaml(path: Path | Traversable) -> dict[str, Any]:
    import yaml  # here, not at import: executors unpickle a Site without PyYAML

    try:
        with path.open() as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# --- validation -------------------------------------------------------------------------
# The topology here; the analysis settings (window_s, baseline_days, thresholds, risk,
# wavelet, alerts, tokio, interference) in lassi.core.settings.build_settings.


def _validate(data: dict, src: str) -> None:
    for key in ("name", "compute", "filesystems", "thresholds", "timezones"):
        if key not in data:
            raise ConfigError(f"{src}: missing required key {key!r}")
    where = lambda k: f"{src}: {k}"  # noqa: E731
    comp = data["compute"]
    need(isinstance(comp, dict), where("compute"), "a mapping", comp)
    number(comp, "nodes", where("compute"), integer=True)
    number(comp, "procs_per_node", where("compute"), integer=True)
    for k in ("name_format", "ip_format"):
        need(isinstance(comp.get(k), str), where(f"compute.{k}"), "a format string", comp.get(k))
    fss = data["filesystems"]
    need(isinstance(fss, list) and fss, where("filesystems"), "a non-empty list", fss)
    names = set()
    for i, fs in enumerate(fss):
        w = where(f"filesystems[{i}]")
        named = isinstance(fs, dict) and isinstance(fs.get("name"), str)
        need(named, w, "a mapping with a name", fs)
        need(fs["name"] not in names, w, "a unique filesystem name", fs["name"])
        names.add(fs["name"])
        for k in ("osts", "osts_per_oss", "mdts"):
            number(fs, k, w, integer=True)
        for k in ("ost_peak_bw", "ost_peak_iops", "mds_peak_ops"):
            number(fs, k, w)
    fwd = data.get("forwarding")
    if fwd is not None:
        for k in ("nodes_per_fwd", "threads"):
            number(fwd, k, where("forwarding"), integer=True)
        for k in ("peak_bw", "peak_iops"):
            number(fwd, k, where("forwarding"))
    for k, tz in data["timezones"].items():
        try:
            ZoneInfo(str(tz))
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"{src}: timezones.{k}: unknown time zone {tz!r}") from None
    edges = data.get("latency_buckets_s", [])
    need(isinstance(edges, list) and len(edges) == 8 and edges == sorted(edges),
          where("latency_buckets_s"), "8 ascending bucket edges", edges)


# --- the site ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Filesystem:
    """One Lustre filesystem: names of its targets and servers, and their peaks."""

    name: str
    osts: tuple[str, ...]
    oss_of: dict[str, str]
    mdts: tuple[str, ...]
    mds: str
    ost_peak_bw: float
    ost_peak_iops: float
    mds_peak_ops: float

    @property
    def osses(self) -> list[str]:
        """OSS host names in order."""
        return sorted(set(self.oss_of.values()))


MIN_PEAK_FRACTION = 0.05   # smallest share of a site's filesystem peaks a scaled site keeps


class Site:
    """A validated site: the raw merged YAML (`data`), its typed analysis `settings` and the
    expanded topology."""

    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source

    @cached_property
    def settings(self) -> Settings:
        """The analysis settings (lassi.core.settings), built and validated once; load_site
        builds them, so a bad block fails the load. Read thresholds here, not in `data`."""
        return build_settings(self.data, self.source)

    name = property(lambda self: self.data["name"])
    window_s = property(lambda self: self.settings.window_s)
    timezones = property(lambda self: self.data["timezones"])
    schedulers = property(lambda self: list(self.data.get("scheduler", [])))

    def tz(self, source: str) -> str:
        """Time zone name of a source's local timestamps (UTC when not configured)."""
        return str(self.timezones.get(source, "UTC"))

    # compute nodes
    @cached_property
    def compute_nodes(self) -> list[str]:
        """Names of all compute nodes, in nid order."""
        c = self.data["compute"]
        first = int(c.get("first_nid", 0))
        return [c["name_format"].format(first + i) for i in range(int(c["nodes"]))]

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Compute node name -> position (0-based)."""
        return {n: i for i, n in enumerate(self.compute_nodes)}

    @cached_property
    def node_ips(self) -> list[str]:
        """IP addresses of all compute nodes, in nid order."""
        c = self.data["compute"]
        off, fmt = int(c.get("ip_offset", 0)), c["ip_format"]
        return [fmt.format(hi=(i + off) // 256, lo=(i + off) % 256)
                for i in range(len(self.compute_nodes))]

    def node_ip(self, node: str) -> str:
        """IP address of a compute node."""
        return self.node_ips[self.node_index[node]]

    def node_nid(self, node: str) -> str:
        """Lustre NID of a compute node (Cray gni or o2ib on its IP)."""
        c = self.data["compute"]
        num = int(c.get("first_nid", 0)) + self.node_index[node]
        return c.get("nid_format", "{ip}@tcp").format(num, ip=self.node_ip(node))

    @cached_property
    def nid_map(self) -> dict[str, str]:
        """NID/IP -> compute node name, plus the explicit `nid_map` entries."""
        out = {}
        for n in self.compute_nodes:
            out[self.node_nid(n)] = n
            out[self.node_ip(n)] = n
        for f in self.fwd_nodes:
            out[self.fwd_ip(f)] = f
        out.update({str(k): str(v) for k, v in (self.data.get("nid_map") or {}).items()})
        return out

    # forwarding layer
    @property
    def has_forwarding(self) -> bool:
        return self.data.get("forwarding") is not None

    @cached_property
    def fwd_nodes(self) -> list[str]:
        """Forwarding node names (empty when the site has no forwarding layer)."""
        f = self.data.get("forwarding")
        if not f:
            return []
        n = math.ceil(len(self.compute_nodes) / int(f["nodes_per_fwd"]))
        return [f["name_format"].format(i) for i in range(n)]

    @cached_property
    def node_fwds(self) -> list[str]:
        """The forwarding node of each compute node, in nid order."""
        per = int(self.data["forwarding"]["nodes_per_fwd"])
        return [self.fwd_nodes[i // per] for i in range(len(self.compute_nodes))]

    def fwd_of(self, node: str) -> str:
        """The forwarding node a compute node is statically mapped to."""
        return self.node_fwds[self.node_index[node]]

    def fwd_ip(self, fwd: str) -> str:
        f = self.data["forwarding"]
        return f["ip_format"].format(n=int(f.get("ip_first", 0)) + self.fwd_nodes.index(fwd))

    @property
    def fwd_peak_bw(self) -> float:
        return float(self.data["forwarding"]["peak_bw"])

    # filesystems
    @cached_property
    def filesystems(self) -> list[Filesystem]:
        """Expanded filesystems. With forwarding, OSS count scales with forwarding nodes."""
        out = []
        for fs in self.data["filesystems"]:
            n_ost = int(fs["osts"])
            per = int(fs["osts_per_oss"])
            if self.has_forwarding and "oss_per_fwd" in fs:
                n_oss = max(2, math.ceil(len(self.fwd_nodes) * float(fs["oss_per_fwd"])))
                n_ost = min(n_ost, n_oss * per)
            osts = tuple(f"{fs['name']}-OST{i:04x}" for i in range(n_ost))
            oss_of = {o: f"{fs['name']}-oss{i // per + 1:02d}" for i, o in enumerate(osts)}
            mdts = tuple(f"{fs['name']}-MDT{i:04x}" for i in range(int(fs["mdts"])))
            out.append(Filesystem(fs["name"], osts, oss_of, mdts, f"{fs['name']}-mds01",
                                  float(fs["ost_peak_bw"]), float(fs["ost_peak_iops"]),
                                  float(fs["mds_peak_ops"])))
        return out

    def fs(self, name: str) -> Filesystem:
        for f in self.filesystems:
            if f.name == name:
                return f
        raise ConfigError(f"{self.source}: no filesystem {name!r}")

    def scaled(self, nodes: int) -> Site:
        """The same site with another compute-node count.

        With forwarding, forwarding nodes and OSSes follow the node count. Without, the
        filesystems keep their targets but their peaks shrink in proportion, so a small
        simulated site sees about the contention of the full one — down to 5 % of the
        nominal peaks: one node's demand does not shrink with the site, so below that a
        handful of nodes would saturate a whole filesystem and the day would never drain.
        """
        data = copy.deepcopy(self.data)
        nominal = int(data["compute"]["nodes"])
        data["compute"]["nodes"] = int(nodes)
        if data.get("forwarding") is None and nodes < nominal:
            f = max(nodes / nominal, MIN_PEAK_FRACTION)
            for fs in data["filesystems"]:
                for k in ("ost_peak_bw", "ost_peak_iops", "mds_peak_ops"):
                    fs[k] = float(fs[k]) * f
        return Site(data, f"{self.source} (nodes={nodes})")


def load_site(name_or_path: str, nodes: int | None = None) -> Site:
    """Load a site by name (`conf/sites/<name>.yaml`) or YAML path, validated (topology and
    `Site.settings`)."""
    p = Path(name_or_path)
    if not (p.suffix in (".yaml", ".yml") or p.exists()):
        p = conf_dir() / "sites" / f"{name_or_path}.yaml"
        if not p.is_file():
            known = sorted(x.name[:-5] for x in (conf_dir() / "sites").iterdir()
                           if x.name.endswith(".yaml"))
            raise ConfigError(f"unknown site {name_or_path!r} (known: {', '.join(known)})")
    data = _merge(_load_yaml(conf_dir() / "defaults.yaml"), _load_yaml(p))
    _validate(data, str(p))
    site = Site(data, str(p))
    if nodes is not None:
        if nodes <= 0:
            raise ConfigError(f"--nodes must be positive, got {nodes}")
        site = site.scaled(nodes)
    _ = site.settings           # built and validated now: a bad block fails the load
    return site


def spark_defaults() -> dict[str, str]:
    """Spark settings from `conf/spark-defaults.yaml`, then `$LASSI_SPARK_CONF` (k=v,k=v;
    a comma not followed by `key=` belongs to the value)."""
    out = {str(k): str(v) for k, v in _load_yaml(conf_dir() / "spark-defaults.yaml").items()}
    env = os.environ.get("LASSI_SPARK_CONF", "").strip()
    # a comma starts a new setting only before `key=` (a value such as the JVM's
    # `-Xlog:gc,safepoint` may hold commas of its own)
    for item in filter(None, (s.strip() for s in re.split(r",(?=\s*[\w.\-]+=)", env))):
        if "=" not in item:
            raise ConfigError(f"LASSI_SPARK_CONF: expected key=value, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out
