"""`lassi why JOBID`: why was this job slow, and what should be done? One answer from every
analysis that knows the job (issue #14).

The causes are those of the stage `job_diagnosis` (lassi.siox.diagnosis, one SQL for both):
read from the table when the daily run explained the job, computed for this one job
otherwise (a job that was not slowed, or one known only from Darshan or job_metrics).
Failed-over or nearly full OSTs on the job's path (`ost_health`) are added as notes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.schemas import schema_of
from lassi.core.warehouse import Warehouse
from lassi.siox.diagnosis import diagnose_frame, jobs_frame

# where a job may be known, most informative first: (table, start column)
JOB_TABLES = (("app_run", "start"), ("job_summary", "start"), ("job_metrics", "start"),
              ("darshan_job", "start"))


MINOR_SHARE = 0.02   # text output: neighbours below this share are folded into one line


class WhyError(Exception):
    """The job cannot be found (said in one line)."""


@dataclass
class Cause:
    """One ranked cause: kind component|neighbour|pattern|history; name as in the warehouse."""

    kind: str
    name: str
    share: float
    evidence: str
    recommendation: str | None = None
    lost_s: float = 0.0


@dataclass
class Diagnosis:
    """The answer for one job."""

    job_id: str
    date: dt.date
    app: str | None = None
    user: str | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    runtime_s: float | None = None
    slowdown: float | None = None
    group_runs: int | None = None
    lost_s: float = 0.0
    causes: list[Cause] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The object outside checks read (issue #14 item 4), plus context."""
        return {"job_id": self.job_id, "date": self.date.isoformat(), "app": self.app,
                "user": self.user, "runtime_s": self.runtime_s, "slowdown": self.slowdown,
                "lost_s": round(self.lost_s, 3),
                "causes": [{k: v for k, v in asdict(c).items() if k != "lost_s"}
                           for c in self.causes],
                "notes": self.notes}


# --------------------------------------------------------------------------- finding the job
def find_job(wh: Warehouse, job_id: str, date: dt.date | None = None) -> tuple[dt.date, dict]:
    """(start day, the first row that names the job) from the tables that know jobs."""
    for table, start in JOB_TABLES:
        if not wh.dates(table) or (date is not None and not wh.has(table, date)):
            continue
        df = wh.read(table, [date] if date else None).filter(F.col("job_id") == job_id)
        row = df.orderBy(start).first()
        if row is not None:
            return row["date"], row.asDict()
    where = f" on {date}" if date else ""
    raise WhyError(f"job {job_id} is not in the warehouse{where} (app_run, job_summary, "
                   "job_metrics, darshan_job)")


def _job_row(wh: Warehouse, day: dt.date, job_id: str, known: dict) -> tuple[DataFrame, bool]:
    """The job as diagnosis_jobs.sql gives it (checkpointed: one row, read many times), and
    whether app_run holds it; a job app_run does not hold is run through the same SQL as one
    app_run row made from what the table that knows it says."""
    jobs = jobs_frame(wh, day, [job_id]).localCheckpoint()   # computed once, not per read
    if jobs.first() is not None:
        return jobs, True
    run = {"app_id": job_id, "job_id": job_id, "user": known.get("user"),
           "exe": known.get("app") or known.get("exe"),
           "start": known.get("start") or known.get("start_time"),
           "end": known.get("end") or known.get("end_time"), "source": "why", "date": day}
    schema = schema_of("app_run")
    row = tuple(run.get(f.name) for f in schema.fields)
    return (jobs_frame(wh, day, runs=wh.spark.createDataFrame([row], schema))
            .localCheckpoint(), False)


def _health(wh: Warehouse, start, end, targets: list[str]) -> list[str]:
    """Notes: failed-over or >= 95 % full targets among `targets` during the run."""
    if not targets or start is None or end is None:
        return []
    dates = [d for d in sorted({start.date(), end.date()}) if wh.has("ost_health", d)]
    if not dates:
        return []
    rows = (wh.read("ost_health", dates).filter(F.col("target").isin(targets))
            .filter((F.col("ts") >= F.lit(start)) & (F.col("ts") <= F.lit(end)))
            .filter(F.col("failed_over") | (F.col("use_pct") >= 95))
            .groupBy("target").agg(F.max("use_pct").alias("pct"),
                                   F.max(F.col("failed_over").cast("int")).alias("fo"))
            .collect())                           # at most the job's targets
    return [f"{r['target']} was {'failed over' if r['fo'] else 'in service'}"
            + ("" if r["pct"] is None else f" and {r['pct']:.0f} % full") + " during the run"
            for r in rows]


def from_rows(job_id: str, day: dt.date, rows: list, job=None) -> Diagnosis:
    """A Diagnosis from the job's job_diagnosis rows (and its dg_jobs row, when there are
    none: a job without causes)."""
    rows = sorted(rows, key=lambda r: r["rank"])              # the job's few causes
    first = rows[0] if rows else job
    d = Diagnosis(job_id, day)
    if first is not None:
        d.app, d.user, d.start = first["app"], first["user"], first["start"]
        d.runtime_s, d.slowdown = first["runtime_s"], first["slowdown"]
    if job is not None:
        d.end, d.group_runs = job["end"], job["group_runs"]
    d.lost_s = (rows[0]["job_lost_s"] if rows
                else float(job["hist_lost_s"] or 0.0) if job is not None else 0.0)
    d.causes = [Cause(r["kind"], r["name"], r["share"], r["evidence"], r["recommendation"],
                      r["lost_s"]) for r in rows]
    d.notes = list(rows[0]["notes"]) if rows else []
    return d


def diagnose(wh: Warehouse, site: Site, job_id: str, date: dt.date | None = None) -> Diagnosis:
    """The job's ranked causes (job_diagnosis, or computed now for this job alone)."""
    day, known = find_job(wh, job_id, date)
    jobs, scheduled = _job_row(wh, day, job_id, known)
    job = jobs.first()
    if scheduled and wh.has("job_diagnosis", day):   # the daily stage explained every job
        rows = wh.read("job_diagnosis", [day]).filter(F.col("job_id") == job_id).collect()
    else:
        rows = diagnose_frame(wh, site, day, jobs).collect()
    d = from_rows(job_id, day, rows, job)
    if wh.has("job_path", day):
        targets = [r["component"] for r in wh.read("job_path", [day])
                   .filter((F.col("job_id") == job_id) & (F.col("kind") == "ost"))
                   .select("component").distinct().collect()]      # the job's OSTs
        d.notes += _health(wh, d.start, d.end, targets)
    return d


def share_text(c: Cause, lost_s: float) -> str:
    """'42 % of the lost time', or what a cause without a share is."""
    if c.lost_s > 0 or (lost_s > 0 and c.kind != "pattern"):
        return f"{100 * c.share:.0f} % of the lost time"
    return ("seen in its I/O; nothing lost is left to it" if lost_s > 0
            else "seen in its I/O; its cost is not measured")


def format_text(d: Diagnosis) -> str:
    """The answer in plain language, one cause per paragraph."""
    head = f"Job {d.job_id}"
    if d.app:
        head += f" ({d.app}{', ' + d.user if d.user else ''})"
    head += f", started {d.start:%Y-%m-%d %H:%M} UTC" if d.start else f", {d.date}"
    lines = [head]
    facts = []
    if d.runtime_s is not None:
        facts.append(f"ran {d.runtime_s / 60:.1f} min")
    if d.slowdown is not None:
        runs = f" ({d.group_runs} runs)" if d.group_runs else ""
        facts.append(f"{d.slowdown:.2f}× its command group's mean{runs}")
    facts.append(f"lost {d.lost_s / 60:.1f} min" if d.lost_s else "no lost time measured")
    lines.append("  " + "; ".join(facts))
    if not d.causes:
        lines.append("  No cause found: nothing on its path, no neighbour and no pattern "
                     "explains a slowdown.")
    minor = [c for c in d.causes if c.kind == "neighbour" and c.share < MINOR_SHARE]
    for i, c in enumerate([c for c in d.causes if c not in minor], 1):
        lines.append(f"  {i}. [{c.kind}] {c.name}: {share_text(c, d.lost_s)}")
        lines.append(f"     {c.evidence}")
        if c.recommendation:
            lines.append(f"     → {c.recommendation}")
    if minor:
        names = ", ".join(c.name for c in minor[:8]) + (", ..." if len(minor) > 8 else "")
        lines.append(f"  + {len(minor)} more neighbours with under {MINOR_SHARE:.0%} each "
                     f"({sum(c.share for c in minor):.0%} together): {names} (--json lists all)")
    lines += [f"  note: {n}" for n in d.notes]
    return "\n".join(lines)
