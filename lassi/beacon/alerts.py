"""Alerts for failing components (Beacon §4.3.4): one message per new anomaly.

`send_alerts(wh, site, date)` reads `component_anomaly` and alerts on

- a system-rule anomaly (joined across days, `lassi.beacon.components.joined_anomalies`) that
  includes the date and has lasted longer than `thresholds.alert_after_hours` (96 h);
- at once, every straggler of the date: stragglers are only looked for in jobs of at least
  `thresholds.large_job_nodes` nodes, where the paper reports faulty units immediately.

The sink is the site's `alerts` block (conf/defaults.yaml):

    alerts: {sink: file, path: alerts.log}
    alerts: {sink: smtp, host: mail.example.org, port: 25, from: beacon@..., to: [a@..., ...],
             starttls: false, user: ..., password: ...}      # user/password optional

A relative file path (and the sent log) lives under the warehouse root when that is local,
else under the working directory. Alerts are idempotent: each alert has a key
(`system:<kind>:<component>:<start of the joined anomaly>` or
`straggler:<job>:<kind>:<component>`) recorded in the sent log (`sent_log`, default
`_alerts/sent.log`, one key a line) once delivered; a key already there is not sent again.
"""

from __future__ import annotations

import datetime as dt
import math
import smtplib
from email.message import EmailMessage
from pathlib import Path

from lassi.core.config import ConfigError, Site
from lassi.core.warehouse import Warehouse, as_date, local_root

DEFAULT_SENT_LOG = "_alerts/sent.log"


def alert_config(site: Site) -> dict:
    """The site's `alerts` block, checked; default: a file sink `alerts.log`."""
    cfg = dict(site.data.get("alerts") or {"sink": "file", "path": "alerts.log"})
    sink = cfg.get("sink")
    if sink == "file":
        if not isinstance(cfg.get("path"), str) or not cfg["path"]:
            raise ConfigError(f"{site.source}: alerts.path: expected a file path, "
                              f"got {cfg.get('path')!r}")
    elif sink == "smtp":
        for k in ("host", "from"):
            if not isinstance(cfg.get(k), str) or not cfg[k]:
                raise ConfigError(f"{site.source}: alerts.{k}: expected a string, "
                                  f"got {cfg.get(k)!r}")
        to = cfg.get("to")
        cfg["to"] = [to] if isinstance(to, str) else to
        if not cfg["to"] or not all(isinstance(t, str) for t in cfg["to"]):
            raise ConfigError(f"{site.source}: alerts.to: expected addresses, got {to!r}")
        port = cfg.get("port", 25)
        if isinstance(port, bool) or not isinstance(port, int) or port <= 0:
            raise ConfigError(f"{site.source}: alerts.port: expected a port, got {port!r}")
        cfg["port"] = port
    else:
        raise ConfigError(f"{site.source}: alerts.sink: expected file or smtp, got {sink!r}")
    return cfg


def _place(wh: Warehouse, path: str) -> Path:
    p = Path(path)
    if p.is_absolute():
        return p
    root = local_root(wh.root)
    return (root if root is not None else Path.cwd()) / p


def _fmt_ts(ts) -> str:
    return f"{ts:%Y-%m-%d %H:%M} UTC" if ts is not None else "?"


def pending_alerts(wh: Warehouse, site: Site, date: dt.date) -> list[tuple[str, str, str]]:
    """(key, subject, body) of every alert the date calls for, sent or not."""
    from lassi.beacon.components import joined_anomalies, settings

    date = as_date(date)
    s = settings(site)
    out = []
    hours = s["alert_after_hours"]
    first = date - dt.timedelta(days=math.ceil(hours / 24) + 2)
    chains = joined_anomalies(wh, first, date).filter(
        f"last_date = DATE '{date.isoformat()}' AND duration_min > {hours * 60!r}")
    for r in chains.orderBy("kind", "component").collect():   # only the long anomalies
        what = "forwarding node" if r["kind"] == "fwd" else "OST"
        key = f"system:{r['kind']}:{r['component']}:{r['start']:%Y-%m-%dT%H:%M}"
        subject = (f"[lassi] {what} {r['component']} slow for {r['duration_min'] / 60:.0f} h "
                   f"(since {_fmt_ts(r['start'])})")
        body = (f"Component anomaly (system rule) at {site.name}\n"
                f"component: {what} {r['component']}\n"
                f"since: {_fmt_ts(r['start'])}\n"
                f"until: {_fmt_ts(r['end'])}{' (still ongoing)' if r['ongoing'] else ''}\n"
                f"duration: {r['duration_min'] / 60:.1f} h over {r['pieces']} day(s)\n"
                f"largest bandwidth: {r['max_bw_fraction']:.0%} of its peak "
                f"{r['peak_bw'] / 1e9:.2f} GB/s (threshold "
                f"{s['fraction']:.0%} for {s['min_minutes']} min; alert after {hours:g} h)\n")
        out.append((key, subject, body))
    strag = wh.read("component_anomaly", date).filter("rule = 'straggler'")
    jobs = wh.read("job_summary", date).select("job_id", "app", "n_nodes")
    rows = (strag.join(jobs, "job_id", "left")
            .orderBy("job_id", "kind", "component").collect())   # stragglers: a handful
    for r in rows:
        what = "forwarding node" if r["kind"] == "fwd" else "OST"
        key = f"straggler:{r['job_id']}:{r['kind']}:{r['component']}"
        subject = (f"[lassi] straggler {what} {r['component']} in job {r['job_id']} "
                   f"(~{r['est_slowdown']:.1f}x slower)")
        body = (f"Straggler in a large job at {site.name}\n"
                f"job: {r['job_id']} ({r['app'] or '?'}, {r['n_nodes'] or '?'} nodes)\n"
                f"component: {what} {r['component']}\n"
                f"from {_fmt_ts(r['start'])} to {_fmt_ts(r['end'])}\n"
                f"evidence: {r['evidence']}\n"
                f"estimated slowdown of the job's I/O through it: {r['est_slowdown']:.1f}x\n")
        out.append((key, subject, body))
    return out


def _sent_keys(path: Path) -> set[str]:
    return set(path.read_text().split("\n")) - {""} if path.exists() else set()


def _deliver(cfg: dict, wh: Warehouse, msgs: list[tuple[str, str, str]]) -> None:
    if cfg["sink"] == "file":
        path = _place(wh, cfg["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            for _, subject, body in msgs:
                f.write(f"Subject: {subject}\n{body}\n")
        return
    cls = smtplib.SMTP_SSL if cfg.get("ssl") else smtplib.SMTP
    with cls(cfg["host"], cfg["port"], timeout=float(cfg.get("timeout", 30))) as smtp:
        if cfg.get("starttls"):
            smtp.starttls()
        if cfg.get("user"):
            smtp.login(cfg["user"], cfg.get("password", ""))
        for _, subject, body in msgs:
            m = EmailMessage()
            m["Subject"], m["From"], m["To"] = subject, cfg["from"], ", ".join(cfg["to"])
            m.set_content(body)
            smtp.send_message(m)


def send_alerts(wh: Warehouse, site: Site, date: dt.date) -> list[str]:
    """Send the date's new alerts to the configured sink; returns their subject lines."""
    cfg = alert_config(site)
    log = _place(wh, cfg.get("sent_log", DEFAULT_SENT_LOG))
    sent = _sent_keys(log)
    new = [a for a in pending_alerts(wh, site, date) if a[0] not in sent]
    if not new:
        return []
    _deliver(cfg, wh, new)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        f.write("".join(f"{k}\n" for k, _, _ in new))
    return [subject for _, subject, _ in new]
