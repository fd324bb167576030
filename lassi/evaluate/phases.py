"""Abnormal-phase detection (stage `io_phase`) scored against the simulator's truth: which
truth phases are abnormal, and precision / recall / F1 by time overlap within a job."""

from __future__ import annotations

import datetime as dt

import pandas as pd
from pyspark.sql import functions as F

from lassi.core.warehouse import Warehouse, days

TRUTH_SLOWDOWN = 1.5   # a truth phase is abnormal at >= 1.5 x its application's usual pace


def _epoch(iso: str) -> float:
    return pd.Timestamp(iso).timestamp()


def truth_phases(truth: dict) -> pd.DataFrame:
    """Every I/O phase of the simulator's truth: job_id, app_no, phase_no, start_s, end_s,
    duration_s, solo_s, ratio (duration / solo), usual (the app's median ratio), abnormal."""
    rows = []
    for run in truth["runs"]:
        for k, p in enumerate(run.get("phases", [])):
            if not p.get("bytes"):
                continue
            a, b = _epoch(p["start"]), _epoch(p["end"])
            rows.append({"job_id": run["job_id"], "app_no": run["app_no"], "phase_no": k,
                         "kind": p["kind"], "start_s": a, "end_s": b, "duration_s": b - a,
                         "solo_s": float(p["solo_s"]), "bytes": p["bytes"]})
    df = pd.DataFrame(rows, columns=["job_id", "app_no", "phase_no", "kind", "start_s", "end_s",
                                     "duration_s", "solo_s", "bytes"])
    df["ratio"] = df["duration_s"] / df["solo_s"].clip(lower=1.0)
    df["usual"] = df.groupby("app_no")["ratio"].transform("median")
    df["abnormal"] = df["ratio"] >= TRUTH_SLOWDOWN * df["usual"]
    return df


def truth_abnormal_phases(truth: dict) -> set[tuple[str, int]]:
    """(job_id, phase_no) of the truth phases that are abnormal: the phase took at least
    1.5 x as long, relative to its solo time, as its application's phases usually do
    (duration/solo_s >= 1.5 x the median of duration/solo_s over the app's phases). The
    median normalises apps whose demanded rate exceeds a resource even alone (their every
    phase is longer than solo_s); phase_no counts the run's I/O segments from 0."""
    df = truth_phases(truth)
    return {(j, int(k)) for j, k in df.loc[df["abnormal"], ["job_id", "phase_no"]].itertuples(
        index=False)}


def score(detected: pd.DataFrame, truth: pd.DataFrame, flag: str) -> dict:
    """Precision, recall and F1 of detected phases (job_id, start_s, end_s, `flag`) against
    truth phases (job_id, start_s, end_s, abnormal), matching by time overlap in one job."""
    det = detected[detected[flag].astype(bool)]
    tru = truth[truth["abnormal"]]
    by_job: dict[str, list[tuple[float, float]]] = {}
    for j, a, b in tru[["job_id", "start_s", "end_s"]].itertuples(index=False):
        by_job.setdefault(j, []).append((a, b))
    det_by_job: dict[str, list[tuple[float, float]]] = {}
    tp_det = 0
    for j, a, b in det[["job_id", "start_s", "end_s"]].itertuples(index=False):
        det_by_job.setdefault(j, []).append((a, b))
        if any(a < tb and ta < b for ta, tb in by_job.get(j, [])):
            tp_det += 1
    found = sum(1 for j, a, b in tru[["job_id", "start_s", "end_s"]].itertuples(index=False)
                if any(a < db and da < b for da, db in det_by_job.get(j, [])))
    p = tp_det / len(det) if len(det) else (1.0 if len(tru) == 0 else 0.0)
    r = found / len(tru) if len(tru) else 1.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": p, "recall": r, "f1": f1, "detected": int(len(det)),
            "true_positive_detections": tp_det, "truth_abnormal": int(len(tru)),
            "truth_found": found}


def evaluate_phases(wh: Warehouse, truth: dict, first: dt.date, last: dt.date) -> dict:
    """Precision, recall and F1 of abnormal-phase detection, two-stage (`two_stage`) and the
    one-stage baseline (`one_stage`), against the simulator's truth (truth.json as a dict)
    for the jobs that started from `first` to `last` and have io_phase rows. Detected and
    truth phases match by time overlap within the same job; truth abnormal phases are
    `truth_abnormal_phases`'s."""
    det = (wh.read("io_phase", days(first, last))
           .select("job_id", F.unix_timestamp("start").alias("start_s"),
                   F.unix_timestamp("end").alias("end_s"), "is_abnormal", "is_abnormal_1stage")
           .toPandas())
    tru = truth_phases(truth)
    tru = tru[tru["job_id"].isin(set(det["job_id"]))]
    return {"two_stage": score(det, tru, "is_abnormal"),
            "one_stage": score(det, tru, "is_abnormal_1stage"),
            "jobs": int(det["job_id"].nunique()), "phases": int(len(det)),
            "truth_phases": int(len(tru)), "first": first.isoformat(), "last": last.isoformat()}
