"""Bench phase `warm`: the attribution + metrics stages run REPEATS times in one Spark session.

The third repetition's stage times are Spark's cost once JVM start-up and first-query class
loading are paid (a long-lived session, e.g. several dates backfilled in one spark-submit):
`WARM {"app_hour": s, ...}`, the figure the target is judged on. The JIT compiler is still
at work then (on two cores its threads take turns with the tasks): the stages get faster
until about the sixth repetition, so the median of the repetitions after the third is
printed too, `STEADY {...}` (bench/scale-history.md, session 45).

Usage: python bench/warm.py --date D --warehouse W --site S --nodes N [--repeats 6]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics

from lassi.core.config import load_site
from lassi.core.spark import get_spark
from lassi.core.warehouse import Warehouse, as_date
from lassi.pipeline.daily import run_daily

STAGES = ["app_hour", "fs_hour", "slowdown"]
WARM_REP = 3                    # the repetition whose times are the warm figure
LINE = re.compile(r"^(\w+): .* \(([\d.]+) s\)$")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--date", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--repeats", type=int, default=6)
    a = ap.parse_args()
    wh = Warehouse(get_spark("lassi bench warm"), a.warehouse)
    site = load_site(a.site, a.nodes)
    reps: list[dict[str, float]] = []
    for rep in range(a.repeats):
        reps.append({})
        for line in run_daily(wh, site, as_date(a.date), STAGES):
            print(f"[{rep + 1}/{a.repeats}] {line}", flush=True)
            m = LINE.match(line)
            if m:
                reps[-1][m.group(1)] = float(m.group(2))
    print("WARM " + json.dumps(reps[min(WARM_REP, len(reps)) - 1]), flush=True)
    later = reps[WARM_REP:]
    if later:
        print("STEADY " + json.dumps({s: statistics.median(r[s] for r in later)
                                      for s in later[0]}), flush=True)


if __name__ == "__main__":
    main()
