"""`make bench`: one ARCHER-size day through the pipeline, timed, against DuckDB and pandas.

Never a test: it prints figures and PASS/FAIL against the issue's targets and writes them to
bench/results.json, but always exits 0 unless the benchmark itself could not run.

For each size (default 4,920 nodes, the full ARCHER day, and 1,230 nodes, a 4x smaller day
for the growth ratio) the raw files and the warehouse are cached under
bench/cache/archer-<nodes>/: the day is simulated only when raw/truth.json is missing and
ingested only when the warehouse lacks the date (or with --fresh); a cached phase reports
the figures of the run that produced it (marked "cached").

Every phase is its own process, started through bench/measure.py, which reports wall time,
CPU seconds and the peak summed RSS of the process tree (Python driver + JVM + workers; see
measure.py for why a wrapper). CPU seconds are the steadier figure when the shared machine
is busy. Only one benchmark runs at a time (a lock on bench/cache/.lock). Phases:

  simulate  `lassi simulate` (not part of "the day")
  ingest    `lassi ingest --raw`
  nw        `jobs/daily.py --stage node_window`
  metrics   attribution + metrics: `jobs/daily.py --stage app_hour --stage fs_hour
            --stage slowdown` in ONE process, so JVM start-up counts once; the stages'
            own times (their progress lines) are reported too
  warm      bench/warm.py: the same three stages three times in one session; the last
            repetition's stage times (JVM start-up and class loading paid) are reported
  report    `lassi report daily`
  duckdb    bench/references.py duckdb  (same Parquet, same outputs as app_hour + fs_hour)
  pandas    bench/references.py pandas
  (then, untimed: both references compared with Spark's app_hour and fs_hour)

Targets (issue): the day (ingest + nw + metrics + report) <= 300 s on this 2-core machine;
Spark metrics <= 3x DuckDB; time growth from the small to the full day <= 4.4x.

Usage: python bench/run.py [--nodes 4920] [--small-nodes 1230] [--skip-small] [--fresh]
                           [--phases ingest,nw,metrics,report,duckdb,pandas]
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import references  # noqa: E402  (bench/ sibling module)

DATE = dt.date(2017, 10, 10)
SITE = "archer"
PHASES = ["simulate", "ingest", "nw", "metrics", "warm", "report", "duckdb", "pandas"]
DAY = ["ingest", "nw", "metrics", "report"]
LABEL = {"simulate": "simulate (not in the day)", "ingest": "ingest", "nw": "node_window",
         "metrics": "attribution+metrics (Spark)", "warm": "  same, warm session (not in day)",
         "report": "report",
         "duckdb": "attribution+metrics DuckDB", "pandas": "attribution+metrics pandas"}
STAGES = ["app_hour", "fs_hour", "slowdown"]
DAY_LIMIT_S, SPARK_VS_DUCKDB, GROWTH = 300.0, 3.0, 4.4
STAGE_LINE = re.compile(r"^(\w+): (.*) for \d{4}-\d\d-\d\d \(([\d.]+) s\)$", re.M)


def first_error(log: str) -> str:
    """The most telling lines of a failed phase's output: the last Python exception line
    and the first Spark error, else the last line."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    py = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception)\b.*:", ln)
          or ln.startswith(("lassi: error", "error:"))]
    spark = ([ln for ln in lines if "SparkException" in ln]
             or [ln for ln in lines if " ERROR " in ln])
    parts = py[-1:] + [ln.split("SparkException: ")[-1] for ln in spark[:1]]
    return (" / ".join(parts) or (lines[-1] if lines else "(no output)"))[:400]


def bin_of(name: str) -> str:
    return str(Path(sys.executable).parent / name)


class Day:
    """One simulated site-day: its cache folder, commands and measured phases."""

    def __init__(self, nodes: int, fresh: bool) -> None:
        self.nodes = nodes
        self.fresh = fresh
        self.dir = BENCH / "cache" / f"{SITE}-{nodes}"
        self.raw = self.dir / "raw"
        self.wh = self.dir / "warehouse"
        self.logs = self.dir / "logs"
        self.res: dict[str, dict] = {}
        self.runs: int | None = None
        self.inputs: dict = {}

    # --- commands ---------------------------------------------------------------------------
    def site_args(self) -> list[str]:
        return ["--site", SITE, "--nodes", str(self.nodes)]

    def wh_args(self) -> list[str]:
        return ["--date", DATE.isoformat(), "--warehouse", str(self.wh), *self.site_args()]

    def command(self, phase: str) -> list[str]:
        py, lassi = sys.executable, bin_of("lassi")
        daily = [py, str(REPO / "jobs" / "daily.py"), *self.wh_args()]
        ref = [py, str(BENCH / "references.py")]
        return {
            "simulate": [lassi, "simulate", *self.site_args(), "--date", DATE.isoformat(),
                         "--out", str(self.raw)],
            "ingest": [lassi, "ingest", "--raw", str(self.raw), *self.wh_args()],
            "nw": [*daily, "--stage", "node_window"],
            "metrics": [*daily, *[a for s in STAGES for a in ("--stage", s)]],
            "warm": [py, str(BENCH / "warm.py"), *self.wh_args()],
            "report": [lassi, "report", "daily", "--out", str(self.dir / "report"),
                       *self.wh_args()],
            "duckdb": [*ref, "duckdb", *self.wh_args(), "--out", str(self.dir / "ref_duckdb")],
            "pandas": [*ref, "pandas", *self.wh_args(), "--out", str(self.dir / "ref_pandas")],
        }[phase]

    # --- running ----------------------------------------------------------------------------
    def measure(self, phase: str, cmd: list[str]) -> dict:
        """Run `cmd` under measure.py; stdout/stderr to logs/<phase>.out/.err."""
        self.logs.mkdir(parents=True, exist_ok=True)
        out, err = self.logs / f"{phase}.out", self.logs / f"{phase}.err"
        figures = self.dir / f"{phase}.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        load0 = os.getloadavg()[0]
        print(f"  [{self.nodes}] {phase}: {' '.join(cmd[1:4])} ...", flush=True)
        with out.open("w") as fo, err.open("w") as fe:
            subprocess.run([sys.executable, str(BENCH / "measure.py"), str(figures), "--",
                            *cmd], cwd=REPO, env=env, stdout=fo, stderr=fe, check=False)
        try:
            res = json.loads(figures.read_text())
        except (OSError, ValueError):
            res = {"rc": -1, "wall_s": None, "peak_rss_mib": None}
        res.update(load1_before=round(load0, 2), load1_after=round(os.getloadavg()[0], 2),
                   at=dt.datetime.now().isoformat(timespec="seconds"))
        text = out.read_text(errors="replace")
        res["stdout_tail"] = text[-2000:]
        if res["rc"] != 0:
            res["error"] = first_error(text + "\n" + err.read_text(errors="replace"))
            print(f"  [{self.nodes}] {phase} FAILED (rc={res['rc']}): {res['error'][:300]}")
        else:
            print(f"  [{self.nodes}] {phase}: {res['wall_s']:.1f} s, "
                  f"peak {res['peak_rss_mib']:,.0f} MiB", flush=True)
        figures.write_text(json.dumps(res, indent=1))
        return res

    def cached(self, phase: str) -> dict | None:
        f = self.dir / f"{phase}.json"
        if f.exists():
            res = json.loads(f.read_text())
            log = self.logs / f"{phase}.out"
            if "stdout_tail" not in res and log.exists():
                res["stdout_tail"] = log.read_text(errors="replace")[-2000:]
            if res.get("rc") == 0:
                res["cached"] = True
                return res
        return None

    def ingested(self) -> bool:
        return all((self.wh / t / f"date={DATE.isoformat()}").is_dir()
                   for t in ("raw_lustre_stats", "app_run", "ingest_log"))

    def run(self, phases: list[str]) -> None:
        """Run the selected phases (simulate/ingest only when not cached), then the checks."""
        self._run_phases(phases)
        self.annotate()
        metrics_ok = self.res.get("metrics", {}).get("rc", 0) == 0   # failed now: no check
        for eng in ("duckdb", "pandas"):
            if self.res.get(eng, {}).get("rc") == 0 and metrics_ok \
                    and self.inputs["app_hour_rows"] is not None:
                cmp = references.compare(str(self.wh), DATE, self.dir / f"ref_{eng}")
                self.res[eng]["compare"] = cmp
                self.res[eng]["compare_text"] = references.describe(cmp)

    def _run_phases(self, phases: list[str]) -> None:
        # simulate: only when truth.json is missing (everything else needs it)
        if not (self.raw / "truth.json").exists():
            shutil.rmtree(self.raw, ignore_errors=True)
            self.res["simulate"] = self.measure("simulate", self.command("simulate"))
        elif (c := self.cached("simulate")) is not None:
            self.res["simulate"] = c
        if self.res.get("simulate", {}).get("rc", 0) != 0:
            return
        m = re.search(r"simulated (\d+) runs", self.res.get("simulate", {}).get("stdout_tail", ""))
        self.runs = int(m.group(1)) if m else None
        # ingest: only when the warehouse lacks the date, or with --fresh (if selected)
        if not self.ingested() or (self.fresh and "ingest" in phases):
            shutil.rmtree(self.wh, ignore_errors=True)
            self.res["ingest"] = self.measure("ingest", self.command("ingest"))
            if self.res["ingest"]["rc"] != 0:
                return
        elif (c := self.cached("ingest")) is not None:
            self.res["ingest"] = c
        for phase in ("nw", "metrics", "warm", "report", "duckdb", "pandas"):
            if phase in phases:
                self.res[phase] = self.measure(phase, self.command(phase))

    # --- figures ----------------------------------------------------------------------------
    def rows(self, table: str) -> int | None:
        import pyarrow.parquet as pq

        fs = glob.glob(str(self.wh / table / f"date={DATE.isoformat()}" / "*.parquet"))
        return sum(pq.ParquetFile(f).metadata.num_rows for f in fs) if fs else None

    def annotate(self) -> None:
        """Rows and notes per phase (from the warehouse and the phases' output)."""
        r = self.res
        self.inputs = {
            "raw_mib": round(sum(f.stat().st_size for f in self.raw.rglob("*") if f.is_file())
                             / 2**20, 1),
            "raw_lustre_stats_rows": self.rows("raw_lustre_stats"),
            "app_run_rows": self.rows("app_run"), "node_window_rows": self.rows("node_window"),
            "app_hour_rows": self.rows("app_hour"), "simulated_runs": self.runs,
        }
        if "ingest" in r:
            r["ingest"]["rows"] = self.inputs["raw_lustre_stats_rows"]
            r["ingest"]["note"] = f"raw_lustre_stats rows (+{self.inputs['app_run_rows']} app_run)"
        if "nw" in r:
            r["nw"]["rows"] = self.inputs["node_window_rows"]
        if "metrics" in r:
            stages = {m.group(1): float(m.group(3))
                      for m in STAGE_LINE.finditer(r["metrics"].get("stdout_tail", ""))}
            r["metrics"]["stages_s"] = stages
            r["metrics"]["rows"] = self.inputs["app_hour_rows"]
            r["metrics"]["note"] = "app_hour rows; stages " + ", ".join(
                f"{k} {v:.1f}s" for k, v in stages.items())
        if "warm" in r:
            m = re.search(r"^WARM (.*)$", r["warm"].get("stdout_tail", ""), re.M)
            if m:
                r["warm"]["stages_s"] = json.loads(m.group(1))
                r["warm"]["note"] = "last of 3 in one session: " + ", ".join(
                    f"{k} {v:.1f}s" for k, v in r["warm"]["stages_s"].items())
        if "nw" in r:
            m = STAGE_LINE.search(r["nw"].get("stdout_tail", ""))
            if m:
                r["nw"]["note"] = f"stage {float(m.group(3)):.1f}s"
        if "report" in r:
            rep = self.dir / "report"
            n = sum(1 for _ in rep.rglob("*.png")) if rep.is_dir() else 0
            r["report"]["note"] = (f"{n} PNGs" if r["report"]["rc"] == 0
                                   else "FAILED: " + r["report"].get("error", "")[:80])
        for eng in ("duckdb", "pandas"):
            if eng in r:
                m = re.search(r"^RESULT (.*)$", r[eng].get("stdout_tail", ""), re.M)
                if m:
                    info = json.loads(m.group(1))
                    r[eng].update(rows=info["app_hour_rows"], compute_s=info["compute_s"],
                                  launches=info.get("launches"),
                                  note=f"app_hour rows; compute {info['compute_s']:.1f}s")

    def day_s(self) -> float | None:
        if not all(self.res.get(p, {}).get("rc") == 0 for p in DAY):
            return None
        return sum(self.res[p]["wall_s"] for p in DAY)

    def table(self) -> str:
        inp = self.inputs
        head = (f"archer {self.nodes:,} nodes, {DATE}: {inp['simulated_runs'] or '?'} simulated "
                f"runs, raw {inp['raw_mib']:,.0f} MiB, {inp['raw_lustre_stats_rows'] or 0:,} "
                f"raw_lustre_stats rows, {inp['node_window_rows'] or 0:,} node_window rows")
        lines = [head, f"{'phase':<30} {'wall s':>8} {'CPU s':>7} {'peak RSS MiB':>13} "
                 f"{'rows':>11}  note", "-" * 110]
        for p in PHASES:
            if p not in self.res:
                continue
            x = self.res[p]
            wall = f"{x['wall_s']:8.1f}" if x.get("wall_s") is not None else f"{'-':>8}"
            cpu = f"{x['cpu_s']:7.1f}" if x.get("cpu_s") is not None else f"{'-':>7}"
            rss = f"{x['peak_rss_mib']:13,.0f}" if x.get("peak_rss_mib") else f"{'-':>13}"
            rows = f"{x['rows']:11,}" if x.get("rows") is not None else f"{'-':>11}"
            note = "; ".join(filter(None, ["cached" if x.get("cached") else "",
                                           x.get("note", "")]))
            if x.get("rc") != 0:
                note = f"FAILED rc={x.get('rc')}: {x.get('error', '')[:70]}"
            lines.append(f"{LABEL[p]:<30} {wall} {cpu} {rss} {rows}  {note}")
        day = self.day_s()
        peak = max((self.res[p].get("peak_rss_mib") or 0 for p in DAY if p in self.res),
                   default=0)
        cpu = sum(self.res.get(p, {}).get("cpu_s") or 0 for p in DAY)
        lines.append("-" * 110)
        lines.append(f"{'the day (ingest..report)':<30} "
                     + (f"{day:8.1f}" if day is not None else f"{'n/a':>8}")
                     + f" {cpu:7.1f} {peak:13,.0f}  (peak RSS = largest phase; CPU = sum)")
        for eng in ("duckdb", "pandas"):
            if "compare_text" in self.res.get(eng, {}):
                for ln in self.res[eng]["compare_text"].splitlines():
                    lines.append(f"check {eng} vs Spark  {ln}")
        return "\n".join(lines)


def verdict(ok: bool | None) -> str:
    return "n/a " if ok is None else ("PASS" if ok else "FAIL")


def targets(big: Day, small: Day | None) -> tuple[list[str], dict]:
    out, res = [], {}
    day = big.day_s()
    ok = None if day is None else day <= DAY_LIMIT_S
    res["day"] = {"seconds": day, "limit": DAY_LIMIT_S, "pass": ok}
    out.append(f"{verdict(ok)}  the day at {big.nodes:,} nodes: "
               + (f"{day:.1f} s" if day is not None else "incomplete")
               + f" (limit {DAY_LIMIT_S:.0f} s)")
    sp, dk = big.res.get("metrics", {}), big.res.get("duckdb", {})
    if sp.get("rc") == 0 and dk.get("rc") == 0:
        ratio = sp["wall_s"] / dk["wall_s"]
        st = sum(sp.get("stages_s", {}).get(s, 0.0) for s in ("app_hour", "fs_hour"))
        pure = st / dk["compute_s"] if dk.get("compute_s") else None
        res["spark_vs_duckdb"] = {"ratio": ratio, "spark_s": sp["wall_s"], "duckdb_s": dk["wall_s"],
                                  "stage_ratio_app_fs_hour": pure, "limit": SPARK_VS_DUCKDB,
                                  "pass": ratio <= SPARK_VS_DUCKDB}
        out.append(f"{verdict(ratio <= SPARK_VS_DUCKDB)}  Spark attribution+metrics / DuckDB: "
                   f"{sp['wall_s']:.1f} / {dk['wall_s']:.1f} s = {ratio:.2f}x (limit "
                   f"{SPARK_VS_DUCKDB:.0f}x; process wall incl. JVM / Python start-up)"
                   + (f"; stages app_hour+fs_hour alone {st:.1f} s vs DuckDB compute "
                      f"{dk['compute_s']:.1f} s = {pure:.2f}x" if pure else ""))
    else:
        out.append("n/a   Spark attribution+metrics / DuckDB: a phase is missing or failed")
    warm = big.res.get("warm", {}).get("stages_s")
    if warm and dk.get("compute_s"):
        w = sum(warm.values())
        res.setdefault("spark_vs_duckdb", {})["warm"] = {
            "spark_stages_s": w, "duckdb_compute_s": dk["compute_s"], "ratio": w / dk["compute_s"]}
        out.append(f"info  warm session: Spark stages {w:.1f} s vs DuckDB compute "
                   f"{dk['compute_s']:.1f} s = {w / dk['compute_s']:.2f}x (start-up excluded "
                   "on both sides)")
    if small is not None:
        d_small = small.day_s()
        if day is not None and d_small:
            g = day / d_small
            grow_in = {k: (big.inputs[k] / small.inputs[k]) if big.inputs.get(k) and
                       small.inputs.get(k) else None
                       for k in ("raw_mib", "raw_lustre_stats_rows", "node_window_rows")}
            per = {p: big.res[p]["wall_s"] / small.res[p]["wall_s"] for p in DAY}
            res["growth"] = {"ratio": g, "small_s": d_small, "big_s": day, "limit": GROWTH,
                             "pass": g <= GROWTH, "input_ratios": grow_in, "phase_ratios": per}
            out.append(f"{verdict(g <= GROWTH)}  growth {small.nodes:,} -> {big.nodes:,} nodes: "
                       f"{d_small:.1f} -> {day:.1f} s = {g:.2f}x (limit {GROWTH}x); input grew "
                       + ", ".join(f"{k} {v:.2f}x" for k, v in grow_in.items() if v)
                       + "; per phase " + ", ".join(f"{p} {v:.2f}x" for p, v in per.items()))
        else:
            out.append("n/a   growth: the small or the full day is incomplete")
    return out, res


def main() -> int:
    ap = argparse.ArgumentParser(description="LASSi benchmark (see bench/run.py docstring)")
    ap.add_argument("--nodes", type=int, default=4920, help="full size (default 4920)")
    ap.add_argument("--small-nodes", type=int, default=1230,
                    help="the 4x smaller day for the growth ratio (default 1230)")
    ap.add_argument("--skip-small", action="store_true", help="only the full size")
    ap.add_argument("--fresh", action="store_true", help="re-ingest even when cached")
    ap.add_argument("--phases", default=",".join(PHASES[1:]),
                    help=f"comma-separated subset of {','.join(PHASES[1:])} (ingest runs "
                    "anyway when the warehouse lacks the date)")
    a = ap.parse_args()
    phases = [p.strip() for p in a.phases.split(",") if p.strip()]
    bad = [p for p in phases if p not in PHASES]
    if bad:
        ap.error(f"unknown phase {bad[0]!r}; known: {', '.join(PHASES)}")
    if not shutil.which("java"):
        ap.error("java not found (run `make java`)")
    # one benchmark at a time: two runs on one cache would corrupt each other's figures
    (BENCH / "cache").mkdir(parents=True, exist_ok=True)
    lock = (BENCH / "cache" / ".lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("bench: another benchmark is running on bench/cache/ (wait for it)")

    print(f"lassi bench: {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
          f"load {os.getloadavg()[0]:.1f} at start. The machine is shared: timings are noisy "
          "(see load1_before/after per phase in bench/results.json).", flush=True)
    t0 = time.time()
    sizes = [a.nodes] if a.skip_small else [a.small_nodes, a.nodes]
    days = {}
    for n in sizes:
        days[n] = Day(n, a.fresh)
        days[n].run(phases)
    big, small = days[a.nodes], (None if a.skip_small else days[a.small_nodes])
    print()
    for n in sorted(days, reverse=True):
        print(days[n].table(), end="\n\n")
    lines, tres = targets(big, small)
    print("targets:")
    print("\n".join("  " + ln for ln in lines))
    print(f"(benchmark took {time.time() - t0:.0f} s; load {os.getloadavg()[0]:.1f} at end)")

    results = {
        "date": DATE.isoformat(), "site": SITE,
        "run_at": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "load1_end": os.getloadavg()[0]},
        "sizes": {str(n): {"inputs": d.inputs, "day_s": d.day_s(),
                           "phases": {p: {k: v for k, v in x.items() if k != "stdout_tail"}
                                      for p, x in d.res.items()}}
                  for n, d in days.items()},
        "targets": tres,
    }
    (BENCH / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"figures: {BENCH / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
