"""The analysis settings of a site as one typed, frozen object: `Site.settings`.

Built and validated once, when the site loads (`lassi.core.config.load_site`), from the
merged YAML (`conf/defaults.yaml` under `conf/sites/<name>.yaml`); every stage, tool and
report reads its thresholds from here, never from the raw mapping. A bad value fails the
load with a `ConfigError` naming the file and the dotted key, e.g.
`conf/sites/x.yaml: thresholds.alpha: expected a positive number, got 'two'`.

    settings.window_s, .baseline_days, .baseline_period(date)
    settings.thresholds    LASSi risk and slowdown, Beacon phases, components, alerts, views
    settings.risk          the counters summed into risk_oss / risk_mds
    settings.wavelet       I/O-phase denoising (lassi.beacon.phase_detect)
    settings.alerts        the component-alert sink and its backfill horizon
    settings.tokio         TOKIO job info, mounts, Darshan logs, history, significance
    settings.interference  Beacon interference-prone features (Fig. 12)
    settings.diagnosis     `lassi why` / job_diagnosis: the I/O-pattern checks and slow OSTs

The module imports neither Spark nor the rest of lassi (the counter names are read lazily),
so `lassi.core.config` stays importable anywhere.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class ConfigError(ValueError):
    """A site or Spark configuration that cannot be used, with where and why."""


# --- checks -------------------------------------------------------------------------------

_NUM = (int, float)


def need(cond: bool, where: str, what: str, got: Any) -> None:
    if not cond:
        raise ConfigError(f"{where}: expected {what}, got {got!r}")


def number(d: Mapping, key: str, where: str, *, positive: bool = True,
         integer: bool = False) -> None:
    """`d[key]` is a (positive) number or integer; `where` is 'file: dotted.parent'."""
    v = d.get(key) if isinstance(d, Mapping) else None
    ok = isinstance(v, int if integer else _NUM) and not isinstance(v, bool)
    what = ("a positive " if positive else "a ") + ("integer" if integer else "number")
    at = f"{where}{key}" if where.endswith(": ") else f"{where}.{key}"
    need(ok and (not positive or v > 0), at, what, v)


def _nonneg(d: Mapping, key: str, where: str, *, integer: bool = False) -> None:
    v = d.get(key)
    ok = isinstance(v, int if integer else _NUM) and not isinstance(v, bool) and v >= 0
    need(ok, f"{where}.{key}", "a non-negative " + ("integer" if integer else "number"), v)


def _block(data: Mapping, key: str, src: str) -> dict:
    """An optional mapping block (missing or null: empty)."""
    v = data.get(key)
    if v is None:
        return {}
    need(isinstance(v, Mapping), f"{src}: {key}", "a mapping", v)
    return dict(v)


# --- the settings -------------------------------------------------------------------------


@dataclass(frozen=True)
class Dbscan:
    """DBSCAN parameters; `scale_min_phases` only for Beacon's stage 1 (per job scale)."""

    eps: float
    min_samples: int
    scale_min_phases: int = 0

    def params(self) -> dict[str, float | int]:
        """{eps, min_samples}, as sklearn's DBSCAN takes them."""
        return {"eps": self.eps, "min_samples": self.min_samples}


# Fig. 10 forwarding-load bands (band, lowest load of the band), highest first
FWD_LOAD_BANDS: tuple[tuple[str, float], ...] = (("high", 0.9), ("mid", 0.5), ("low", 0.1))


@dataclass(frozen=True)
class Thresholds:
    """`thresholds:`. LASSi: alpha, slowdown_factor. Beacon: high_mdops, phases (dbscan_*,
    perf_vector_intervals), component anomalies (anomaly_*, large_job_nodes,
    dbscan_straggler), alerts (alert_after_hours) and the system views (optional:
    cache_thrashing_factor, write_amplification_factor, fwd_load_bands) and the SIOX
    pinpoint (optional: pinpoint_min_excess, pinpoint_min_run_excess)."""

    alpha: float
    slowdown_factor: float
    high_mdops: float
    anomaly_peak_fraction: float
    anomaly_min_minutes: int
    alert_after_hours: float
    large_job_nodes: int
    perf_vector_intervals: int
    dbscan_stage1: Dbscan
    dbscan_stage2: Dbscan
    dbscan_one_stage: Dbscan
    dbscan_straggler: Dbscan
    cache_thrashing_factor: float = 2.0
    write_amplification_factor: float = 1.2
    pinpoint_min_excess: float = 0.5   # SIOX pinpoint: a fault slows requests by >= 50 %
    pinpoint_min_run_excess: float = 0.1   # ... without service times: its runs by >= 10 %
    fwd_load_bands: tuple[tuple[str, float], ...] = FWD_LOAD_BANDS


@dataclass(frozen=True)
class Risk:
    """`risk:`: the counters whose positive risks sum into risk_oss and risk_mds."""

    oss_ops: tuple[str, ...]
    mds_ops: tuple[str, ...]


@dataclass(frozen=True)
class Wavelet:
    """`wavelet:`: I/O-phase denoising and cutting (lassi.beacon.phase_detect)."""

    name: str = "haar"
    level: int = 3
    threshold: float = 0.1
    mode: str = "soft"
    phase_fraction: float = 0.02   # burst: denoised bandwidth above this x the job's peak
    merge_gap_s: int = 30          # bursts at most this many idle seconds apart are one phase

    def as_dict(self) -> dict[str, Any]:
        """The plain mapping the numpy functions of lassi.beacon.phase_detect take."""
        return {"name": self.name, "level": self.level, "threshold": self.threshold,
                "mode": self.mode, "phase_fraction": self.phase_fraction,
                "merge_gap_s": self.merge_gap_s}


ALERT_SINKS = ("file", "smtp")


@dataclass(frozen=True)
class Alerts:
    """`alerts:`: where component alerts go (lassi.beacon.alerts). `sender` is the YAML key
    `from`. Alerts for dates more than `max_age_days` before today (UTC) are recorded but
    not delivered (a backfill never mails)."""

    sink: str = "file"
    path: str | None = "alerts.log"   # file sink; relative = under the local warehouse root
    host: str | None = None
    port: int = 25
    sender: str | None = None
    to: tuple[str, ...] = ()
    starttls: bool = False
    ssl: bool = False
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = 30.0
    max_age_days: int = 2


JOBINFO_SOURCES = ("slurm", "scheduler", "darshan")


@dataclass(frozen=True)
class Tokio:
    """`tokio:`: job-info sources (first = most trusted), Darshan mount point -> Lustre fs,
    the Darshan log repository, the UMAMI/correlate history and significance."""

    jobinfo: tuple[str, ...] = JOBINFO_SOURCES
    mounts: tuple[tuple[str, str], ...] = ()
    darshan_root: str | None = None
    history_days: int = 30
    p_value: float = 0.05


@dataclass(frozen=True)
class Interference:
    """`interference:`: a neighbour's interference-prone features (lassi.beacon.interference)."""

    high_bw_fraction: float = 0.5      # peak bandwidth >= this x a forwarding node's peak
    high_iops_fraction: float = 0.25   # peak IOPS >= this x a forwarding node's peak IOPS
    significant_share: float = 0.2     # counts with >= this share of the neighbours' load
    mdops_weight: float = 0.0          # a metadata op's weight vs a data request in that load


@dataclass(frozen=True)
class Diagnosis:
    """`diagnosis:`: the I/O-pattern checks of `lassi why` / job_diagnosis (in the spirit of
    Drishti's) and the Darshan slow-OST rule (lassi.siox.diagnosis)."""

    small_request: int = 65536         # bytes: a smaller request is small
    small_share: float = 0.5           # small-requests: at least this share of requests
    min_requests: int = 1000           # Darshan checks: a job with fewer requests is not judged
    random_share: float = 0.2          # random-access: non-sequential share of POSIX requests
    unaligned_share: float = 0.1       # unaligned: share not on the file's alignment
    rw_switch_share: float = 0.1       # read-after-write: read<->write switches per request
    collective_share: float = 0.5      # N:1 without aggregation: collective share below this
    metadata_time_share: float = 0.3   # metadata-heavy: share of the I/O time in metadata ...
    metadata_rank_s: float = 30.0      # ... and seconds of metadata per rank
    slow_ost_r: float = 0.5            # Darshan slow OST: Pearson r below minus this (and
                                       # p below tokio.p_value)


@dataclass(frozen=True)
class JobStats:
    """`jobstats:`: how a Lustre job_stats job id names a scheduler job (lassi.risk.job_window).

    `job`: a regular expression whose first group, put into `job_format` (`{}`), is the
    scheduler's job id (a suffix the scheduler does not use falls outside the group);
    `not_jobs`: expressions of ids that are no job (procname_uid of daemons and tools:
    `dd.0`); any other id is `unknown` (e.g. a node name from `jobid_name=%H`)."""

    job: str = r"^(.+)$"
    job_format: str = "{}"
    not_jobs: tuple[str, ...] = (r"^[A-Za-z_][A-Za-z0-9_-]*\.[0-9]+$",)


@dataclass(frozen=True)
class Settings:
    """Every analysis setting of a site, validated (see the module docstring)."""

    window_s: int
    baseline_days: int
    latency_buckets_s: tuple[float, ...]   # LWFS server histogram edges (validated by config)
    thresholds: Thresholds
    risk: Risk
    wavelet: Wavelet
    alerts: Alerts
    tokio: Tokio
    interference: Interference
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    jobstats: JobStats = field(default_factory=JobStats)

    def baseline_period(self, date: dt.date) -> tuple[dt.date, dt.date]:
        """First and last date of the baseline period ending with `date` (inclusive): the
        `baseline_days` days ending with it."""
        return date - dt.timedelta(days=self.baseline_days - 1), date


# --- building -----------------------------------------------------------------------------


def _dbscan(th: Mapping, key: str, where: str, fallback: str | None = None) -> Dbscan:
    d = th.get(key, th.get(fallback) if fallback else None)
    d = d if isinstance(d, Mapping) else {}
    w = f"{where}.{key}"
    number(d, "eps", w)
    number(d, "min_samples", w, integer=True)
    if "scale_min_phases" in d:
        _nonneg(d, "scale_min_phases", w, integer=True)
    return Dbscan(float(d["eps"]), int(d["min_samples"]), int(d.get("scale_min_phases", 0)))


def _thresholds(data: Mapping, src: str) -> Thresholds:
    th = data.get("thresholds")
    where = f"{src}: thresholds"
    need(isinstance(th, Mapping), where, "a mapping", th)
    for k in ("alpha", "slowdown_factor", "high_mdops", "anomaly_peak_fraction",
              "anomaly_min_minutes", "alert_after_hours"):
        number(th, k, where)
    need(th["anomaly_peak_fraction"] < 1, f"{where}.anomaly_peak_fraction",
          "a fraction below 1", th["anomaly_peak_fraction"])
    number(th, "perf_vector_intervals", where, integer=True)
    number(th, "large_job_nodes", where, integer=True)
    stage1 = _dbscan(th, "dbscan_stage1", where)
    stage2 = _dbscan(th, "dbscan_stage2", where)
    straggler = _dbscan(th, "dbscan_straggler", where)
    one_stage = _dbscan(th, "dbscan_one_stage", where, fallback="dbscan_stage1")
    optional = {}
    for k in ("cache_thrashing_factor", "write_amplification_factor", "pinpoint_min_excess",
              "pinpoint_min_run_excess"):
        if th.get(k) is not None:
            number(th, k, where)
            optional[k] = float(th[k])
    cfg = th.get("fwd_load_bands")
    if cfg is not None:
        ok = isinstance(cfg, Mapping) and {str(k) for k in cfg} == {b for b, _ in FWD_LOAD_BANDS}
        ok = ok and all(isinstance(v, _NUM) and not isinstance(v, bool) and 0 < v <= 1
                        for v in cfg.values())
        need(ok, f"{where}.fwd_load_bands", "high, mid and low cut-offs in (0, 1]", cfg)
        optional["fwd_load_bands"] = tuple(sorted(((str(k), float(v)) for k, v in cfg.items()),
                                                  key=lambda b: -b[1]))
    return Thresholds(
        alpha=float(th["alpha"]), slowdown_factor=float(th["slowdown_factor"]),
        high_mdops=float(th["high_mdops"]),
        anomaly_peak_fraction=float(th["anomaly_peak_fraction"]),
        anomaly_min_minutes=int(th["anomaly_min_minutes"]),
        alert_after_hours=float(th["alert_after_hours"]),
        large_job_nodes=int(th["large_job_nodes"]),
        perf_vector_intervals=int(th["perf_vector_intervals"]),
        dbscan_stage1=stage1, dbscan_stage2=stage2, dbscan_one_stage=one_stage,
        dbscan_straggler=straggler, **optional)


def _risk(data: Mapping, src: str) -> Risk:
    from lassi.core.schemas import ALL_COUNTERS  # local: keeps config importable without Spark

    risk = _block(data, "risk", src)
    out = {}
    for k in ("oss_ops", "mds_ops"):
        ops = risk.get(k, [])
        bad = [o for o in ops if o not in ALL_COUNTERS] if isinstance(ops, list) else ops
        need(isinstance(ops, list) and ops and not bad, f"{src}: risk.{k}",
              f"a list of counters from {ALL_COUNTERS}", bad or ops)
        out[k] = tuple(str(o) for o in ops)
    return Risk(**out)


def _wavelet(data: Mapping, src: str) -> Wavelet:
    w, where, d = _block(data, "wavelet", src), f"{src}: wavelet", Wavelet()
    for k in ("name", "mode"):
        v = w.get(k, getattr(d, k))
        need(isinstance(v, str) and v, f"{where}.{k}", "a string", v)
    c = {**d.as_dict(), **w}
    number(c, "level", where, integer=True)
    _nonneg(c, "threshold", where)
    number(c, "phase_fraction", where)
    need(c["phase_fraction"] < 1, f"{where}.phase_fraction", "a fraction below 1",
          c["phase_fraction"])
    _nonneg(c, "merge_gap_s", where, integer=True)
    return Wavelet(name=str(c["name"]), level=int(c["level"]), threshold=float(c["threshold"]),
                   mode=str(c["mode"]), phase_fraction=float(c["phase_fraction"]),
                   merge_gap_s=int(c["merge_gap_s"]))


def _opt_str(cfg: Mapping, key: str, where: str) -> str | None:
    v = cfg.get(key)
    need(v is None or isinstance(v, str), f"{where}.{key}", "a string", v)
    return v


def _alerts(data: Mapping, src: str) -> Alerts:
    cfg = _block(data, "alerts", src) or {"sink": "file", "path": "alerts.log"}
    sink = cfg.get("sink")
    out: dict[str, Any] = {"sink": sink}
    if sink == "file":
        if not isinstance(cfg.get("path"), str) or not cfg["path"]:
            raise ConfigError(f"{src}: alerts.path: expected a file path, "
                              f"got {cfg.get('path')!r}")
        out["path"] = cfg["path"]
    elif sink == "smtp":
        for k in ("host", "from"):
            if not isinstance(cfg.get(k), str) or not cfg[k]:
                raise ConfigError(f"{src}: alerts.{k}: expected a string, got {cfg.get(k)!r}")
        to = cfg.get("to")
        addrs = [to] if isinstance(to, str) else to
        if not addrs or not isinstance(addrs, list) or not all(isinstance(t, str)
                                                               for t in addrs):
            raise ConfigError(f"{src}: alerts.to: expected addresses, got {to!r}")
        port = cfg.get("port", 25)
        if isinstance(port, bool) or not isinstance(port, int) or port <= 0:
            raise ConfigError(f"{src}: alerts.port: expected a port, got {port!r}")
        out.update(host=cfg["host"], sender=cfg["from"], to=tuple(addrs), port=port,
                   path=None)
        for k in ("starttls", "ssl"):
            v = cfg.get(k, False)
            need(isinstance(v, bool), f"{src}: alerts.{k}", "true or false", v)
            out[k] = v
        for k in ("user", "password"):
            out[k] = _opt_str(cfg, k, f"{src}: alerts")
        if "timeout" in cfg:
            number(cfg, "timeout", f"{src}: alerts")
            out["timeout"] = float(cfg["timeout"])
    else:
        raise ConfigError(f"{src}: alerts.sink: expected file or smtp, got {sink!r}")
    if cfg.get("max_age_days") is not None:
        _nonneg(cfg, "max_age_days", f"{src}: alerts", integer=True)
        out["max_age_days"] = int(cfg["max_age_days"])
    return Alerts(**out)


def _tokio(data: Mapping, src: str) -> Tokio:
    cfg, where, out = _block(data, "tokio", src), f"{src}: tokio", {}
    if cfg.get("jobinfo"):
        order = cfg["jobinfo"]
        order = [order] if isinstance(order, str) else order
        bad = [s for s in order if s not in JOBINFO_SOURCES] if isinstance(order, list) \
            else [order]
        if bad:
            raise ConfigError(f"{where}.jobinfo: unknown source(s) {bad}; "
                              f"choose from {', '.join(JOBINFO_SOURCES)}")
        out["jobinfo"] = tuple(str(s) for s in order)
    mounts = cfg.get("mounts") or {}
    need(isinstance(mounts, Mapping), f"{where}.mounts", "a mapping mount -> fs", mounts)
    out["mounts"] = tuple((str(k), str(v)) for k, v in mounts.items())
    if cfg.get("darshan_root") is not None:
        out["darshan_root"] = str(cfg["darshan_root"])
    if cfg.get("history_days") is not None:
        number(cfg, "history_days", where, integer=True)
        out["history_days"] = int(cfg["history_days"])
    if cfg.get("p_value") is not None:
        number(cfg, "p_value", where)
        need(cfg["p_value"] < 1, f"{where}.p_value", "a probability below 1", cfg["p_value"])
        out["p_value"] = float(cfg["p_value"])
    return Tokio(**out)


def _interference(data: Mapping, src: str) -> Interference:
    cfg, where, out = _block(data, "interference", src), f"{src}: interference", {}
    for k in ("high_bw_fraction", "high_iops_fraction", "significant_share", "mdops_weight"):
        if cfg.get(k) is not None:
            (_nonneg if k == "mdops_weight" else number)(cfg, k, where)
            out[k] = float(cfg[k])
    return Interference(**out)


def _diagnosis(data: Mapping, src: str) -> Diagnosis:
    cfg, where, out = _block(data, "diagnosis", src), f"{src}: diagnosis", {}
    for k, v in Diagnosis().__dict__.items():
        if cfg.get(k) is not None:
            integer = isinstance(v, int)
            number(cfg, k, where, integer=integer)
            if k.endswith("_share"):
                need(cfg[k] <= 1, f"{where}.{k}", "a share at most 1", cfg[k])
            out[k] = int(cfg[k]) if integer else float(cfg[k])
    return Diagnosis(**out)


def build_settings(data: Mapping, src: str) -> Settings:
    """The settings of a merged site mapping; ConfigError names `src` and the dotted key."""
    number(data, "window_s", f"{src}: ", integer=True)
    number(data, "baseline_days", f"{src}: ", integer=True)
    return Settings(window_s=int(data["window_s"]), baseline_days=int(data["baseline_days"]),
                    latency_buckets_s=tuple(float(e) for e in data["latency_buckets_s"]),
                    thresholds=_thresholds(data, src), risk=_risk(data, src),
                    wavelet=_wavelet(data, src), alerts=_alerts(data, src),
                    tokio=_tokio(data, src), interference=_interference(data, src),
                    diagnosis=_diagnosis(data, src), jobstats=_jobstats(data, src))


def _jobstats(data: Mapping, src: str) -> JobStats:
    import re

    cfg, where, out = _block(data, "jobstats", src), f"{src}: jobstats", {}
    for key in ("job", "job_format"):
        if cfg.get(key) is not None:
            out[key] = str(cfg[key])
    nots = cfg.get("not_jobs")
    if nots is not None:
        nots = [nots] if isinstance(nots, str) else nots
        need(isinstance(nots, list), f"{where}.not_jobs", "a list of regular expressions", nots)
        out["not_jobs"] = tuple(str(x) for x in nots)
    for i, rx in enumerate([out.get("job", JobStats.job), *out.get("not_jobs", ())]):
        try:
            groups = re.compile(rx).groups
        except re.error as exc:
            raise ConfigError(f"{where}: not a regular expression {rx!r}: {exc}") from None
        need(i > 0 or groups >= 1, f"{where}.job", "an expression with a group (the job id)",
             rx)
    fmt = out.get("job_format", "{}")
    need(fmt.count("{}") == 1, f"{where}.job_format", "a text with one {}", fmt)
    return JobStats(**out)
