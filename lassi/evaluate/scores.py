"""`lassi evaluate`: detection quality against the simulator's ground truth (issue #5).

Reads truth.json (what `lassi simulate` wrote) and the warehouse's detection tables for the
simulated period up to `date`, and scores each detector: abnormal I/O phases (two-stage and
the one-stage baseline), failing components, and the cause of each abnormal job (stage
`interference`) both as 3 classes (system / interference / none) and as the eight Beacon
Fig. 12 causes against `truth_cause`, with the confusion tables, and `why`
(lassi.evaluate.diagnosis). Printed as a table and saved as JSON.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from lassi.core.views import scoped
from lassi.core.warehouse import Warehouse, as_date, days
from lassi.evaluate.diagnosis import evaluate_diagnosis
from lassi.evaluate.diagnosis import table_lines as diagnosis_lines
from lassi.evaluate.stragglers import evaluate_stragglers
from lassi.evaluate.stragglers import table_lines as straggler_lines


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


@scoped
def evaluate(wh: Warehouse, truth: dict, date: dt.date) -> dict:
    """Scores of every detector with output for the simulated days up to `date`."""
    from lassi.evaluate.phases import evaluate_phases

    first = truth_first_day(truth)
    if date < first:
        raise ValueError(f"--date {date} is before the simulation's first day {first}")
    out: dict = {"site": truth.get("site"), "first": first.isoformat(), "last": date.isoformat()}
    period = days(first, date)
    if any(wh.has("io_phase", d) for d in period):
        out["abnormal_phases"] = evaluate_phases(wh, truth, first, date)
    else:
        out["abnormal_phases"] = None
    if any(wh.has("component_anomaly", d) for d in period):
        out["components"] = evaluate_components(wh, truth, first, date)
        out["stragglers"] = (evaluate_stragglers(wh, truth, first, date)
                             if "stragglers" in truth else None)
    else:
        out["components"] = out["stragglers"] = None
    if any(wh.has("interference", d) for d in period):
        out["interference"] = evaluate_interference(wh, truth, first, date)
    else:
        out["interference"] = None
    out["why"] = (evaluate_diagnosis(wh, truth, first, date)
                  if any(wh.has("job_diagnosis", d) for d in period) else None)
    return out


# The eight causes of Beacon Fig. 12, in the paper's order.
CAUSES = ["N:1", "high MDOPS", "high bandwidth", "high IOPS", "mix", "multiple jobs",
          "system anomaly", "unknown"]
# A neighbour counts in the truth when it cost at least this share of the time all listed
# neighbours cost the run (a neighbour that barely touched it does not make a cause).
SIGNIFICANT_SHARE = 0.2


def truth_cause_class(run: dict) -> str:
    """A run's cause class from the simulator's lost time: `system` when its slow
    components cost it at least as much as its neighbours, `interference` when neighbours
    cost it time, else `none`."""
    comp = sum(c["lost_s"] for c in run.get("components", []))
    neigh = sum(n["lost_s"] for n in run.get("neighbours", []))
    if comp > 0 and comp >= neigh:
        return "system"
    return "interference" if neigh > 0 else "none"


def truth_features(run: dict) -> set[str]:
    """A run's interference-prone features: the simulator's `features` (lassi.sim.runner
    `run_truth`: N:1 mode, demanded MDOPS / forwarding-node bandwidth / IOPS above the
    Beacon thresholds); for older truth files without them, from mode and aggressor kind."""
    if "features" in run:
        return set(run["features"])
    kinds = {"N:1"} if run.get("mode") == "N:1" else set()
    kinds |= {"mds": {"high MDOPS"}, "oss": {"high IOPS"}}.get(run.get("aggressor") or "", set())
    return kinds


def truth_cause(run: dict, runs: dict[int, dict]) -> str:
    """The Fig. 12 cause of a run from truth.json (`runs`: every run by run_no).

    `system anomaly` when slow components cost it at least as much as its neighbours
    (the `system` class); `unknown` when nothing cost it time (`none`); else, over the
    significant neighbours (each cost >= SIGNIFICANT_SHARE of the neighbours' lost time),
    the features they had: one kind -> that kind ("N:1", "high MDOPS", "high bandwidth",
    "high IOPS"), several -> "mix", none -> "multiple jobs" (their aggregate load, not one
    explicit pattern, saturated the shared resource)."""
    cls = truth_cause_class(run)
    if cls != "interference":
        return {"system": "system anomaly", "none": "unknown"}[cls]
    nbs = run.get("neighbours", [])
    total = sum(n["lost_s"] for n in nbs)
    kinds: set[str] = set()
    for n in nbs:
        if n["lost_s"] >= SIGNIFICANT_SHARE * total and n["run_no"] in runs:
            kinds |= truth_features(runs[n["run_no"]])
    if len(kinds) == 1:
        return kinds.pop()
    return "mix" if kinds else "multiple jobs"


def cause_class(cause: str) -> str:
    """The class of a detected cause: system anomaly, unknown, or an interference kind."""
    return {"system anomaly": "system", "unknown": "none"}.get(cause, "interference")


def evaluate_interference(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Accuracy of the causes of abnormal jobs: 3-class (system anomaly vs interference vs
    none: `accuracy`, `confusion` "truth->detected") and 8-way Fig. 12 (`causes`: accuracy,
    confusion truth -> detected -> count, per truth cause its jobs and recall)."""
    rows = (wh.read("interference", days(first, last)).select("job_id", "cause").distinct()
            .collect())                                   # one row per abnormal job
    runs = {r["job_id"]: r for r in truth.get("runs", [])}
    by_no = {r["run_no"]: r for r in truth.get("runs", []) if "run_no" in r}
    confusion: dict[str, int] = {}
    matrix: dict[str, dict[str, int]] = {}
    right = right8 = 0
    for r in rows:
        if r["job_id"] not in runs:
            continue
        run = runs[r["job_id"]]
        t, p = truth_cause_class(run), cause_class(r["cause"])
        confusion[f"{t}->{p}"] = confusion.get(f"{t}->{p}", 0) + 1
        right += t == p
        t8 = truth_cause(run, by_no)
        row = matrix.setdefault(t8, {})
        row[r["cause"]] = row.get(r["cause"], 0) + 1
        right8 += t8 == r["cause"]
    n = sum(confusion.values())
    per = {c: {"jobs": sum(m.values()), "recall": m.get(c, 0) / sum(m.values())}
           for c, m in matrix.items()}
    return {"accuracy": right / n if n else None, "jobs": n, "confusion": confusion,
            "causes": {"accuracy": right8 / n if n else None, "confusion": matrix,
                       "per_cause": per}}


def cause_table(matrix: dict[str, dict[str, int]]) -> list[str]:
    """The 8-way confusion (rows: truth, columns: detected) as text lines."""
    cols = [c for c in CAUSES if any(c in m for m in matrix.values())]
    short = {"high MDOPS": "MDOPS", "high bandwidth": "bw", "high IOPS": "IOPS",
             "multiple jobs": "multiple", "system anomaly": "system"}
    head = f"  {'truth | detected':<16}" + "".join(f"{short.get(c, c):>9}" for c in cols)
    lines = [head]
    for t in [c for c in CAUSES if c in matrix]:
        lines.append(f"  {t:<16}" + "".join(f"{matrix[t].get(c, 0):>9}" for c in cols))
    return lines


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc).replace(tzinfo=None)


def evaluate_components(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Precision and recall of the system rule against the injected faults of the period: a
    detection is right when it names a faulty component and overlaps its fault in time."""
    from pyspark.sql import functions as F

    rows = (wh.read("component_anomaly", days(first, last)).where(F.col("rule") == "system")
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
        c8 = inter.get("causes") or {}
        if c8.get("accuracy") is not None:
            lines.append(f"{'interference cause (8 Fig. 12 causes)':<40} "
                         f"accuracy {c8['accuracy']:.3f} over {inter['jobs']} abnormal jobs")
            lines.extend(cause_table(c8["confusion"]))
    lines.extend(straggler_lines(res.get("stragglers")))
    lines.extend(diagnosis_lines(res.get("why")))
    return "\n".join(lines)
