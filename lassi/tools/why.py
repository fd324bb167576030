"""`lassi why JOBID`: why was this job slow, and what should be done? One answer from every
analysis that knows the job (issue #14).

The job's lost time is the larger of what its command group's history says (LASSi
slowdown: runtime − the group's mean runtime) and what its causal path measured
(`job_path`: time its requests spent at forwarding nodes beyond the knowledge base).
Causes, each with the share of that lost time it explains:

- `component`: a forwarding node or OST the SIOX pinpoint found at fault while the job's
  requests went through it (`job_path.lost_s`); failed-over or nearly full OSTs
  (`ost_health`) and component anomalies (`component_anomaly`) on its path add evidence;
- `neighbour`: the load part of the path's excess (`job_path.lost_load_s`), divided among
  the neighbour jobs Beacon's interference analysis named for the job, by their bandwidth;
- `pattern`: the job's own I/O pattern (`job_summary`: small requests, N:1, metadata-heavy
  phases), given what no component or neighbour explains;
- `history`: the same remainder when no pattern is flagged: the run was slower than its
  command group, the evidence says no more.

Shares add up to at most 1; `notes` say where the evidence is weak (no path data, no
history, one day of knowledge base).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import functions as F

from lassi.core.config import Site
from lassi.core.schemas import REQUEST_SIZE_EDGES
from lassi.core.sqltext import sql
from lassi.core.warehouse import Warehouse

# where a job may be known, most informative first: (table, start column)
JOB_TABLES = (("app_run", "start"), ("job_summary", "start"), ("job_metrics", "start"),
              ("darshan_job", "start_time"))
SMALL_REQUEST = 65536          # bytes: requests below this are small (Drishti's threshold)
SMALL_SHARE = 0.5              # pattern flagged when most requests are small


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
    path: list[dict[str, Any]] = field(default_factory=list)   # per hop (why_path.sql)

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
        if not wh.dates(table):
            continue
        df = wh.read(table, [date] if date else None).filter(F.col("job_id") == job_id)
        row = df.orderBy(start).first()
        if row is not None:
            return row["date"], row.asDict()
    where = f" on {date}" if date else ""
    raise WhyError(f"job {job_id} is not in the warehouse{where} (app_run, job_summary, "
                   "job_metrics, darshan_job)")


def _one(wh: Warehouse, table: str, date: dt.date, job_id: str) -> dict | None:
    if not wh.has(table, date):
        return None
    row = wh.read(table, [date]).filter(F.col("job_id") == job_id).first()
    return row.asDict() if row is not None else None


def _runtime(run: dict) -> float | None:
    if run.get("runtime_s") is not None:
        return float(run["runtime_s"])
    if run.get("start") and run.get("end"):
        return (run["end"] - run["start"]).total_seconds()
    return None


# --------------------------------------------------------------------------- evidence
def _history(wh: Warehouse, date: dt.date, run: dict) -> dict | None:
    """The run's run_slowdown row (LASSi), when the run is in app_run."""
    if "app_id" not in run or not wh.has("run_slowdown", date):
        return None
    row = (wh.read("run_slowdown", [date])
           .filter((F.col("app_id") == run["app_id"]) & (F.col("source") == run["source"]))
           .first())
    return row.asDict() if row is not None else None


def _path(wh: Warehouse, date: dt.date, job_id: str) -> list[dict]:
    if not wh.has("job_path", date):
        return []
    wh.read("job_path", [date]).filter(F.col("job_id") == job_id) \
        .createOrReplaceTempView("why_path")
    return [r.asDict() for r in wh.spark.sql(sql("tools/why_path")).collect()]  # per hop


def _neighbours(wh: Warehouse, date: dt.date, job_id: str) -> list[dict]:
    if not wh.has("interference", date):
        return []
    rows = (wh.read("interference", [date])
            .filter((F.col("job_id") == job_id) & F.col("neighbour").isNotNull())
            .groupBy("neighbour", "cause")
            .agg(F.max("bw").alias("bw"), F.max("iops").alias("iops"),
                 F.max("mdops").alias("mdops"))
            .collect())                                         # the job's few neighbours
    return [r.asDict() for r in rows]


def _health(wh: Warehouse, start, end, components: set[str]) -> list[str]:
    """Evidence lines: failed-over or >= 95 % full targets among `components` during the run."""
    if not components or start is None or end is None:
        return []
    days = sorted({start.date(), end.date()})
    if not any(wh.has("ost_health", d) for d in days):
        return []
    rows = (wh.read("ost_health", days)
            .filter(F.col("target").isin(sorted(components)))
            .filter((F.col("ts") >= F.lit(start)) & (F.col("ts") <= F.lit(end)))
            .filter(F.col("failed_over") | (F.col("use_pct") >= 95))
            .groupBy("target").agg(F.max("use_pct").alias("pct"),
                                   F.max(F.col("failed_over").cast("int")).alias("fo"))
            .collect())
    return [f"{r['target']} was {'failed over' if r['fo'] else 'in service'}"
            f"{'' if r['pct'] is None else f' and {r.pct:.0f} % full'} during the run"
            for r in rows]


def _anomalies(wh: Warehouse, start, end, components: set[str]) -> dict[str, str]:
    """component -> evidence of a component_anomaly overlapping the run."""
    if not components or start is None or end is None:
        return {}
    days = sorted({start.date(), end.date()})
    if not any(wh.has("component_anomaly", d) for d in days):
        return {}
    rows = (wh.read("component_anomaly", days)
            .filter(F.col("component").isin(sorted(components)))
            .filter((F.col("start") <= F.lit(end)) & (F.col("end") >= F.lit(start)))
            .collect())
    return {r["component"]: (f"{r['rule']} anomaly {r['start']:%H:%M}–{r['end']:%H:%M}"
                             f" ({r['evidence'] or ''})").replace(" ()", "") for r in rows}


def _patterns(summary: dict | None, site: Site) -> list[tuple[str, str, str]]:
    """(code, evidence, recommendation) of the job's own I/O pattern (job_summary)."""
    if not summary:
        return []
    out = []
    hist = summary.get("size_hist") or []
    total = sum(hist)
    if total:
        small = sum(n for n, lo in zip(hist, REQUEST_SIZE_EDGES, strict=False)
                    if lo < SMALL_REQUEST)
        if small / total >= SMALL_SHARE:
            out.append(("small-requests",
                        f"{100 * small / total:.0f} % of its {total:,} requests were smaller "
                        f"than {SMALL_REQUEST // 1024} KiB",
                        "Buffer or aggregate writes (collective I/O, larger transfer sizes, "
                        "an I/O library such as HDF5/ADIOS with aggregation)."))
    if summary.get("io_mode") == "N:1":
        out.append(("n1-no-aggregation",
                    f"N:1 mode: {summary.get('n_io_nodes') or '?'} nodes wrote one shared file",
                    "Use collective I/O with aggregators, or one file per node (N:N) and "
                    "stripe the shared file over more OSTs."))
    mdops = summary.get("avg_mdops") or 0
    if mdops >= site.settings.thresholds.high_mdops:
        out.append(("metadata-heavy",
                    f"{mdops:,.0f} metadata operations/s during its I/O phases "
                    f"(>= {site.settings.thresholds.high_mdops:,.0f})",
                    "Open files once and keep them open; avoid stat/ls in loops; put many "
                    "small files in an archive or a container file."))
    return out


# --------------------------------------------------------------------------- the answer
def diagnose(wh: Warehouse, site: Site, job_id: str, date: dt.date | None = None) -> Diagnosis:
    """Every analysis's evidence on `job_id`, ranked (see the module doc)."""
    day, run = find_job(wh, job_id, date)
    summary = _one(wh, "job_summary", day, job_id)
    d = Diagnosis(job_id, day, app=run.get("exe") or run.get("app") or (summary or {}).get("app"),
                  user=run.get("user"), start=run.get("start") or run.get("start_time"),
                  end=run.get("end") or run.get("end_time"), runtime_s=_runtime(run))
    hist = _history(wh, day, run)
    if hist and hist.get("slowdown"):
        d.slowdown, d.group_runs = float(hist["slowdown"]), hist.get("group_runs")
    hist_lost = 0.0
    if hist and hist.get("group_mean_s") and d.runtime_s:
        hist_lost = max(0.0, d.runtime_s - float(hist["group_mean_s"]))
    d.path = _path(wh, day, job_id)
    comp_lost = {h["component"]: float(h["lost_s"]) for h in d.path if h["lost_s"] > 0}
    load_lost = sum(float(h["lost_load_s"]) for h in d.path)
    d.lost_s = max(hist_lost, sum(comp_lost.values()) + load_lost)
    _notes(d, hist, hist_lost)
    on_path = {h["component"] for h in d.path}
    anomalies = _anomalies(wh, d.start, d.end, on_path)
    total = d.lost_s or 1.0
    for h in d.path:
        if h["lost_s"] <= 0:
            continue
        extra = anomalies.get(h["component"])
        d.causes.append(_component_cause(h, total, extra))
    neigh = _neighbours(wh, day, job_id)
    unexplained = max(0.0, d.lost_s - sum(comp_lost.values()))
    pool = load_lost if d.path else unexplained * 0.5
    bw = sum(n["bw"] or 0 for n in neigh) or len(neigh)
    for n in neigh:
        part = pool * ((n["bw"] or 0) / bw if bw else 1 / len(neigh))
        d.causes.append(Cause(
            "neighbour", n["neighbour"], part / total,
            f"job {n['neighbour']} shared its forwarding nodes ({n['cause']}; "
            f"{_rate(n['bw'])}, {n['iops'] or 0:,.0f} IOPS, {n['mdops'] or 0:,.0f} MDOPS)"
            + ("" if d.path else " — no path data: the share is a rough split"),
            "Run at another time or ask for nodes on other forwarding nodes; the admins can "
            "throttle the neighbour's I/O.", part))
    rest = max(0.0, d.lost_s - sum(c.lost_s for c in d.causes))
    pats = _patterns(summary, site)
    for code, evidence, rec in pats:
        part = rest / len(pats)
        d.causes.append(Cause("pattern", code, part / total, evidence, rec, part))
    if not pats and rest > 0:
        d.causes.append(Cause(
            "history", "slower-than-group", rest / total,
            f"the run took {d.slowdown or 0:.2f}× the mean of its {d.group_runs or '?'} "
            "command-group runs; no component, neighbour or pattern explains this part",
            None, rest))
    for line in _health(wh, d.start, d.end, on_path):
        d.notes.append(line)
    d.causes.sort(key=lambda c: -c.share)
    return d


def _component_cause(h: dict, total: float, anomaly: str | None) -> Cause:
    name, kind = h["component"], h["kind"]
    when = (f"{h['first_lost']:%H:%M}–{h['last_lost']:%H:%M}" if h["first_lost"] else "")
    what = "forwarding node" if kind == "fwd" else "OST"
    evidence = (f"{what} {name} was pinpointed at fault {when}; the job lost "
                f"{h['lost_s'] / 60:.1f} min there")
    if h["worst_ratio"] is not None and h["kind"] == "fwd":
        evidence += f" (service {1 / max(h['worst_ratio'], 1e-9):.1f}× its normal time)"
    if anomaly:
        evidence += f"; {anomaly}"
    rec = ("Report it to the storage team; until it is fixed, stripe new files away from it "
           "(lfs setstripe with an OST pool or index list without it)." if kind == "ost" else
           "Report it to the admins (LWFS server); rerun on compute nodes served by another "
           "forwarding node.")
    return Cause("component", name, h["lost_s"] / total, evidence, rec, float(h["lost_s"]))


def _notes(d: Diagnosis, hist: dict | None, hist_lost: float) -> None:
    if not d.path:
        d.notes.append("no causal path for this job (no Beacon forwarding layer or job "
                       "trace): component evidence is missing, shares are weak")
    if hist is None or not hist.get("slowdown"):
        d.notes.append("no command-group history for this run: lost time is what the "
                       "causal path measured")
    elif hist_lost == 0:
        d.notes.append("the run was not slower than its command group's mean")


def _rate(v: float | None) -> str:
    return "–" if v is None else f"{v / 2**20:,.0f} MiB/s"


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
        facts.append(f"{d.slowdown:.2f}× its command group's mean ({d.group_runs} runs)")
    facts.append(f"lost {d.lost_s / 60:.1f} min" if d.lost_s else "no lost time measured")
    lines.append("  " + "; ".join(facts))
    if not d.causes:
        lines.append("  No cause found: nothing on its path, no neighbour and no pattern "
                     "explains a slowdown.")
    for i, c in enumerate(d.causes, 1):
        lines.append(f"  {i}. [{c.kind}] {c.name}: {100 * c.share:.0f} % of the lost time")
        lines.append(f"     {c.evidence}")
        if c.recommendation:
            lines.append(f"     → {c.recommendation}")
    lines += [f"  note: {n}" for n in d.notes]
    return "\n".join(lines)
