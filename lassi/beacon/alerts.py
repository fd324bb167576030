"""Stage `alerts`: alerts for failing components (Beacon §4.3.4), one message per anomaly.

Runs after `component_anomaly`. `build_alerts(wh, site, date)` alerts on

- a system-rule anomaly (joined across days, `lassi.beacon.components.joined_anomalies`) that
  includes the date and has lasted longer than `thresholds.alert_after_hours` (96 h);
- at once, every straggler of the date: stragglers are only looked for in jobs of at least
  `thresholds.large_job_nodes` nodes, where the paper reports faulty units immediately.

Each alert has a key (`system:<kind>:<component>:<start of the joined anomaly>` or
`straggler:<job>:<kind>:<component>`). Every alert the date calls for is a row of the table
`alert` in the date's partition, which each run rewrites, with its status:

- `sent`: delivered by this stage for this date. A rerun of the date keeps these rows as
  they were (also those an updated component_anomaly no longer calls for: the table is the
  record of what was delivered), so it sends nothing new;
- `already sent`: the key was delivered before (a `sent` row in any partition of `alert`;
  `sent_at` is that delivery): a key is never sent twice;
- `not sent: backfill`: the date is more than `alerts.max_age_days` (2) days before today
  (UTC). Recorded, not delivered, so a backfill never mails; the key stays deliverable for
  a current date.

Delivery happens before the partition is written: a failed delivery fails the stage and
writes nothing, so the retry sends again (with SMTP, the messages that went out before the
failure then go a second time: at least once, never silently lost).

The sink is `site.settings.alerts` (conf/defaults.yaml `alerts:`, lassi.core.settings):

    alerts: {sink: file, path: alerts.log}
    alerts: {sink: smtp, host: mail.example.org, port: 25, from: beacon@..., to: [a@..., ...],
             starttls: false, ssl: false, user: ..., password: ..., timeout: 30}   # optional

A relative file path lives under the warehouse root when that is local, else under the
working directory.
"""

from __future__ import annotations

import datetime as dt
import math
import smtplib
from email.message import EmailMessage
from pathlib import Path

from pyspark.sql import functions as F

from lassi.beacon.components import joined_anomalies
from lassi.core.config import Site
from lassi.core.schemas import ALERT
from lassi.core.settings import Alerts
from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, as_date, days, local_root

SENT, ALREADY_SENT, BACKFILL = "sent", "already sent", "not sent: backfill"
_FIELDS = ALERT.fieldNames()


def _place(wh: Warehouse, path: str) -> Path:
    p = Path(path)
    if p.is_absolute():
        return p
    root = local_root(wh.root)
    return (root if root is not None else Path.cwd()) / p


def _fmt_ts(ts) -> str:
    return f"{ts:%Y-%m-%d %H:%M} UTC" if ts is not None else "?"


def _what(kind: str) -> str:
    return "forwarding node" if kind == "fwd" else "OST"


def pending_alerts(wh: Warehouse, site: Site, date: dt.date) -> list[dict]:
    """Every alert the date calls for, sent or not: dicts with key, kind, component_kind,
    component, job_id, subject, body (system alerts first, then stragglers)."""
    date = as_date(date)
    th = site.settings.thresholds
    hours = th.alert_after_hours
    first = date - dt.timedelta(days=math.ceil(hours / 24) + 2)
    if not any(wh.has("component_anomaly", d) for d in days(first, date)):
        return []
    out = []
    chains = joined_anomalies(wh, first, date).filter(
        f"last_date = DATE '{date.isoformat()}' AND duration_min > {hours * 60!r}")
    for r in chains.orderBy("kind", "component").collect():   # only the long anomalies
        what = _what(r["kind"])
        subject = (f"[lassi] {what} {r['component']} slow for {r['duration_min'] / 60:.0f} h "
                   f"(since {_fmt_ts(r['start'])})")
        body = (f"Component anomaly (system rule) at {site.name}\n"
                f"component: {what} {r['component']}\n"
                f"since: {_fmt_ts(r['start'])}\n"
                f"until: {_fmt_ts(r['end'])}{' (still ongoing)' if r['ongoing'] else ''}\n"
                f"duration: {r['duration_min'] / 60:.1f} h over {r['pieces']} day(s)\n"
                f"largest bandwidth: {r['max_bw_fraction']:.0%} of its peak "
                f"{r['peak_bw'] / 1e9:.2f} GB/s (threshold "
                f"{th.anomaly_peak_fraction:.0%} for {th.anomaly_min_minutes} min; "
                f"alert after {hours:g} h)\n")
        out.append({"key": f"system:{r['kind']}:{r['component']}:{r['start']:%Y-%m-%dT%H:%M}",
                    "kind": "system", "component_kind": r["kind"],
                    "component": r["component"], "job_id": None,
                    "subject": subject, "body": body})
    strag = wh.read("component_anomaly", date).filter("rule = 'straggler'")
    jobs = wh.read("job_summary", date).select("job_id", "app", "n_nodes")
    rows = (strag.join(jobs, "job_id", "left")
            .orderBy("job_id", "kind", "component").collect())   # stragglers: a handful
    for r in rows:
        what = _what(r["kind"])
        subject = (f"[lassi] straggler {what} {r['component']} in job {r['job_id']} "
                   f"(~{r['est_slowdown']:.1f}x slower)")
        body = (f"Straggler in a large job at {site.name}\n"
                f"job: {r['job_id']} ({r['app'] or '?'}, {r['n_nodes'] or '?'} nodes)\n"
                f"component: {what} {r['component']}\n"
                f"from {_fmt_ts(r['start'])} to {_fmt_ts(r['end'])}\n"
                f"evidence: {r['evidence']}\n"
                f"estimated slowdown of the job's I/O through it: {r['est_slowdown']:.1f}x\n")
        out.append({"key": f"straggler:{r['job_id']}:{r['kind']}:{r['component']}",
                    "kind": "straggler", "component_kind": r["kind"],
                    "component": r["component"], "job_id": r["job_id"],
                    "subject": subject, "body": body})
    return out


def _deliver(cfg: Alerts, wh: Warehouse, msgs: list[dict]) -> None:
    """Send `msgs` to the sink; raises on failure (the stage fails, nothing is recorded)."""
    if cfg.sink == "file":
        path = _place(wh, str(cfg.path))
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            for m in msgs:
                f.write(f"Subject: {m['subject']}\n{m['body']}\n")
        return
    cls = smtplib.SMTP_SSL if cfg.ssl else smtplib.SMTP
    with cls(cfg.host, cfg.port, timeout=cfg.timeout) as smtp:
        if cfg.starttls:
            smtp.starttls()
        if cfg.user:
            smtp.login(cfg.user, cfg.password or "")
        for a in msgs:
            m = EmailMessage()
            m["Subject"], m["From"], m["To"] = a["subject"], cfg.sender, ", ".join(cfg.to)
            m.set_content(a["body"])
            smtp.send_message(m)


def _utc_today() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


@scoped
def build_alerts(wh: Warehouse, site: Site, date: dt.date, *,
                 today: dt.date | None = None) -> str:
    """Stage `alerts`: deliver the date's new alerts, then write the date's `alert` rows
    (see the module docstring for statuses, deduplication and backfills); a one-line
    summary. `today` (default: today in UTC) decides what is a backfill.

    Delivery precedes the write: if it fails, the stage fails with nothing recorded and a
    retry sends again."""
    date = as_date(date)
    cfg = site.settings.alerts
    backfill = ((today or _utc_today()) - date).days > cfg.max_age_days
    pending = pending_alerts(wh, site, date)
    if not pending and not wh.has("alert", date):
        return "no alerts for the day"
    log = (wh.read("alert").filter(F.col("sent_at").isNotNull())
           .select("key", "status", "sent_at", "date").collect())   # small: alerts only
    ours = {r["key"]: r for r in log if r["status"] == SENT and r["date"] == date}
    delivered: dict[str, dt.datetime] = {}
    for r in log:
        if r["key"] not in delivered or r["sent_at"] < delivered[r["key"]]:
            delivered[r["key"]] = r["sent_at"]
    kept = {}
    if ours:     # this date's earlier deliveries stay as they were
        for r in wh.read("alert", date).filter(F.col("status") == SENT).collect():
            kept[r["key"]] = r.asDict()
    rows, new, seen = [], [], set(kept)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for a in pending:
        if a["key"] in seen:
            continue
        seen.add(a["key"])
        if a["key"] in delivered:
            rows.append({**a, "status": ALREADY_SENT, "sent_at": delivered[a["key"]]})
        elif backfill:
            rows.append({**a, "status": BACKFILL, "sent_at": None})
        else:
            new.append({**a, "status": SENT, "sent_at": now})
    if new:
        _deliver(cfg, wh, new)
    out = [*kept.values(), *new, *rows]
    if out or wh.has("alert", date):
        wh.write_rows([tuple({**r, "date": date}[k] for k in _FIELDS) for r in out], "alert",
                      [date])
    n_old = sum(r["status"] == ALREADY_SENT for r in rows)
    parts = [f"{len(new)} sent", f"{len(kept)} sent by an earlier run of the day",
             f"{n_old} already sent"]
    if backfill:
        parts.append(f"{len(rows) - n_old} not sent (backfill: the date is more than "
                     f"{cfg.max_age_days} days ago)")
    return f"{len(out)} alerts: " + ", ".join(parts)
