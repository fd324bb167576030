"""Straggler detection (component_anomaly rule 'straggler') scored against the simulator.

The simulator (lassi.sim.engine, per-pair progress while a fault is active) lists in
truth.json `stragglers`: per run the faulty forwarding nodes / OSTs that made the run's I/O
through them at least 1.5x slower than through its peers (`slowdown`, `peers` = the run's
other components of that kind). A detection is right when it names a truth straggler of the
same job (job_id, kind, component). Recall counts the truth stragglers the detector could
judge: jobs that started in [first, last], of at least `large_job_nodes` nodes, traced (the
per-job bandwidth comes from the LWFS client traces) and with at least `min_peers` peers.
"""

from __future__ import annotations

import datetime as dt

from lassi.core.warehouse import Warehouse, as_date, days

SEVERE = 3.0      # the target: recall 1.0 for slowdowns of at least this


def _utc_day(text: str) -> dt.date:
    t = dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc)
    return t.date()


def _large_job_nodes(truth: dict) -> int:
    """The simulated site's threshold (recorded by the simulator), else the named site's."""
    if truth.get("straggler_large_job_nodes") is not None:
        return int(truth["straggler_large_job_nodes"])
    from lassi.core.config import load_site

    return load_site(str(truth.get("site", "taihulight"))).settings.thresholds.large_job_nodes


def truth_scope(truth: dict, first: dt.date, last: dt.date, large_job_nodes: int,
                min_peers: int) -> list[dict]:
    """The truth stragglers the detector can judge in [first, last] (see the docstring)."""
    runs = {r["run_no"]: r for r in truth.get("runs", [])}
    traced = truth.get("beacon", {}).get("traced_runs")
    traced = set(traced) if traced is not None else None
    out = []
    for s in truth.get("stragglers", []):
        run = runs.get(s["run_no"])
        if run is None or not first <= _utc_day(run["start"]) <= last:
            continue
        if (len(run["nodes"]) >= large_job_nodes and s["peers"] >= min_peers
                and (traced is None or s["run_no"] in traced)):
            out.append(s)
    return out


def _prf(tp: int, detections: int, found: int, expected: int) -> tuple[float, float, float]:
    p = tp / detections if detections else 1.0
    r = found / expected if expected else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def evaluate_stragglers(wh: Warehouse, truth: dict, first: dt.date, last: dt.date,
                        large_job_nodes: int | None = None, min_peers: int = 3) -> dict:
    """Precision, recall (all and >= SEVERE x), F1, misses and false alarms of the detected
    stragglers of [first, last] against truth.json's `stragglers`."""
    first, last = as_date(first), as_date(last)
    if large_job_nodes is None:
        large_job_nodes = _large_job_nodes(truth)
    rows = (wh.read("component_anomaly", days(first, last)).where("rule = 'straggler'")
            .select("job_id", "kind", "component", "est_slowdown").collect())
    detected = {(r["job_id"], r["kind"], r["component"]): r["est_slowdown"] for r in rows}
    every = {(s["job_id"], s["kind"], s["component"]) for s in truth.get("stragglers", [])}
    scope = truth_scope(truth, first, last, large_job_nodes, min_peers)
    key = {id(s): (s["job_id"], s["kind"], s["component"]) for s in scope}
    severe = [s for s in scope if s["slowdown"] >= SEVERE]
    tp = sum(k in every for k in detected)
    found = sum(key[id(s)] in detected for s in scope)
    found_severe = sum(key[id(s)] in detected for s in severe)
    p, r, f1 = _prf(tp, len(detected), found, len(scope))
    return {
        "precision": p, "recall": r, "f1": f1,
        "recall_severe": found_severe / len(severe) if severe else 1.0,
        "severe_min_slowdown": SEVERE, "detections": len(detected), "true_detections": tp,
        "stragglers": len(scope), "found": found, "severe": len(severe),
        "severe_found": found_severe, "large_job_nodes": large_job_nodes,
        "misses": [{"job_id": s["job_id"], "kind": s["kind"], "component": s["component"],
                    "slowdown": s["slowdown"]} for s in scope if key[id(s)] not in detected],
        "false_alarms": [{"job_id": j, "kind": k, "component": c, "est_slowdown": e}
                         for (j, k, c), e in sorted(detected.items()) if (j, k, c) not in every],
    }


def table_lines(res: dict | None) -> list[str]:
    """Lines for lassi.evaluate.scores.table()."""
    if not res:
        return ["stragglers: none computed (run `lassi run daily` first)"]
    return [f"{'stragglers (DBSCAN in large jobs)':<40} {res['precision']:9.3f} "
            f"{res['recall']:9.3f} {res['f1']:9.3f}",
            f"  {res['found']} of {res['stragglers']} stragglers found ({res['severe_found']} of "
            f"{res['severe']} >= {res['severe_min_slowdown']:g}x: recall "
            f"{res['recall_severe']:.3f}); {res['detections']} detections, "
            f"{len(res['false_alarms'])} false alarms"]
