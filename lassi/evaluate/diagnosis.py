"""`lassi evaluate`: `why` (stage `job_diagnosis`) against the simulator's truth (issue #14).

The truth holds each run's lost seconds per component at fault and per neighbour run. Its
top cause is the largest of: the component that cost it most, the neighbour that cost it
most, and its own part (lost time neither explains: `pattern` or `history` in lassi).

- top cause: for runs slowed at least MIN_SLOWDOWN x, is `job_diagnosis`'s rank-1 cause
  of the same kind and (component, neighbour) the same name? A run lassi did not explain
  counts as wrong. The same for the runs the simulator marks `slowed` (lost more than 20 %
  of their solo runtime), which light simulated days have where 1.5x runs are rare.
- faulty component named: for runs (any slowdown) that lost at least MOST of their lost
  time, and at least MIN_LOST_S, to one component, is that component among the job's
  causes?
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import functions as F

from lassi.core.warehouse import Warehouse, days

MIN_SLOWDOWN = 1.5
MOST = 0.5
MIN_LOST_S = 30.0
OWN = ("pattern", "history")


def truth_top(run: dict, job_of: dict[int, str]) -> tuple[str, str | None, float]:
    """(kind component|neighbour|own, name, seconds) of the run's largest share of lost time."""
    comp = max(run.get("components", []), key=lambda c: c["lost_s"], default=None)
    neigh = max(run.get("neighbours", []), key=lambda n: n["lost_s"], default=None)
    own = run["lost_s"] - sum(c["lost_s"] for c in run.get("components", [])) \
        - run.get("neighbours_lost_s", sum(n["lost_s"] for n in run.get("neighbours", [])))
    options = [("own", None, own)]
    if comp:
        options.append(("component", comp["name"], comp["lost_s"]))
    if neigh:
        options.append(("neighbour", job_of.get(neigh["run_no"]), neigh["lost_s"]))
    return max(options, key=lambda o: o[2])


def _matches(truth: tuple, kind: str, name: str) -> bool:
    tkind, tname, _ = truth
    if tkind == "own":
        return kind in OWN
    return kind == tkind and name == tname


def evaluate_diagnosis(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Top-cause accuracy and faulty-component recall (see the module doc)."""
    period = [d for d in days(first, last) if wh.has("job_diagnosis", d)]
    causes: dict[str, list[tuple[int, str, str]]] = {}
    if period:
        rows = (wh.read("job_diagnosis", period).select("job_id", "rank", "kind", "name")
                .filter(F.col("kind").isin("component", "neighbour", *OWN)).collect())
        for r in rows:                       # the simulated jobs' causes (a test-sized set)
            causes.setdefault(r["job_id"], []).append((r["rank"], r["kind"], r["name"]))
    job_of = {r["run_no"]: r["job_id"] for r in truth["runs"]}
    top = {"slowdown": [0, 0], "slowed": [0, 0]}
    comp_n = comp_ok = 0
    by_kind: dict[str, list[int]] = {}
    for run in truth["runs"]:
        if not first <= dt.date.fromisoformat(run["start"][:10]) <= last:
            continue
        mine = sorted(causes.get(run["job_id"], []))
        t = truth_top(run, job_of)
        ok = bool(mine) and _matches(t, mine[0][1], mine[0][2])
        if run["slowdown"] >= MIN_SLOWDOWN and run["lost_s"] > 0:
            top["slowdown"][0] += 1
            top["slowdown"][1] += ok
            by_kind.setdefault(t[0], [0, 0])[0] += 1
            by_kind[t[0]][1] += ok
        if run.get("slowed") and run["lost_s"] > 0:
            top["slowed"][0] += 1
            top["slowed"][1] += ok
        comp = max(run.get("components", []), key=lambda c: c["lost_s"], default=None)
        if comp and comp["lost_s"] >= max(MIN_LOST_S, MOST * run["lost_s"]):
            comp_n += 1
            comp_ok += any(k == "component" and n == comp["name"] for _, k, n in mine)
    (n, right), (sn, sright) = top["slowdown"], top["slowed"]
    return {"slowed_runs": n, "top_cause_right": right,
            "top_cause_accuracy": right / n if n else None,
            "by_truth_kind": {k: {"runs": v[0], "right": v[1]} for k, v in by_kind.items()},
            "sim_slowed_runs": sn, "sim_slowed_right": sright,
            "sim_slowed_accuracy": sright / sn if sn else None,
            "component_runs": comp_n, "component_named": comp_ok,
            "component_recall": comp_ok / comp_n if comp_n else None}


def table_lines(res: dict | None) -> list[str]:
    """Lines of the evaluate table."""
    if not res:
        return ["why (job_diagnosis): not computed (run `lassi run daily` first)"]
    acc = res["top_cause_accuracy"]
    rec = res["component_recall"]
    lines = [f"{'why: top cause of runs slowed >= 1.5x':<40} "
             + ("n/a (no such run)" if acc is None else
                f"accuracy {acc:.3f} ({res['top_cause_right']} of {res['slowed_runs']})")]
    if res["by_truth_kind"]:
        lines.append("  by truth's top cause: " + ", ".join(
            f"{k} {v['right']}/{v['runs']}" for k, v in sorted(res["by_truth_kind"].items())))
    sim = res.get("sim_slowed_accuracy")
    lines.append(f"{'why: top cause, runs the simulator slowed':<40} "
                 + ("n/a (no such run)" if sim is None else
                    f"accuracy {sim:.3f} ({res['sim_slowed_right']} of {res['sim_slowed_runs']})"))
    lines.append(f"{'why: faulty component named':<40} "
                 + ("n/a (no run lost most of its time to one)" if rec is None else
                    f"recall {rec:.3f} ({res['component_named']} of {res['component_runs']} "
                    "runs that lost most of their time to it)"))
    return lines
