"""`lassi evaluate`: detection quality against the simulator's ground truth (issue #5).

Reads truth.json (what `lassi simulate` wrote) and the warehouse's detection tables for the
simulated period up to `date`, and scores each detector: abnormal I/O phases (two-stage and
the one-stage baseline), and failing components when that stage has run. Printed as a
table and saved as JSON.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from lassi.warehouse import Warehouse, as_date


def load_truth(path: str | Path) -> dict:
    """truth.json as a dict; ValueError (one line) when it is missing or not JSON."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no truth file {p}")
    try:
        return json.loads(p.read_text())
    except ValueError as exc:
        raise ValueError(f"{p} is not JSON: {exc}") from None


def truth_first_day(truth: dict) -> dt.date:
    """First simulated day."""
    return as_date(str(truth["start"])[:10])


def evaluate(wh: Warehouse, truth: dict, date: dt.date) -> dict:
    """Scores of every detector with output for the simulated days up to `date`."""
    from lassi.io_phase import evaluate_phases

    first = truth_first_day(truth)
    if date < first:
        raise ValueError(f"--date {date} is before the simulation's first day {first}")
    out: dict = {"site": truth.get("site"), "first": first.isoformat(), "last": date.isoformat()}
    period = _days(first, date)
    if any(wh.has("io_phase", d) for d in period):
        out["abnormal_phases"] = evaluate_phases(wh, truth, first, date)
    else:
        out["abnormal_phases"] = None
    if any(wh.has("component_anomaly", d) for d in period):
        out["components"] = evaluate_components(wh, truth, first, date)
    else:
        out["components"] = None
    if any(wh.has("interference", d) for d in period):
        out["interference"] = evaluate_interference(wh, truth, first, date)
    else:
        out["interference"] = None
    return out


def truth_cause_class(run: dict) -> str:
    """A run's cause class from the simulator's lost time: `system` when its slow
    components cost it at least as much as its neighbours, `interference` when neighbours
    cost it time, else `none` (the truth has no finer, Fig. 12-style cause)."""
    comp = sum(c["lost_s"] for c in run.get("components", []))
    neigh = sum(n["lost_s"] for n in run.get("neighbours", []))
    if comp > 0 and comp >= neigh:
        return "system"
    return "interference" if neigh > 0 else "none"


def cause_class(cause: str) -> str:
    """The class of a detected cause: system anomaly, unknown, or an interference kind."""
    return {"system anomaly": "system", "unknown": "none"}.get(cause, "interference")


def evaluate_interference(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Accuracy of the causes of abnormal jobs at the level the truth supports: system
    anomaly vs interference vs none, with the confusion counts."""
    rows = (wh.read("interference", _days(first, last)).select("job_id", "cause").distinct()
            .collect())                                   # one row per abnormal job
    runs = {r["job_id"]: r for r in truth.get("runs", [])}
    confusion: dict[str, int] = {}
    right = 0
    for r in rows:
        if r["job_id"] not in runs:
            continue
        t, p = truth_cause_class(runs[r["job_id"]]), cause_class(r["cause"])
        confusion[f"{t}->{p}"] = confusion.get(f"{t}->{p}", 0) + 1
        right += t == p
    n = sum(confusion.values())
    return {"accuracy": right / n if n else None, "jobs": n, "confusion": confusion}


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc).replace(tzinfo=None)


def evaluate_components(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Precision and recall of the system rule against the injected faults of the period: a
    detection is right when it names a faulty component and overlaps its fault in time."""
    from pyspark.sql import functions as F

    rows = (wh.read("component_anomaly", _days(first, last)).where(F.col("rule") == "system")
            .select("kind", "component", "start", "end").collect())   # a few per day
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time())
    faults = [f for f in truth.get("faults", []) if _utc(f["start"]) < end]

    def hit(r, f) -> bool:
        return (r["component"] == f["name"] and r["start"] < _utc(f["end"])
                and _utc(f["start"]) < r["end"])

    tp = sum(any(hit(r, f) for f in faults) for r in rows)
    found = sum(any(hit(r, f) for r in rows) for f in faults)
    p = tp / len(rows) if rows else 1.0
    r = found / len(faults) if faults else 1.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "detections": len(rows), "faults": len(faults), "faults_found": found}


def _days(first: dt.date, last: dt.date) -> list[dt.date]:
    return [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]


def _prf(s: dict | None) -> str:
    if not s:
        return f"{'–':>9} {'–':>9} {'–':>9}"
    return f"{s['precision']:9.3f} {s['recall']:9.3f} {s['f1']:9.3f}"


def table(res: dict) -> str:
    """The scores as a plain-text table."""
    lines = [f"detection quality, {res['site']} {res['first']} .. {res['last']}",
             f"{'detector':<40} {'precision':>9} {'recall':>9} {'F1':>9}", "-" * 70]
    ph = res.get("abnormal_phases")
    if ph:
        lines.append(f"{'abnormal phases, two-stage DBSCAN':<40} {_prf(ph['two_stage'])}")
        lines.append(f"{'abnormal phases, one-stage baseline':<40} {_prf(ph['one_stage'])}")
        f2, f1 = ph["two_stage"]["f1"], ph["one_stage"]["f1"]
        gain = f"{f2 / f1:.2f}x" if f1 else "n/a"
        lines.append(f"  {ph['phases']} phases of {ph['jobs']} jobs; {ph['truth_phases']} truth "
                     f"phases; two-stage F1 / one-stage F1 = {gain}")
    else:
        lines.append("abnormal phases: no io_phase rows (run `lassi run daily` first)")
    comp = res.get("components")
    if comp:
        lines.append(f"{'component anomalies (system rule)':<40} {_prf(comp)}")
        lines.append(f"  {comp['faults_found']} of {comp['faults']} injected faults found; "
                     f"{comp['detections']} detections")
    else:
        lines.append("component anomalies: none computed (run `lassi run daily` first)")
    inter = res.get("interference")
    if inter and inter["accuracy"] is not None:
        lines.append(f"{'interference cause (system/interference/none)':<40} "
                     f"accuracy {inter['accuracy']:.3f} over {inter['jobs']} abnormal jobs")
        lines.append("  truth -> detected: " + ", ".join(
            f"{k} {v}" for k, v in sorted(inter["confusion"].items())))
    lines.append("not yet evaluated: stragglers; the eight Fig. 12 causes one by one")
    return "\n".join(lines)
