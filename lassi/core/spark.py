"""The one SparkSession factory.

`local[*]` unless a master is given (argument, `$LASSI_SPARK_MASTER`) or the process was
launched by `spark-submit`, in which case the submitted master and settings win. Session
time zone is UTC; other settings come from `conf/spark-defaults.yaml` and
`$LASSI_SPARK_CONF`.
"""

from __future__ import annotations

import os
import sys
import time

from pyspark.sql import SparkSession

from lassi.core.config import spark_defaults


def _under_spark_submit() -> bool:
    """True when a JVM gateway was started for us (spark-submit, pyspark shell)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_spark(app_name: str = "lassi", master: str | None = None,
              extra: dict[str, str] | None = None) -> SparkSession:
    """Build (or return the running) SparkSession with lassi's settings."""
    os.environ["TZ"] = "UTC"  # Python-side datetime conversions must agree with Spark's UTC
    time.tzset()
    # pandas UDF workers run this interpreter (the venv: pandas, pywavelets, scikit-learn),
    # not whatever `python3` is first on PATH, unless the caller chose one
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("LASSI_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    elif not _under_spark_submit():
        builder = builder.master("local[*]")
    settings = spark_defaults()
    settings.update(extra or {})
    submitted = _under_spark_submit()
    for k, v in settings.items():
        # under spark-submit the submitted resources win; only SQL behaviour is forced
        if submitted and not k.startswith("spark.sql."):
            continue
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("LASSI_SPARK_LOG_LEVEL", "WARN"))
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark
