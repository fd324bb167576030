"""The warm-up job `lassi jvm-archive` runs under spark-submit (lassi.cli.jvm).

It loads the classes a daily run loads: a tiny simulated ARCHER day through ingest and
every daily stage, so the archive holds Spark SQL, Parquet, Arrow and the Python-UDF
machinery as lassi uses them. Usage: spark-submit jvm_warmup.py WORKDIR
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.pop(0)   # this folder (lassi/cli) must not shadow top-level modules


def main(work: str) -> None:
    import datetime as dt
    from pathlib import Path

    from lassi.core.config import load_site
    from lassi.core.spark import get_spark
    from lassi.core.warehouse import Warehouse
    from lassi.ingest.runner import ingest_raw
    from lassi.pipeline.daily import run_daily
    from lassi.sim.runner import simulate

    date = dt.date(2017, 10, 10)
    site = load_site("archer", nodes=4)
    raw = Path(work) / "raw"
    simulate(site, date, 1, 1, raw, tokio=True)
    spark = get_spark("lassi jvm warm-up")
    wh = Warehouse(spark, str(Path(work) / "warehouse"))
    ingest_raw(spark, wh, site, raw, date)
    for line in run_daily(wh, site, date):
        print(line, flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
