"""Bench phase `warm`: the attribution + metrics stages run REPEATS times in one Spark session.

The last repetition's stage times are Spark's cost once JVM start-up and first-query class
loading are paid (a long-lived session, e.g. several dates backfilled in one spark-submit).
Prints the usual stage lines and then `WARM {"app_hour": s, ...}`.

Usage: python bench/warm.py --date D --warehouse W --site S --nodes N [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import re

from lassi.core.config import load_site
from lassi.core.spark import get_spark
from lassi.core.warehouse import Warehouse, as_date
from lassi.pipeline.daily import run_daily

STAGES = ["app_hour", "fs_hour", "slowdown"]
LINE = re.compile(r"^(\w+): .* \(([\d.]+) s\)$")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--date", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    wh = Warehouse(get_spark("lassi bench warm"), a.warehouse)
    site = load_site(a.site, a.nodes)
    times: dict[str, float] = {}
    for rep in range(a.repeats):
        for line in run_daily(wh, site, as_date(a.date), STAGES):
            print(f"[{rep + 1}/{a.repeats}] {line}", flush=True)
            m = LINE.match(line)
            if m:
                times[m.group(1)] = float(m.group(2))
    print("WARM " + json.dumps(times), flush=True)


if __name__ == "__main__":
    main()
