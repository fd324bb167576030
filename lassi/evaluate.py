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
    return out


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
    lines.append("not yet evaluated: stragglers and interference causes (issue #5, open)")
    return "\n".join(lines)
