"""The one SparkSession factory.

`local[*]` unless a master is given (argument, `$LASSI_SPARK_MASTER`) or the process was
launched by `spark-submit`, in which case the submitted master and settings win (lassi's
`spark.sql.*` defaults fill only what the submission left unset). Session time zone is UTC;
other settings come from `conf/spark-defaults.yaml` and `$LASSI_SPARK_CONF`.

A JVM that lassi starts itself uses the class-data archive of `lassi jvm-archive` when it
exists (lassi.core.jvm_archive: a faster cold start), and logs to `$LASSI_LOG_DIR/spark.log`
(default `<tmp>/lassi-logs`), not the console, unless `$LASSI_VERBOSE` is set (`lassi --verbose`).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

from lassi.core.config import conf_file, spark_defaults
from lassi.core.jvm_archive import java_options as archive_options

# C1 only reserves a 48 MB code cache by default; keep tiered's 240 MB (see tests/conftest.py)
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"


def spark_log_file() -> Path:
    """Where the JVM log of lassi's own Spark sessions goes (folder made)."""
    folder = Path(os.environ.get("LASSI_LOG_DIR") or Path(tempfile.gettempdir()) / "lassi-logs")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "spark.log"


def _quiet_java_options(settings: dict[str, str]) -> None:
    """Point the driver JVM's log4j at the quiet profile (file, errors on the console)."""
    opts = (f"-Dlog4j2.configurationFile={conf_file('log4j2-quiet.properties')} "
            f"-Dlassi.spark.log={spark_log_file()}")
    key = "spark.driver.extraJavaOptions"
    settings[key] = f"{settings.get(key, '')} {opts}".strip()


def _under_spark_submit() -> bool:
    """True when a JVM gateway was started for us (spark-submit, pyspark shell)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_spark(app_name: str = "lassi", master: str | None = None,
              extra: dict[str, str] | None = None, short_lived: bool = False) -> SparkSession:
    """Build (or return the running) SparkSession with lassi's settings. `short_lived`: a
    command of a few small queries (`lassi why`): the driver JVM compiles with C1 only and
    a serial GC, which starts faster (about 4 s of a 13 s cold answer) and would slow a
    long pipeline."""
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
    if short_lived:
        key = "spark.driver.extraJavaOptions"
        settings[key] = f"{settings.get(key, '')} {SHORT_LIVED_JVM}".strip()
    settings.update(extra or {})
    submitted = _under_spark_submit()
    if not submitted and (cds := archive_options()):   # `lassi jvm-archive` was run
        key = "spark.driver.extraJavaOptions"
        settings[key] = f"{settings.get(key, '')} {cds}".strip()
    if not submitted and not os.environ.get("LASSI_VERBOSE"):
        _quiet_java_options(settings)
        # PySpark's own JSON record of a failed query (the CLI says it in one line)
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)
    if not submitted:
        for k, v in settings.items():
            builder = builder.config(k, v)
    spark = builder.getOrCreate()
    if submitted:   # the submission's --conf wins; lassi's SQL defaults fill the gaps
        given = spark.sparkContext.getConf()
        for k, v in settings.items():
            if k.startswith("spark.sql.") and not given.contains(k):
                spark.conf.set(k, v)
    spark.sparkContext.setLogLevel(os.environ.get("LASSI_SPARK_LOG_LEVEL", "WARN"))
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark
